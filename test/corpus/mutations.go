package corpus

import (
	"fmt"
	"strings"
)

// mutation changes a claim in place and says what it did.
type mutation struct {
	name  string
	apply func(g *gen, o map[string]any) string
}

// Paths the MiniCluster mounts for Flux in every pod, and the volume names
// it uses: user volumes and flux.container.mountPath must not take them.
var (
	reservedPaths = []string{"/mnt/flux", "/flux_operator", "/mnt/curve", "/opt/software", "/home/flux-operator"}
	reservedVols  = []string{"flux-view", "spack-software", "flux-operator-home", "flux-entrypoint", "flux-curve-cert"}
)

// Label keys and values: reserved by Kubernetes' Job controller or by the
// function's own pod labels, syntactically invalid, or at length limits.
var (
	labelKeys = []string{
		"job-name", "controller-uid", "batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid",
		"batch.kubernetes.io/job-completion-index", "app", "app.kubernetes.io/name", "hpa-selector", "namespace",
		"kueue.x-k8s.io/queue-name", "team", "example.com/team", "bad key", "Bad_Key!", "example.com/", "/team",
		"a/b/c", strings.Repeat("k", 63), strings.Repeat("k", 64), strings.Repeat("p", 253) + "/k",
		strings.Repeat("p", 254) + "/k", "kubernetes.io/foo", "-team", "team-", "crossplane.io/composite",
	}
	labelValues = []string{
		"ok", "", "physics", strings.Repeat("v", 63), strings.Repeat("v", 64), "has space", "-lead", "trail-",
		"a/b", "a.b_c-d", "UPPER", "ünïcode", "x\x00y",
	}
	// Names of Kubernetes objects a pod refers to.
	refNames = []string{
		"flux-runner", "Bad_Name", "a..b", "with space", "UPPER", "-lead", "trail-", "a.b.c",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 250) + ".com", "x\x00y", "default-scheduler",
	}
	// Container and Service names.
	oddNames = []string{"web", "8080-web", "a", "x1", "flux-view", "nginx", "db-0", "9"}
	ids      = []int64{-1, 0, 1, 1000, 65534, 2147483647, 2147483648, 4294967296}
	// Strings with an unbalanced quote or other shell trouble.
	quoted = []string{
		`echo "hello`, `echo 'hello`, "echo `date", `echo $(`, `echo \`, `-o x='1`, `--setattr="a b`,
		`flux submit "`, `a "b" 'c`, `echo ${`, "echo hi; exit 1", "echo 'it''s'", `echo "a\"b"`,
	}
)

var catalogue = []mutation{
	// -------------------------------------------------------- names
	{"long-name", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 40, 50, 53, 55, 56, 57, 58, 59, 60, 61, 62, 63))
		setName(o, n)
		return fmt.Sprintf("metadata.name is %d chars", len(n))
	}},
	{"long-name-lead-broker", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 48, 50, 51, 52, 53, 55, 58, 61, 63))
		setName(o, n)
		setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
		return fmt.Sprintf("metadata.name is %d chars, flux.bursting.clusters set (<name>-lead-broker Service)", len(n))
	}},
	{"long-name-size", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 50, 55, 57, 58, 59, 60, 61))
		sz := pick(g, int64(10), int64(100), int64(1000), int64(10000), int64(100000))
		setName(o, n)
		s := spec(o)
		s["size"] = sz
		delete(s, "maxSize")
		delete(s, "minSize")
		return fmt.Sprintf("metadata.name is %d chars, size %d (hostname <name>-%d)", len(n), sz, sz-1)
	}},
	{"name-odd", func(g *gen, o map[string]any) string {
		n := pick(g, "1flux", "0-sample", "9", "flux.sample", "flux_sample", "Flux-Sample", "flux-", "-flux", "a",
			"flux--sample", "a.b.c", strings.Repeat("a", 64), strings.Repeat("a", 100)+".example")
		setName(o, n)
		return "metadata.name=" + show(n)
	}},
	{"headless-name", func(g *gen, o map[string]any) string {
		nw := at(spec(o), "network")
		switch g.r.IntN(7) {
		case 0:
			addSidecar(o, map[string]any{"name": "web", "ports": []any{int64(8080)}, "command": "sleep infinity"})
			nw["headlessName"] = "web"
			return `headlessName "web" = a sidecar with ports`
		case 1:
			setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
			nw["headlessName"] = name(o) + "-lead-broker"
			return "headlessName <name>-lead-broker, clusters set"
		case 2:
			nw["headlessName"] = g.label(63)
			return "headlessName 63 chars"
		case 3:
			nw["headlessName"] = pick(g, "1net", "0", "9-flux")
			return "headlessName starts with a digit: " + show(nw["headlessName"])
		case 4:
			nw["headlessName"] = pick(g, "flux-view", "flux-entrypoint")
			return "headlessName " + show(nw["headlessName"])
		case 5:
			spec(o)["services"] = []any{map[string]any{"name": "db", "image": "postgres", "ports": []any{int64(5432)}}}
			nw["headlessName"] = name(o) + "-services"
			return "headlessName <name>-services, services set"
		default:
			nw["headlessName"] = name(o)
			return "headlessName = metadata.name"
		}
	}},
	{"sidecar-lead-broker", func(g *gen, o map[string]any) string {
		setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
		i := addSidecar(o, map[string]any{"name": name(o) + "-lead-broker", "ports": []any{pick(g, int64(8050), int64(80))}, "command": "sleep infinity"})
		return fmt.Sprintf("spec.containers[%d] named <name>-lead-broker with ports, clusters set", i)
	}},
	{"sidecar-name", func(g *gen, o map[string]any) string {
		var n string
		switch g.r.IntN(6) {
		case 0:
			n = name(o)
		case 1:
			n = "flux-view"
		case 2:
			if hl, ok := at(spec(o), "network")["headlessName"].(string); ok {
				n = hl
			} else {
				n = name(o)
			}
		case 3:
			n = g.label(63)
		default:
			n = pick(g, oddNames...)
		}
		c := map[string]any{"name": n, "command": "sleep infinity"}
		if g.chance(0.6) {
			c["ports"] = pick(g, []any{int64(80)}, []any{int64(80), int64(80)}, []any{int64(8050)}, []any{int64(1), int64(65535)})
		}
		i := addSidecar(o, c)
		desc := fmt.Sprintf("spec.containers[%d] named %s ports %s", i, show(n), show(c["ports"]))
		if g.chance(0.3) {
			j := addSidecar(o, map[string]any{"name": n, "command": "sleep 1"})
			desc += fmt.Sprintf(", and spec.containers[%d] with the same name", j)
		}
		return desc
	}},
	{"runner-ports", func(g *gen, o map[string]any) string {
		p := pick(g, []any{int64(8050)}, []any{int64(80)}, []any{int64(80), int64(443)}, []any{int64(1), int64(65535)}, []any{int64(0)}, []any{int64(65536)})
		runner(o)["ports"] = p
		return fmt.Sprintf("spec.containers[%d].ports=%v", runnerIndex(o), p)
	}},
	{"services", func(g *gen, o map[string]any) string {
		n := pick(g, "nginx", name(o), name(o)+"-services", "flux-view", "8080-db", g.label(63), "Nginx")
		c := map[string]any{"name": n, "image": "nginx"}
		if g.chance(0.6) {
			c["ports"] = pick(g, []any{int64(80)}, []any{int64(80), int64(80)}, []any{int64(8050)})
		}
		extra := ""
		switch g.r.IntN(5) {
		case 0:
			c["commands"] = map[string]any{"pre": "echo pre"}
			extra = " commands.pre"
		case 1:
			c["runFlux"] = true
			extra = " runFlux"
		case 2:
			c["volumes"] = map[string]any{"data": map[string]any{"emptyDir": true, "path": pick(g, "/data", "/mnt/flux", "data")}}
			extra = " with a volume"
		}
		spec(o)["services"] = []any{c}
		return fmt.Sprintf("spec.services[0] named %s ports %s%s", show(n), show(c["ports"]), extra)
	}},
	// -------------------------------------------------------- labels, annotations
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
	// -------------------------------------------------------- resources
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
	// -------------------------------------------------------- environment
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
	// -------------------------------------------------------- pod fields
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
	// -------------------------------------------------------- volumes
	{"volume-path", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		path := pick(g, append([]string{"data", "/", "/mnt", "/opt", "/home", "/tmp/../etc", "/data:ro", "/dev/shm", "/mnt/flux/sub", "/data/", "//data", "/a b", "/x\x00", "/proc", "/proc/cpuinfo", "/proc/x"}, reservedPaths...)...)
		vname := pick(g, "data2", "scratch")
		v := map[string]any{"path": path}
		if g.chance(0.5) {
			v["emptyDir"] = true
		} else {
			v["hostPath"] = "/srv/data"
		}
		obj(c, "volumes")[vname] = v
		return fmt.Sprintf("%s.volumes[%s].path=%s", p, vname, show(path))
	}},
	{"volume-duplicate-path", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		path := pick(g, "/data", "/dev/shm", "/data/")
		vs := obj(c, "volumes")
		vs["one"] = map[string]any{"emptyDir": true, "path": "/data"}
		vs["two"] = map[string]any{"hostPath": "/srv", "path": path}
		return fmt.Sprintf("%s.volumes one and two both at /data and %s", p, show(path))
	}},
	{"two-emptydirs", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		vs := obj(c, "volumes")
		vs["shm-a"] = map[string]any{"emptyDir": true}
		vs["shm-b"] = map[string]any{"emptyDir": true, "emptyDirMedium": "memory"}
		return p + ".volumes: two emptyDir volumes without path"
	}},
	{"flux-mount-path", func(g *gen, o map[string]any) string {
		mp := pick(g, append([]string{"/opt", "/mnt", "/mnt/flux-view", "/data", "/", "/a/../b", "/tmp/fluxout", "/dev/shm", "/etc", "/usr", "/tmp", "/proc/flux", "/sys/flux", "/usr/local/flux"}, reservedPaths...)...)
		at(spec(o), "flux.container")["mountPath"] = mp
		desc := "spec.flux.container.mountPath=" + show(mp)
		if mp == "/data" || g.chance(0.3) {
			obj(runner(o), "volumes")["data"] = map[string]any{"hostPath": "/data", "path": "/data"}
			desc += ", runner volume at /data"
		}
		return desc
	}},
	{"volume-name", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		n := pick(g, append([]string{"Data", "a.b", g.label(63), g.label(64), "data", "x"}, reservedVols...)...)
		obj(c, "volumes")[n] = map[string]any{"emptyDir": true, "path": "/scratch"}
		desc := fmt.Sprintf("%s.volumes[%s]", p, show(n))
		if g.chance(0.4) {
			i := addSidecar(o, map[string]any{"name": "side", "command": "sleep infinity", "volumes": map[string]any{n: map[string]any{"hostPath": "/srv", "path": "/srv"}}})
			desc += fmt.Sprintf(", and spec.containers[%d] with the same volume name, another source", i)
		}
		return desc
	}},
	{"volume-source", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		v := pick(g,
			map[string]any{"path": "/data"},
			map[string]any{"path": "/data", "emptyDir": true, "hostPath": "/srv"},
			map[string]any{"path": "/data", "hostPath": "srv/data"},
			map[string]any{"path": "/data", "configMapName": "Bad_CM"},
			map[string]any{"path": "/data", "secretName": "bad secret"},
			map[string]any{"path": "/data", "claimName": "claim name"},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"a": "../x"}},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"a": "/abs"}},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"bad key!": "a", "b": "a"}},
			map[string]any{"path": "/data", "emptyDir": true, "emptyDirSizeLimit": pick(g, "64Mo", "-1Gi", "1e3", "0")},
			map[string]any{"path": "/data", "csiDriver": pick(g, "BAD driver", "csi.example.com"), "csiDriverAttributes": map[string]any{"k": "v"}},
			map[string]any{"path": "/data", "emptyDir": true, "emptyDirMedium": "Memory"},
			map[string]any{"path": "/data", "hostPath": "/srv", "items": map[string]any{"a": "b"}},
		)
		obj(c, "volumes")["vol"] = v
		return fmt.Sprintf("%s.volumes[vol]=%s", p, show(v))
	}},
	// -------------------------------------------------------- scripts
	{"huge-hooks", func(g *gen, o map[string]any) string {
		total := pick(g, 900*1024, 1024*1024+1, 1200*1024, 1400*1024)
		per := 60 * 1024
		r := runner(o)
		delete(r, "command")
		cmds := obj(r, "commands")
		left := total
		for _, k := range []string{"init", "pre", "brokerPre", "workerPre", "post", "script"} {
			if left <= 0 {
				break
			}
			n := min(per, left)
			cmds[k] = g.text(n)
			left -= n
		}
		for i := 0; left > 0 && i < 10; i++ {
			n := min(per, left)
			c := map[string]any{"name": fmt.Sprintf("hook-%d", i), "command": g.text(n)}
			left -= n
			if left > 0 {
				m := min(per, left)
				c["commands"] = map[string]any{"servicePre": g.text(m)}
				left -= m
			}
			addSidecar(o, c)
		}
		return fmt.Sprintf("hooks and sidecar commands of %d KiB in total", total/1024)
	}},
	{"hooks-odd", func(g *gen, o map[string]any) string {
		k := pick(g, "init", "pre", "brokerPre", "workerPre", "post", "prefix", "servicePre")
		v := pick(g, append([]string{"cat <<EOF\nunterminated", "exit 1", "line\r\nwith crlf", strings.Repeat("y", 10000), "set -e\nfalse", "a\x00b"}, quoted...)...)
		c, p := g.anyContainer(o)
		obj(c, "commands")[k] = v
		return fmt.Sprintf("%s.commands.%s=%s", p, k, show(v))
	}},
	{"lifecycle", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		k := pick(g, "postStartExec", "preStopExec")
		v := pick(g, `echo "started`, "a\x00b", strings.Repeat("z", 4096), "", "flux shutdown --quiet")
		obj(c, "lifeCycle")[k] = v
		return fmt.Sprintf("%s.lifeCycle.%s=%s", p, k, show(v))
	}},
	{"nul-byte", func(g *gen, o map[string]any) string {
		v := "a\x00b"
		switch g.r.IntN(9) {
		case 0:
			runner(o)["command"] = "echo " + v
			return "runner command with NUL"
		case 1:
			runner(o)["workingDir"] = "/wd" + v
			return "runner workingDir with NUL"
		case 2:
			at(spec(o), "flux")["submitCommand"] = "flux submit " + v
			return "flux.submitCommand with NUL"
		case 3:
			at(spec(o), "flux")["brokerConfig"] = "[access]\n# " + v + "\n"
			return "flux.brokerConfig with NUL"
		case 4:
			at(spec(o), "flux.bursting")["hostlist"] = "h" + v + "-[0-1]"
			return "flux.bursting.hostlist with NUL"
		case 5:
			at(spec(o), "archive")["path"] = "/state/" + v
			return "archive.path with NUL"
		case 6:
			runner(o)["logs"] = "/tmp/" + v
			return "runner logs with NUL"
		case 7:
			at(spec(o), "flux")["curveCert"] = v
			return "flux.curveCert with NUL"
		default:
			at(spec(o), "flux")["optionFlags"] = "-o " + v
			return "flux.optionFlags with NUL"
		}
	}},
	// -------------------------------------------------------- Flux
	{"broker-config", func(g *gen, o map[string]any) string {
		v := pick(g,
			"[bootstrap\nhosts = [",
			"key = ",
			"= 1",
			"not toml at all {{}}",
			"[bootstrap]\nfoo = 1\n",
			"[bootstrap]\nhosts = 5\n",
			"[access]\nallow-guest-user = true\n",
			"[resource]\npath = \"/etc/flux/R\"\n[resource]\npath = \"x\"\n",
			"[bootstrap]\ncurve_cert = \"/mnt/curve/curve.cert\"\nhosts = [{host=\"Bad_Host\"}]\n",
			"[bootstrap]\ndefault_port = \"8050\"\nenable_ipv6 = 1\n",
			"[bootstrap]\nhosts = [{bind=\"tcp://eth0:%p\"}]\n",
			bootstrapHosts(o, "{host=\"login\"}, {host=\""+hostRange(o)+"\"}"),
			bootstrapHosts(o, "{host=\""+hostRange(o)+"\"}, {host=\"login\", parent=\""+name(o)+"-0\"}"),
			"[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\nhosts = [{host=\""+hostRange(o)+"\"}]\n",
		)
		at(spec(o), "flux")["brokerConfig"] = v
		return "spec.flux.brokerConfig=" + show(v)
	}},
	{"hostlist", func(g *gen, o map[string]any) string {
		n := name(o)
		v := pick(g,
			n+"-[0-", "a,,b", "UPPER-[0-3]", "host-[3-1]", " ", n+"-[0-3]x", n+"-[0-3],burst-[0-99999]",
			"h-[0-1000000]", "a_b-[0-1]", fmt.Sprintf("%s-[0-%d]", n, size(o)-1), "h-[0-1],h-[0-1]", "h-[a-c]",
			fmt.Sprintf("%s-[0-%d],cloud-[001-003]", n, size(o)-1), strings.Repeat("h", 64)+"-[0-1]",
			"login,"+hostRange(o), hostRange(o)+",node-[0-299]",
		)
		b := at(spec(o), "flux.bursting")
		delete(b, "clusters")
		delete(b, "leadBroker")
		b["hostlist"] = v
		return "spec.flux.bursting.hostlist=" + show(v)
	}},
	{"lead-broker-without-clusters", func(g *gen, o map[string]any) string {
		b := at(spec(o), "flux.bursting")
		delete(b, "clusters")
		delete(b, "hostlist")
		delete(at(spec(o), "flux"), "topology")
		b["leadBroker"] = map[string]any{"address": "10.1.2.3", "name": pick(g, "root", name(o)), "size": pick(g, int64(1), int64(4)), "port": int64(30093)}
		return "spec.flux.bursting.leadBroker without clusters: " + show(b["leadBroker"])
	}},
	{"lead-broker-odd", func(g *gen, o map[string]any) string {
		lb := map[string]any{"address": "10.1.2.3", "name": "root", "size": int64(4), "port": int64(30093)}
		f := pick(g, "address", "name", "size", "port", "missing")
		switch f {
		case "address":
			lb[f] = pick(g, "not an ip!", "", "::1", "10.0.0.1:8050", g.label(63)+"."+g.label(63)+".example.com", "UPPER.example.com")
		case "name":
			lb[f] = pick(g, name(o), "Root", "", g.label(63), "1root")
		case "size":
			lb[f] = pick(g, int64(0), int64(100000), int64(-1))
		case "port":
			lb[f] = pick(g, int64(0), int64(65536), int64(1))
		default:
			delete(lb, pick(g, "address", "name", "size"))
		}
		// A burst cluster is one of the root's clusters.
		setClusters(o, []any{map[string]any{"name": name(o), "size": size(o)}})
		at(spec(o), "flux.bursting")["leadBroker"] = lb
		return fmt.Sprintf("spec.flux.bursting.leadBroker.%s odd: %s", f, show(lb))
	}},
	{"bursting-clusters", func(g *gen, o map[string]any) string {
		var cl []any
		desc := ""
		switch g.r.IntN(6) {
		case 0:
			cl = []any{map[string]any{"name": "burst", "size": int64(2)}, map[string]any{"name": "burst", "size": int64(2)}}
			desc = "duplicate cluster names"
		case 1:
			cl = []any{map[string]any{"name": name(o), "size": int64(2)}}
			desc = "a cluster named like the root"
		case 2:
			n := g.label(pick(g, 60, 61, 62, 63))
			cl = []any{map[string]any{"name": n, "size": pick(g, int64(10), int64(1000))}}
			desc = fmt.Sprintf("cluster name of %d chars", len(n))
		case 3:
			cl = []any{map[string]any{"name": "burst-0", "size": pick(g, int64(0), int64(100000))}}
			desc = "cluster size at a bound"
		case 4:
			for i := 0; i < 64; i++ {
				cl = append(cl, map[string]any{"name": fmt.Sprintf("burst-%d", i), "size": int64(100000)})
			}
			desc = "64 clusters of 100000"
		default:
			cl = []any{map[string]any{"size": int64(2)}, map[string]any{}}
			desc = "clusters without names"
		}
		setClusters(o, cl)
		if g.chance(0.3) {
			at(spec(o), "flux.bursting.leadBrokerService")["nodePort"] = pick(g, int64(30093), int64(1), int64(80), int64(32767), int64(32768), int64(65535))
			desc += fmt.Sprintf(", leadBrokerService.nodePort=%v", at(spec(o), "flux.bursting.leadBrokerService")["nodePort"])
		}
		return "spec.flux.bursting.clusters: " + desc
	}},
	{"minimal-service-topology", func(g *gen, o map[string]any) string {
		f := at(spec(o), "flux")
		f["minimalService"] = true
		s := spec(o)
		sz := pick(g, int64(2), int64(4), int64(33), int64(257), int64(258), int64(1000))
		s["size"] = sz
		delete(s, "maxSize")
		delete(s, "minSize")
		desc := fmt.Sprintf("minimalService, size %d", sz)
		if g.chance(0.7) {
			f["topology"] = pick(g, "kary:2", "binomial", "mincrit", "kary:0", "kary:1", "custom", "kary:300")
			desc += ", topology " + show(f["topology"])
		}
		return desc
	}},
	{"topology", func(g *gen, o map[string]any) string {
		t := pick(g, "kary:", "kary:-1", "tree", "binomial", "mincrit:2", "kary:2", "KARY:2", "kary:99999999999")
		at(spec(o), "flux")["topology"] = t
		return "spec.flux.topology=" + show(t)
	}},
	{"unbalanced-quotes", func(g *gen, o map[string]any) string {
		v := pick(g, quoted...)
		f := pick(g, "command", "optionFlags", "submitCommand", "wrap", "prefix", "workingDir", "logs", "archive")
		switch f {
		case "command":
			r := runner(o)
			r["command"] = v
			delete(obj(r, "commands"), "script")
		case "prefix":
			obj(runner(o), "commands")["prefix"] = v
		case "workingDir", "logs":
			runner(o)[f] = "/wd/" + v
		case "archive":
			at(spec(o), "archive")["path"] = "/state/" + v
		default:
			at(spec(o), "flux")[f] = v
		}
		return fmt.Sprintf("%s=%s", f, show(v))
	}},
	{"batch", func(g *gen, o map[string]any) string {
		r := runner(o)
		delete(r, "launcher")
		delete(obj(r, "commands"), "script")
		r["batch"] = true
		switch g.r.IntN(6) {
		case 0:
			r["command"] = "echo \"one\nflux run 'two\n\n#flux: -N 2\necho three"
			return "batch lines with quotes, empty lines and #flux:"
		case 1:
			var b strings.Builder
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(&b, "echo line %d\n", i)
			}
			r["command"] = b.String()
			return "2000 batch lines"
		case 2:
			r["command"] = "echo a\r\necho b\r\n"
			return "batch lines with CRLF"
		case 3:
			r["batchRaw"] = true
			r["command"] = "#!/bin/bash\n#FLUX: -N 1\nflux run hostname\n"
			return "batchRaw"
		case 4:
			r["batch"] = false
			r["batchRaw"] = true
			return "batchRaw without batch"
		default:
			r["launcher"] = true
			return "batch and launcher"
		}
	}},
	{"command-script", func(g *gen, o map[string]any) string {
		r := runner(o)
		switch g.r.IntN(3) {
		case 0:
			r["command"] = "echo both"
			obj(r, "commands")["script"] = "echo script"
			return "command and commands.script"
		case 1:
			delete(r, "command")
			obj(r, "commands")["script"] = "#!/bin/bash\necho \"I am $(hostname)\"\n"
			return "commands.script only"
		default:
			delete(r, "command")
			delete(obj(r, "commands"), "script")
			return "no command (interactive-like)"
		}
	}},
	{"connect-timeout", func(g *gen, o map[string]any) string {
		v := pick(g, "10s", "1.5m", "500ms", "5x", "", "-1s", "1d", "5 s", "99999999999999999999s")
		at(spec(o), "flux")["connectTimeout"] = v
		return "spec.flux.connectTimeout=" + show(v)
	}},
	{"log-level", func(g *gen, o map[string]any) string {
		v := pick(g, int64(0), int64(7), int64(8), int64(-1))
		at(spec(o), "flux")["logLevel"] = v
		return fmt.Sprintf("spec.flux.logLevel=%d", v)
	}},
	{"curve-cert", func(g *gen, o map[string]any) string {
		f := at(spec(o), "flux")
		switch g.r.IntN(5) {
		case 0:
			f["curveCert"] = "garbage"
			return "curveCert garbage"
		case 1:
			f["curveCert"] = "metadata\ncurve\n    public-key = \"x\"\n"
			return "curveCert without name or secret key"
		case 2:
			f["curveCert"] = "x"
			f["curveCertSecret"] = "shared-curve"
			return "curveCert and curveCertSecret"
		case 3:
			f["curveCertSecret"] = pick(g, refNames...)
			return "curveCertSecret=" + show(f["curveCertSecret"])
		default:
			f["curveCertSecret"] = "shared-curve"
			return "curveCertSecret shared-curve"
		}
	}},
	{"flux-container-name", func(g *gen, o map[string]any) string {
		v := pick(g, "flux-view", name(o), "Flux", "my-view", g.label(63), "spack-software", "flux-entrypoint")
		at(spec(o), "flux.container")["name"] = v
		desc := "spec.flux.container.name=" + show(v)
		if g.chance(0.3) {
			addSidecar(o, map[string]any{"name": v, "command": "sleep infinity"})
			desc += ", and a sidecar of that name"
		}
		return desc
	}},
	{"paths-odd", func(g *gen, o map[string]any) string {
		v := pick(g, "relative/dir", "/a b", "/tmp/../etc", "", "/"+strings.Repeat("d", 4000), "~/x")
		switch f := pick(g, "archive", "logs", "workingDir", "fluxWorkingDir", "pythonPath"); f {
		case "archive":
			at(spec(o), "archive")["path"] = v
			return "spec.archive.path=" + show(v)
		case "logs", "workingDir":
			runner(o)[f] = v
			return fmt.Sprintf("runner %s=%s", f, show(v))
		case "fluxWorkingDir":
			at(spec(o), "flux.container")["workingDir"] = v
			return "spec.flux.container.workingDir=" + show(v)
		default:
			at(spec(o), "flux.container")["pythonPath"] = v
			return "spec.flux.container.pythonPath=" + show(v)
		}
	}},
	// -------------------------------------------------------- sizes
	{"size", func(g *gen, o map[string]any) string {
		v := pick(g, int64(1), int64(2), int64(99999), int64(100000), int64(0), int64(-1), int64(100001))
		s := spec(o)
		s["size"] = v
		if g.chance(0.7) {
			delete(s, "maxSize")
			delete(s, "minSize")
		}
		return fmt.Sprintf("spec.size=%d", v)
	}},
	{"max-min-size", func(g *gen, o map[string]any) string {
		combos := [][3]int64{{4, 2, 0}, {2, 100000, 0}, {2, 0, 3}, {4, 0, 4}, {1, 1, 1}, {4, 4, 5}, {4, 8, 2}, {1, 100000, 1}, {100000, 100000, 100000}, {3, 0, 0}}
		c := combos[g.r.IntN(len(combos))]
		s := spec(o)
		s["size"] = c[0]
		delete(s, "maxSize")
		delete(s, "minSize")
		if c[1] != 0 || g.chance(0.5) {
			s["maxSize"] = c[1]
		}
		if c[2] != 0 || g.chance(0.5) {
			s["minSize"] = c[2]
		}
		return fmt.Sprintf("size %d, maxSize %v, minSize %v", c[0], show(s["maxSize"]), show(s["minSize"]))
	}},
	{"counts", func(g *gen, o map[string]any) string {
		f := pick(g, "tasks", "deadlineSeconds", "backoffLimit")
		v := pick(g, int64(0), int64(1), int64(-1), int64(1000), int64(2147483647), int64(2147483648), int64(1)<<53)
		spec(o)[f] = v
		return fmt.Sprintf("spec.%s=%d", f, v)
	}},
	// -------------------------------------------------------- structure
	{"delete-field", func(g *gen, o map[string]any) string {
		// Under spec, or the name: without its kind it would not be a claim.
		ps := append(allPaths(spec(o), "spec"), "metadata.name")
		p := ps[g.r.IntN(len(ps))]
		setPath(o, p, nil, true)
		return "deleted " + p
	}},
	{"type-change", func(g *gen, o map[string]any) string {
		ps := allPaths(spec(o), "spec")
		if len(ps) == 0 {
			spec(o)["size"] = "four"
			return `spec.size="four"`
		}
		p := ps[g.r.IntN(len(ps))]
		var cur any
		if v, ok := lookup(o, splitPath(p)); ok {
			cur = v
		}
		var nv any
		switch cur.(type) {
		case string:
			nv = pick[any](g, int64(42), true, []any{"a"}, map[string]any{"a": "b"})
		case int64, float64:
			nv = pick[any](g, "4", "four", true, 1.5)
		case bool:
			nv = pick[any](g, "yes", int64(1), "true")
		case map[string]any:
			nv = pick[any](g, []any{}, "map", int64(0))
		case []any:
			nv = pick[any](g, map[string]any{}, "list", nil)
		default:
			nv = "x"
		}
		setPath(o, p, nv, false)
		return fmt.Sprintf("%s: %T -> %s", p, cur, show(nv))
	}},
	{"unknown-field", func(g *gen, o map[string]any) string {
		where := pick(g, "spec", "spec.flux", "spec.pod", "runner")
		var m map[string]any
		if where == "runner" {
			m = runner(o)
		} else {
			m = at(o, where)
		}
		m["notAField"] = int64(1)
		return where + ".notAField"
	}},
	{"valid-tweak", func(g *gen, o map[string]any) string {
		s := spec(o)
		switch g.r.IntN(12) {
		case 0:
			obj(runner(o), "environment")["MODE"] = "production"
			return "runner environment MODE"
		case 1:
			at(s, "pod.labels")["team"] = "hpc"
			return "pod label team=hpc"
		case 2:
			at(s, "logging")[pick(g, "quiet", "strict", "debug", "zeromq", "timed")] = true
			return "a logging switch"
		case 3:
			s["interactive"] = true
			return "interactive"
		case 4:
			s["tasks"] = int64(0)
			return "tasks 0"
		case 5:
			at(s, "flux.container")["pullAlways"] = true
			at(s, "network")["disableAffinity"] = true
			return "pullAlways, disableAffinity"
		case 6:
			f := at(s, "flux")
			f["completeWorkers"], f["noWaitSocket"] = true, true
			return "completeWorkers, noWaitSocket"
		case 7:
			at(s, "flux.scheduler")["simple"] = true
			return "scheduler simple"
		case 8:
			s["deadlineSeconds"] = int64(3600)
			s["cleanup"] = true
			return "deadlineSeconds 3600, cleanup"
		case 9:
			addSidecar(o, map[string]any{"name": "helper", "image": "busybox", "command": "sleep infinity"})
			return "a plain sidecar"
		case 10:
			at(s, "flux")["disableSocket"] = true
			return "disableSocket"
		default:
			obj(runner(o), "volumes")["scratch"] = map[string]any{"emptyDir": true, "path": "/scratch"}
			return "an emptyDir at /scratch"
		}
	}},
}

// hostRange is the host list of every pod of the claim o at its size.
func hostRange(o map[string]any) string { return fmt.Sprintf("%s-[0-%d]", name(o), size(o)-1) }

// bootstrapHosts is a broker.toml with the URIs and certificate Flux needs
// and the given hosts entries.
func bootstrapHosts(o map[string]any, entries string) string {
	return "[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\ndefault_port = 8050\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h." + name(o) + ":%p\"\nhosts = [" + entries + "]\n"
}
