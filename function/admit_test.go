package function

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// namespace is tenant-a's Namespace with Pod Security labels (name=value).
func namespace(labels ...string) *fnv1.Resources {
	l := map[string]string{"kubernetes.io/metadata.name": "tenant-a"}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		l["pod-security.kubernetes.io/"+k] = v
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "tenant-a", "labels": l}})
	if err != nil {
		panic(err)
	}
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(string(b))}}}
}

// nonRootSpec is hello-world whose runner runs as uid 1000.
const nonRootSpec = `{"size":4,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hello world","securityContext":{"runAsUser":1000,"runAsGroup":1000}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`

// servicesSpec is hello-world with a services Pod.
const servicesSpec = `{"size":2,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"services":[{"name":"db","image":"postgres"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`

// withJobSpecHash is observed with the Job's job-spec hash set to hash.
func withJobSpecHash(observed map[string]string, hash string) map[string]string {
	job := map[string]any{}
	if err := json.Unmarshal([]byte(observed["job"]), &job); err != nil {
		panic(err)
	}
	job["metadata"].(map[string]any)["annotations"].(map[string]any)[AnnotationJobSpecHash] = hash
	b, err := json.Marshal(job)
	if err != nil {
		panic(err)
	}
	out := maps.Clone(observed)
	out["job"] = string(b)
	return out
}

// without is observed less the resources named.
func without(observed map[string]string, names ...string) map[string]string {
	out := maps.Clone(observed)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func TestRunFunctionAdmission(t *testing.T) {
	type want struct {
		asked    bool     // the Namespace is a requirement
		composed bool     // desired resources
		fatal    []string // parts of the Fatal result and the Valid=False message
		policy   bool     // Valid=False's reason is Policy
		warnings []string // parts of one warning
		normal   []string // parts of one Normal result
	}
	cases := map[string]struct {
		reason   string
		spec     string
		input    string
		observed map[string]string
		ns       *fnv1.Resources // nil: Crossplane has not answered yet
		want     want
	}{
		"FirstCall": {
			reason: "Before Crossplane answers, the function asks for the Namespace and composes nothing: Crossplane calls again at once with the answer and uses only that response.",
			ns:     nil,
			want:   want{asked: true, composed: false},
		},
		"NamespaceNotFound": {
			reason: "Crossplane found no Namespace (it is being created): the platform's default level applies, which hello-world passes.",
			ns:     &fnv1.Resources{},
			want:   want{asked: true, composed: true},
		},
		"Unlabelled": {
			reason: "A namespace without Pod Security labels gets the policy's default level, baseline, which hello-world passes.",
			ns:     namespace(),
			want:   want{asked: true, composed: true},
		},
		"UnlabelledPrivileged": {
			reason: "A privileged container in a namespace without labels: the policy's default level refuses it, naming the policy key, the field and the label that would allow it; nothing composed.",
			spec:   `{"size":2,"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"privileged":true}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace(),
			want: want{asked: true, policy: true, fatal: []string{
				"refused by the platform's policy (policy.podSecurity.defaultLevel: baseline, for namespace tenant-a, which has no pod-security.kubernetes.io/enforce label)",
				"privileged", "set spec.containers[0].securityContext.privileged",
				"label the namespace pod-security.kubernetes.io/enforce=privileged", "nothing was composed or changed",
			}},
		},
		"UnlabelledPrivilegedPermissive": {
			reason: "The permissive policy's default level is privileged: as the Flux Operator, the namespace's own labels alone decide.",
			spec:   `{"size":2,"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"privileged":true}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			input:  `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","policy":{"podSecurity":{"defaultLevel":"privileged"}}}`,
			ns:     namespace(),
			want:   want{asked: true, composed: true},
		},
		"LabelledPrivileged": {
			reason: "A namespace labelled privileged by whoever administers it wins over the policy's default level.",
			spec:   `{"size":2,"pod":{"hostPID":true},"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"privileged":true}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace("enforce=privileged"),
			want:   want{asked: true, composed: true},
		},
		"BaselineDefault": {
			reason: "By default the composed pods pass baseline.",
			ns:     namespace("enforce=baseline"),
			want:   want{asked: true, composed: true},
		},
		"RestrictedRoot": {
			reason: "Hello-world as root in a restricted namespace: Valid=False naming the policy, its label, each violation, the fields that fix it and the way to pass; nothing composed.",
			ns:     namespace("enforce=restricted"),
			want: want{asked: true, fatal: []string{
				"namespace tenant-a sets Pod Security enforce=restricted:latest (label pod-security.kubernetes.io/enforce), which refuses the MiniCluster's pods",
				`the broker pods: allowPrivilegeEscalation != false (containers "flux-view", "flux-sample" must set securityContext.allowPrivilegeEscalation=false): set spec.containers[0].securityContext.allowPrivilegeEscalation, spec.flux.container.securityContext.allowPrivilegeEscalation`,
				"runAsNonRoot != true", "set spec.containers[0].securityContext.runAsNonRoot",
				"seccompProfile", "unrestricted capabilities",
				"gets pods that pass restricted", "nothing was composed or changed",
			}},
		},
		"RestrictedNonRoot": {
			reason: "A non-root runner that asks for nothing privileged gets pods that pass restricted.",
			spec:   nonRootSpec,
			ns:     namespace("enforce=restricted"),
			want:   want{asked: true, composed: true},
		},
		"WarnBaselinePrivileged": {
			reason: "warn gives a warning naming the field; the MiniCluster is composed.",
			spec:   `{"size":2,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"privileged":true}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace("enforce=privileged", "warn=baseline", "warn-version=v1.33"),
			want: want{asked: true, composed: true, warnings: []string{
				"Pod Security warn=baseline:v1.33 (label pod-security.kubernetes.io/warn), which warns about the MiniCluster's pods: the broker pods: privileged",
				"set spec.containers[0].securityContext.privileged",
			}},
		},
		"AuditHostIPC": {
			reason: "audit gives a Normal event naming the field.",
			spec:   `{"size":2,"logging":{"quiet":true},"pod":{"hostIPC":true},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace("enforce=privileged", "audit=baseline"),
			want:   want{asked: true, composed: true, normal: []string{"audits the MiniCluster's pods: the broker pods: host namespaces (hostIPC=true): set spec.pod.hostIPC"}},
		},
		"ServicesPod": {
			reason: "The services Pod is checked too, its containers named by spec.services.",
			spec:   `{"size":2,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"services":[{"name":"db","image":"postgres","securityContext":{"addCapabilities":["SYS_ADMIN"]}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace("enforce=baseline"),
			want:   want{asked: true, fatal: []string{"the services Pod: non-default capabilities", "set spec.services[0].securityContext.addCapabilities"}},
		},
		"CapabilitiesAdd": {
			reason: "The message names the spelling the claim used: capabilities.add here, addCapabilities above.",
			spec:   `{"size":2,"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"capabilities":{"add":["SYS_ADMIN"]}}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			ns:     namespace("enforce=baseline"),
			want:   want{asked: true, fatal: []string{"non-default capabilities", "set spec.containers[0].securityContext.capabilities.add"}},
		},
		"PrivilegedWithoutEscalation": {
			reason: "The schema refuses allowPrivilegeEscalation: false on a privileged container, as Kubernetes does, before anything is asked.",
			spec:   `{"size":2,"containers":[{"image":"rockylinux:9","command":"echo hi","securityContext":{"privileged":true,"allowPrivilegeEscalation":false}}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			want:   want{fatal: []string{"spec.containers[0].securityContext.allowPrivilegeEscalation", "drop privileged, or allowPrivilegeEscalation: false"}},
		},
		"LocalhostProfileWithoutType": {
			reason: "A localhostProfile belongs to type Localhost only.",
			spec:   `{"size":2,"pod":{"securityContext":{"seccompProfile":{"type":"RuntimeDefault","localhostProfile":"x.json"}}},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			want:   want{fatal: []string{"spec.pod.securityContext.seccompProfile.localhostProfile", "localhostProfile is required with type Localhost and forbidden with any other type"}},
		},
		"UnmaskedProcMount": {
			reason: "procMount Unmasked needs a user namespace.",
			spec:   `{"size":2,"flux":{"container":{"securityContext":{"procMount":"Unmasked"}}},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			want:   want{fatal: []string{"spec.flux.container.securityContext.procMount", "set it to Default"}},
		},
		"JobObserved": {
			reason:   "Once the composite observes its own objects, the Job rendered from the spec it was admitted with, nothing is asked and nothing running is judged: the namespace became restricted since.",
			observed: composedBy(t, xr(helloSpec, ""), ""),
			ns:       namespace("enforce=restricted"),
			want:     want{composed: true},
		},
		"JobOfAnotherSpec": {
			reason:   "The composite's own Job, but not the one its spec renders (another job-spec hash): it is judged again, and the restricted namespace refuses it; nothing changes.",
			observed: withJobSpecHash(composedBy(t, xr(helloSpec, ""), ""), "0123456789abcdef"),
			ns:       namespace("enforce=restricted"),
			want:     want{asked: true, fatal: []string{"namespace tenant-a sets Pod Security enforce=restricted:latest", "the broker pods", "nothing was composed or changed"}},
		},
		"ServicesPodComposedNew": {
			reason:   "The Job runs as admitted, but the services Pod is gone (evicted, say): composing it again judges it, whatever runs; the namespace's restricted level refuses it.",
			spec:     servicesSpec,
			observed: without(composedBy(t, xr(servicesSpec, ""), ""), "services-pod"),
			ns:       namespace("enforce=restricted"),
			want:     want{asked: true, fatal: []string{"the services Pod", "nothing was composed or changed"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec == "" {
				spec = helloSpec
			}
			r := req(xr(spec, ""), tc.observed, tc.input)
			// One call, with what Crossplane answered (or not yet): the
			// Namespace as the case says, nothing else.
			rsp, err := New(WithRandom(entropy())).RunFunction(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ns != nil {
				rsp = answered(t, r, rsp, map[string]*fnv1.Resources{requiredNamespace: tc.ns})
			}
			sel, asked := rsp.GetRequirements().GetResources()[requiredNamespace]
			if asked != tc.want.asked {
				t.Fatalf("%s\nasked for the Namespace: %t, want %t", tc.reason, asked, tc.want.asked)
			}
			if asked {
				want := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Namespace", Match: &fnv1.ResourceSelector_MatchName{MatchName: "tenant-a"}}
				if diff := cmp.Diff(want, sel, protocmp.Transform()); diff != "" {
					t.Errorf("%s\nselector: -want, +got:\n%s", tc.reason, diff)
				}
			}
			if got := len(rsp.GetDesired().GetResources()) > 0; got != tc.want.composed {
				t.Errorf("%s\ncomposed %t, want %t", tc.reason, got, tc.want.composed)
			}
			var fatal, valid, reason string
			var warnings, normals []string
			for _, res := range rsp.GetResults() {
				switch res.GetSeverity() {
				case fnv1.Severity_SEVERITY_FATAL:
					fatal = res.GetMessage()
				case fnv1.Severity_SEVERITY_WARNING:
					warnings = append(warnings, res.GetMessage())
				case fnv1.Severity_SEVERITY_NORMAL:
					normals = append(normals, res.GetMessage())
				}
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionValid && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
					valid, reason = c.GetMessage(), c.GetReason()
				}
			}
			if len(tc.want.fatal) == 0 && (fatal != "" || valid != "") {
				t.Errorf("%s\nrefused: %q / %q", tc.reason, fatal, valid)
			}
			for _, part := range tc.want.fatal {
				if !strings.Contains(fatal, part) || !strings.Contains(valid, part) {
					t.Errorf("%s\nFatal %q and Valid=False %q, want both to contain %q", tc.reason, fatal, valid, part)
				}
			}
			if tc.want.policy && reason != ReasonPolicy {
				t.Errorf("%s\nValid=False reason %q, want %q", tc.reason, reason, ReasonPolicy)
			}
			checkOne(t, tc.reason, "warning", warnings, tc.want.warnings)
			checkOne(t, tc.reason, "Normal result", normals, tc.want.normal)
		})
	}
}

// answered calls the function again with r, as Crossplane does once it
// has found what the response rsp required: the resources of answers, and
// nothing for every other requirement.
func answered(t *testing.T, r *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, answers map[string]*fnv1.Resources) *fnv1.RunFunctionResponse {
	t.Helper()
	r.RequiredResources = map[string]*fnv1.Resources{}
	for name := range rsp.GetRequirements().GetResources() {
		r.RequiredResources[name] = &fnv1.Resources{}
		if a, ok := answers[name]; ok {
			r.RequiredResources[name] = a
		}
	}
	next, err := New(WithRandom(entropy())).RunFunction(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// checkOne: some message of got contains every part of want (none wanted:
// none mentions Pod Security).
func checkOne(t *testing.T, reason, what string, got, want []string) {
	t.Helper()
	for _, g := range got {
		if len(want) == 0 && strings.Contains(g, "Pod Security") {
			t.Errorf("%s\nunexpected %s %q", reason, what, g)
		}
		all := len(want) > 0
		for _, part := range want {
			all = all && strings.Contains(g, part)
		}
		if all {
			return
		}
	}
	if len(want) > 0 {
		t.Errorf("%s\nno %s contains all of %q; got %q", reason, what, want, got)
	}
}
