package corpus

import (
	"fmt"
	"strings"
)

// labelMutations set labels, annotations, node selection and tolerations.
var labelMutations = []mutation{
	{"job-labels", func(g *gen, o map[string]any) string {
		k, v := pick(g, labelKeys...), pick(g, labelValues...)
		at(spec(o), "jobLabels")[k] = v
		return fmt.Sprintf("spec.jobLabels[%s]=%s", show(k), show(v))
	}},
	{"pod-labels", func(g *gen, o map[string]any) string {
		k, v := pick(g, labelKeys...), pick(g, labelValues...)
		if g.chance(0.2) {
			v = name(o)
		}
		at(spec(o), "pod.labels")[k] = v
		return fmt.Sprintf("spec.pod.labels[%s]=%s", show(k), show(v))
	}},
	{"pod-annotations", func(g *gen, o map[string]any) string {
		a := at(spec(o), "pod.annotations")
		switch g.r.IntN(6) {
		case 0:
			k := pick(g, labelKeys...)
			a[k] = "x"
			return "spec.pod.annotations key " + show(k)
		case 1:
			a["batch.kubernetes.io/job-completion-index"] = "7"
			return "spec.pod.annotations[batch.kubernetes.io/job-completion-index]"
		case 2:
			n := pick(g, 200*1024, 250*1024, 262144, 270*1024)
			a["example.com/big"] = strings.Repeat("b", n)
			return fmt.Sprintf("one annotation of %d bytes", n)
		case 3:
			n := pick(g, 3, 4)
			for i := 0; i < n; i++ {
				a[fmt.Sprintf("example.com/part-%d", i)] = strings.Repeat("p", 90*1024)
			}
			return fmt.Sprintf("%d annotations of 90KiB (%d KiB total)", n, n*90)
		case 4:
			a["example.com/nul"] = "a\x00b"
			return "annotation value with a NUL byte"
		default:
			for i := 0; i < 64; i++ {
				a[fmt.Sprintf("example.com/a%02d", i)] = "v"
			}
			return "64 annotations"
		}
	}},
	{"node-selector", func(g *gen, o map[string]any) string {
		k, v := pick(g, labelKeys...), pick(g, labelValues...)
		at(spec(o), "pod.nodeSelector")[k] = v
		return fmt.Sprintf("spec.pod.nodeSelector[%s]=%s", show(k), show(v))
	}},
	{"node-affinity", func(g *gen, o map[string]any) string {
		k := pick(g, "topology.kubernetes.io/zone", "bad key", strings.Repeat("k", 64), "example.com/")
		vs := pick(g, []any{}, []any{"us-central1-a"}, []any{"bad value!"}, []any{strings.Repeat("v", 64)}, []any{""}, []any{"a", "a"})
		at(spec(o), "pod.nodeAffinity")[k] = vs
		return fmt.Sprintf("spec.pod.nodeAffinity[%s]=%s", show(k), show(vs))
	}},
	{"tolerations", func(g *gen, o map[string]any) string {
		t := pick(g,
			map[string]any{"key": "hpc", "operator": "Exists", "effect": "NoSchedule"},
			map[string]any{"key": "bad key", "operator": "Equal", "value": "x"},
			map[string]any{"operator": "Equal", "value": "x"},
			map[string]any{"key": "hpc", "operator": "Exists", "value": "x"},
			map[string]any{"key": "hpc", "value": "bad value!"},
			map[string]any{"key": strings.Repeat("k", 317)},
			map[string]any{"key": "hpc", "effect": "NoExecute"},
		)
		at(spec(o), "pod")["tolerations"] = []any{t}
		return "spec.pod.tolerations[0]=" + show(t)
	}},
}

// resourceMutations set resource requests and limits.
var resourceMutations = []mutation{
	{"container-resources", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		rname := pick(g, "cpu", "memory", "CPU", "gpu", "nvidia.com/gpu", "example.com/foo bar", "hugepages-2Mi", "ephemeral-storage", "pods", "")
		q := pick[any](g, "1", "500m", "2Gi", "-1", "1.5.5", "0", int64(4), int64(-2), "1e3", "9999999999999999999999", "1Ki", "0.5")
		side := pick(g, "limits", "requests", "both", "inverted")
		r := obj(c, "resources")
		switch side {
		case "both":
			obj(r, "limits")[rname] = q
			obj(r, "requests")[rname] = q
		case "inverted":
			obj(r, "limits")[rname] = "1"
			obj(r, "requests")[rname] = "2"
		default:
			obj(r, side)[rname] = q
		}
		return fmt.Sprintf("%s.resources.%s[%s]=%s", p, side, show(rname), show(q))
	}},
	{"pod-resources", func(g *gen, o map[string]any) string {
		rname := pick(g, "cpu", "memory", "CPU", "example.com/gpu")
		q := pick[any](g, "100m", "1Gi", "-1", "abc", int64(1))
		at(spec(o), "pod.resources")[rname] = q
		return fmt.Sprintf("spec.pod.resources[%s]=%s (pod overhead)", show(rname), show(q))
	}},
	{"flux-container-resources", func(g *gen, o map[string]any) string {
		rname := pick(g, "cpu", "memory", "CPU", "nvidia.com/gpu")
		q := pick[any](g, "100m", "1Gi", "-1", "abc", "500m")
		side := pick(g, "limits", "requests")
		at(spec(o), "flux.container.resources."+side)[rname] = q
		return fmt.Sprintf("spec.flux.container.resources.%s[%s]=%s", side, show(rname), show(q))
	}},
}

// environmentMutations set environment variables and secret references.
var environmentMutations = []mutation{
	{"environment", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		k := pick(g, "GOOD", "1BAD", "A-B", "A B", "A=B", "", "PATH", "a.b", "FLUX_URI", "ÄÖ")
		v := pick(g, "ok", "$(HOME)", "a\x00b", `quote"d`, strings.Repeat("v", 70000), "line\nbreak")
		obj(c, "environment")[k] = v
		return fmt.Sprintf("%s.environment[%s]=%s", p, show(k), show(v))
	}},
	{"secrets", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		k := pick(g, "API_TOKEN", "1BAD", "A-B", "A=B")
		s := map[string]any{}
		if g.chance(0.9) {
			s["name"] = pick(g, refNames...)
		}
		if g.chance(0.9) {
			s["key"] = pick(g, "token", "a/b", "", "..", "tok en", ".dot", strings.Repeat("k", 254))
		}
		obj(c, "secrets")[k] = s
		return fmt.Sprintf("%s.secrets[%s]=%s", p, show(k), show(s))
	}},
	{"flux-environment", func(g *gen, o map[string]any) string {
		k := pick(g, "OMP_NUM_THREADS", "1BAD", "A-B", "PATH", "a b")
		v := pick(g, "4", `"quoted`, "$(id)", "a\x00b", "multi\nline", "'")
		at(spec(o), "flux.environment")[k] = v
		return fmt.Sprintf("spec.flux.environment[%s]=%s", show(k), show(v))
	}},
}

// podMutations set pod and container fields: object references, policies,
// user and group ids, capabilities, images.
var podMutations = []mutation{
	{"pod-references", func(g *gen, o map[string]any) string {
		f := pick(g, "serviceAccountName", "runtimeClassName", "schedulerName")
		v := pick(g, refNames...)
		at(spec(o), "pod")[f] = v
		return fmt.Sprintf("spec.pod.%s=%s", f, show(v))
	}},
	{"image-pull-secret", func(g *gen, o map[string]any) string {
		v := pick(g, refNames...)
		if g.chance(0.5) {
			at(spec(o), "flux.container")["imagePullSecret"] = v
			return "spec.flux.container.imagePullSecret=" + show(v)
		}
		c, p := g.anyContainer(o)
		c["imagePullSecret"] = v
		return p + ".imagePullSecret=" + show(v)
	}},
	{"pod-policies", func(g *gen, o map[string]any) string {
		pod := at(spec(o), "pod")
		switch g.r.IntN(4) {
		case 0:
			pod["dnsPolicy"] = pick(g, "ClusterFirst", "Default", "None", "ClusterFirstWithHostNet")
			return "spec.pod.dnsPolicy=" + show(pod["dnsPolicy"])
		case 1:
			pod["restartPolicy"] = pick(g, "Never", "OnFailure", "Always")
			return "spec.pod.restartPolicy=" + show(pod["restartPolicy"])
		case 2:
			pod["hostIPC"], pod["hostPID"] = true, true
			return "spec.pod.hostIPC and hostPID"
		default:
			pod["automountServiceAccountToken"] = true
			spec(o)["shareProcessNamespace"] = true
			return "automountServiceAccountToken and shareProcessNamespace"
		}
	}},
	{"ids", func(g *gen, o map[string]any) string {
		v := pick(g, ids...)
		switch g.r.IntN(6) {
		case 0, 1:
			c, p := g.anyContainer(o)
			f := pick(g, "runAsUser", "runAsGroup")
			obj(c, "securityContext")[f] = v
			return fmt.Sprintf("%s.securityContext.%s=%d", p, f, v)
		case 2:
			at(spec(o), "pod.securityContext")["supplementalGroups"] = []any{int64(1000), v}
			return fmt.Sprintf("spec.pod.securityContext.supplementalGroups=[1000 %d]", v)
		case 3:
			sc := at(spec(o), "pod.securityContext")
			sc["runAsNonRoot"] = true
			sc["runAsUser"] = v
			return fmt.Sprintf("spec.pod.securityContext runAsNonRoot, runAsUser=%d", v)
		default:
			f := pick(g, "runAsUser", "runAsGroup", "fsGroup")
			at(spec(o), "pod.securityContext")[f] = v
			return fmt.Sprintf("spec.pod.securityContext.%s=%d", f, v)
		}
	}},
	{"capabilities", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		caps := pick(g, []any{"SYS_PTRACE"}, []any{"NET_ADMIN", "NET_ADMIN"}, []any{"bad cap"}, []any{""}, []any{strings.Repeat("C", 64)}, []any{"CAP_SYS_ADMIN"}, []any{"sys_ptrace", "ALL"}, []any{"SYS_EVERYTHING"})
		sc := obj(c, "securityContext")
		sc["addCapabilities"] = caps
		if g.chance(0.3) {
			sc["privileged"] = true
		}
		return fmt.Sprintf("%s.securityContext.addCapabilities=%s", p, show(caps))
	}},
	{"image", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		v := pick(g, "", " rockylinux:9", "rockylinux:9 ", "UPPER/Case:tag", "a@sha256:bad", "x\x00y", strings.Repeat("i", 1024))
		if g.chance(0.3) {
			at(spec(o), "flux.container")["image"] = v
			return "spec.flux.container.image=" + show(v)
		}
		c["image"] = v
		return p + ".image=" + show(v)
	}},
}
