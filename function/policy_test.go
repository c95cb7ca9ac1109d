package function

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// object is a cluster object of tenant-a (a Namespace is cluster-scoped)
// with labels (name=value).
func object(kind, name string, labels ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetName(name)
	if kind != "Namespace" {
		u.SetNamespace("tenant-a")
	}
	l := map[string]string{}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		l[k] = v
	}
	u.SetLabels(l)
	if kind == "Secret" {
		// Data the function must never repeat.
		u.Object["data"] = map[string]any{"token": "c2VjcmV0LXRva2VuLXZhbHVl"} //nolint:gosec // G101: a test value the messages must never repeat
	}
	return u
}

const allowed = "minicluster.flux-framework.org/allowed=true"

// TestRunFunctionPolicy runs claims through the requirements loop as
// Crossplane does, with the cluster's objects, under the default policy
// unless an input says otherwise.
func TestRunFunctionPolicy(t *testing.T) {
	type want struct {
		refused []string // parts of the refusal (Fatal and Valid=False); none: composed
		reason  string   // of Valid=False; "" for Policy
	}
	cases := map[string]struct {
		reason   string
		spec     string
		input    string
		status   string
		observed map[string]string
		cluster  []*unstructured.Unstructured
		want     want
	}{
		"HelloWorld": {
			reason: "Hello-world in an unlabelled namespace passes the default policy.",
			spec:   helloSpec,
		},
		"ForeignServiceAccount": {
			reason:  "A ServiceAccount that is neither default nor labelled for MiniClusters is refused, naming the key, the field and the label that allows it.",
			spec:    `{"size":2,"pod":{"serviceAccountName":"builder"},"containers":[{"image":"x","command":"hostname"}]}`,
			cluster: []*unstructured.Unstructured{object("ServiceAccount", "builder")},
			want: want{refused: []string{"spec.pod.serviceAccountName: refused by the platform's policy (policy.serviceAccounts)",
				`ServiceAccount "builder" is not labelled minicluster.flux-framework.org/allowed=true`, "label it minicluster.flux-framework.org/allowed=true"}},
		},
		"MissingServiceAccount": {
			reason: "A ServiceAccount that does not exist is refused too (the Job could not create its pods).",
			spec:   `{"size":2,"pod":{"serviceAccountName":"builder"},"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"policy.serviceAccounts", `ServiceAccount "builder" does not exist in namespace tenant-a`}},
		},
		"LabelledServiceAccount": {
			reason:  "A ServiceAccount labelled for MiniClusters may be named.",
			spec:    `{"size":2,"pod":{"serviceAccountName":"builder"},"containers":[{"image":"x","command":"hostname"}]}`,
			cluster: []*unstructured.Unstructured{object("ServiceAccount", "builder", allowed)},
		},
		"Token": {
			reason: "Mounting the ServiceAccount's token is refused by default.",
			spec:   `{"size":2,"pod":{"automountServiceAccountToken":true},"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"spec.pod.automountServiceAccountToken: refused by the platform's policy (policy.serviceAccounts.automountToken)"}},
		},
		"ForeignSecret": {
			reason:  "A Secret not labelled for MiniClusters (another claim's certificate, a token Secret) is refused, once, at its first reference; its data is never repeated.",
			spec:    `{"size":2,"containers":[{"image":"x","command":"hostname","secrets":{"A":{"name":"other-curve-cert","key":"curve.cert"},"B":{"name":"other-curve-cert","key":"curve.cert"}}}]}`,
			cluster: []*unstructured.Unstructured{object("Secret", "other-curve-cert")},
			want:    want{refused: []string{"spec.containers[0].secrets[A].name: refused by the platform's policy (policy.secrets)", `Secret "other-curve-cert" is not labelled`}},
		},
		"SecretVolume": {
			reason:  "A Secret volume is a read too.",
			spec:    `{"size":2,"containers":[{"image":"x","command":"hostname","volumes":{"s":{"secretName":"db","path":"/s"}}}]}`,
			cluster: []*unstructured.Unstructured{object("Secret", "db")},
			want:    want{refused: []string{"spec.containers[0].volumes[s].secretName", "policy.secrets"}},
		},
		"LabelledSecret": {
			reason:  "A Secret labelled for MiniClusters may be read.",
			spec:    `{"size":2,"containers":[{"image":"x","command":"hostname","secrets":{"A":{"name":"db","key":"password"}}}]}`,
			cluster: []*unstructured.Unstructured{object("Secret", "db", allowed)},
		},
		"OwnCertificate": {
			reason: "Its own certificate Secret needs no label.",
			spec:   `{"size":2,"containers":[{"image":"x","command":"hostname","volumes":{"c":{"secretName":"flux-sample-curve-cert","path":"/c"}}}]}`,
		},
		"CurveCertSecret": {
			reason:  "flux.curveCertSecret names a Secret the brokers read: another cluster's certificate is refused unless labelled.",
			spec:    `{"size":2,"flux":{"curveCertSecret":"shared-curve"},"containers":[{"image":"x","command":"hostname"}]}`,
			cluster: []*unstructured.Unstructured{object("Secret", "shared-curve")},
			want:    want{refused: []string{"spec.flux.curveCertSecret: refused by the platform's policy (policy.secrets)"}},
		},
		"SecretsByName": {
			reason:  "policy.secrets.names allows named Secrets without a label.",
			spec:    `{"size":2,"containers":[{"image":"x","command":"hostname","secrets":{"A":{"name":"db","key":"password"}}}]}`,
			input:   `{"policy":{"secrets":{"names":["db"]}}}`,
			cluster: []*unstructured.Unstructured{object("Secret", "db")},
		},
		"NodePort": {
			reason: "The root of a burst opens a NodePort: refused where the namespace is not labelled for it.",
			spec:   `{"size":2,"flux":{"bursting":{"clusters":[{"name":"burst","size":2}]}},"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"spec.flux.bursting.clusters: refused by the platform's policy (policy.nodePorts)", "minicluster.flux-framework.org/node-ports=true"}},
		},
		"NodePortLabelled": {
			reason:  "A namespace the platform labelled for NodePorts may have burst roots.",
			spec:    `{"size":2,"flux":{"bursting":{"clusters":[{"name":"burst","size":2}]}},"containers":[{"image":"x","command":"hostname"}]}`,
			cluster: []*unstructured.Unstructured{object("Namespace", "tenant-a", "minicluster.flux-framework.org/node-ports=true")},
		},
		"TooManyPods": {
			reason: "100,000 pods are above the default maximum.",
			spec:   `{"size":100000,"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"spec.size: refused by the platform's policy (policy.maxSize): 100000 pods are more than the platform's maximum of 1024"}},
		},
		"ControlPlaneToleration": {
			reason: "Tolerating the control plane's taint is refused; so is a toleration of every taint.",
			spec:   `{"size":2,"pod":{"tolerations":[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists"},{"operator":"Exists"}]},"containers":[{"image":"x","command":"hostname"}]}`,
			want: want{refused: []string{"spec.pod.tolerations[0]: refused by the platform's policy (policy.tolerations.forbiddenKeys)",
				"spec.pod.tolerations[1]", "a toleration without a key tolerates every taint"}},
		},
		"InlineCSI": {
			reason: "Inline CSI volumes are refused by default.",
			spec:   `{"size":2,"containers":[{"image":"x","command":"hostname","volumes":{"v":{"csiDriver":"secrets-store.csi.k8s.io","path":"/v"}}}]}`,
			want:   want{refused: []string{"spec.containers[0].volumes[v].csiDriver: refused by the platform's policy (policy.csiDrivers)"}},
		},
		"RuntimeAndScheduler": {
			reason: "A runtime class or scheduler the platform did not allow is refused.",
			spec:   `{"size":2,"pod":{"runtimeClassName":"runc-unconfined","schedulerName":"fluence"},"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"spec.pod.runtimeClassName: refused by the platform's policy (policy.runtimeClasses)", "spec.pod.schedulerName: refused by the platform's policy (policy.schedulers)"}},
		},
		"AllowedScheduler": {
			reason: "A scheduler the platform allows may be named.",
			spec:   `{"size":2,"pod":{"schedulerName":"fluence"},"containers":[{"image":"x","command":"hostname"}]}`,
			input:  `{"policy":{"schedulers":["fluence"]}}`,
		},
		"LabelPrefix": {
			reason: "Crossplane's and Kubernetes' label prefixes are the platform's.",
			spec:   `{"size":2,"pod":{"labels":{"crossplane.io/composite":"x"}},"jobLabels":{"kubernetes.io/x":"y"},"containers":[{"image":"x","command":"hostname"}]}`,
			want:   want{refused: []string{"spec.pod.labels[crossplane.io/composite]: refused by the platform's policy (policy.metadata.forbiddenPrefixes)", "spec.jobLabels[kubernetes.io/x]"}},
		},
		"EnforcedNodeSelector": {
			reason: "A claim asking for another value of an enforced node label is refused.",
			spec:   `{"size":2,"pod":{"nodeSelector":{"pool":"gpu"}},"containers":[{"image":"x","command":"hostname"}]}`,
			input:  `{"policy":{"nodeSelector":{"enforced":{"pool":"hpc"}}}}`,
			want:   want{refused: []string{"spec.pod.nodeSelector[pool]: refused by the platform's policy (policy.nodeSelector.enforced)"}},
		},
		"Deadline": {
			reason: "A deadline above the maximum is refused.",
			spec:   `{"size":2,"deadlineSeconds":7200,"containers":[{"image":"x","command":"hostname"}]}`,
			input:  `{"policy":{"maxDeadlineSeconds":3600}}`,
			want:   want{refused: []string{"spec.deadlineSeconds: refused by the platform's policy (policy.maxDeadlineSeconds)"}},
		},
		"PermissivePolicy": {
			reason:  "The Flux Operator's behaviour, for a platform that moves first: everything above is allowed.",
			spec:    `{"size":2,"pod":{"serviceAccountName":"builder","automountServiceAccountToken":true,"schedulerName":"fluence","tolerations":[{"operator":"Exists"}]},"flux":{"bursting":{"clusters":[{"name":"burst","size":2}]}},"containers":[{"image":"x","command":"hostname","securityContext":{"privileged":true},"secrets":{"A":{"name":"db","key":"k"}}}]}`,
			input:   permissiveInput,
			cluster: []*unstructured.Unstructured{object("Secret", "db"), object("ServiceAccount", "builder")},
		},
		"RunningKeepsRunning": {
			reason: "A running MiniCluster that a tighter policy would now refuse keeps running: its pods were admitted; nothing is asked and nothing is torn down.",
			spec:   `{"size":2,"pod":{"automountServiceAccountToken":true},"containers":[{"image":"x","command":"hostname"}]}`,
			status: `{"maximumSize":2}`,
			observed: composedBy(t, xr(`{"size":2,"pod":{"automountServiceAccountToken":true},"containers":[{"image":"x","command":"hostname"}]}`, ""),
				`{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","policy":{"serviceAccounts":{"automountToken":true}}}`),
		},
		"RunningJobOfAnotherSpec": {
			reason:   "The composite's own Job, but not one this spec renders (no job-spec hash of it: a Job from another time): nothing vouches that it was admitted, so it is judged by today's policy, and refused; nothing changes.",
			spec:     `{"size":2,"pod":{"automountServiceAccountToken":true},"containers":[{"image":"x","command":"hostname"}]}`,
			status:   `{"maximumSize":2}`,
			observed: map[string]string{"job": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a"},"spec":{"parallelism":2}}`},
			want:     want{refused: []string{"spec.pod.automountServiceAccountToken: refused by the platform's policy (policy.serviceAccounts.automountToken)"}},
		},
		"OrphanedJob": {
			reason:   "A Job that no composite controls (a MiniCluster deleted with --cascade=orphan, named again in resourceRefs) is not this MiniCluster's: refused before anything is judged or composed, and not adopted.",
			spec:     `{"size":2,"containers":[{"image":"x","command":"hostname"}]}`,
			observed: map[string]string{"job": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a","ownerReferences":[]},"spec":{"parallelism":2}}`},
			want:     want{reason: admission.ReasonForeignObject, refused: []string{"Job tenant-a/flux-sample (composition resource job) has no controller", "adopts none"}},
		},
		"RunningScaledAbove": {
			reason:   "A running MiniCluster scaled above the policy's maximum: the new size is refused, what runs stays.",
			spec:     `{"size":12,"maxSize":16,"containers":[{"image":"x","command":"hostname"}]}`,
			input:    `{"policy":{"maxSize":8}}`,
			status:   `{"maximumSize":16}`,
			observed: map[string]string{"job": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a"},"spec":{"parallelism":4}}`},
			want:     want{refused: []string{"spec.size: refused by the platform's policy (policy.maxSize): 12 pods are more than the platform's maximum of 8 (the 4 running keep running)"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			input := ""
			if tc.input != "" {
				input = tc.input
				if !strings.Contains(input, `"kind"`) {
					input = `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input",` + strings.TrimPrefix(input, "{")
				}
			}
			rsp, err := driver.RunRequest(context.Background(), New(WithRandom(entropy())), req(xr(tc.spec, tc.status), tc.observed, input), tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			var fatal, valid, reason string
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = r.GetMessage()
				}
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionValid && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
					valid, reason = c.GetMessage(), c.GetReason()
				}
			}
			if strings.Contains(fatal+valid, "c2VjcmV0") || strings.Contains(fatal+valid, "secret-token-value") {
				t.Errorf("%s\na Secret's data reached a message: %q", tc.reason, fatal)
			}
			if len(tc.want.refused) == 0 {
				if fatal != "" {
					t.Fatalf("%s\nrefused: %s", tc.reason, fatal)
				}
				if len(rsp.GetDesired().GetResources()) == 0 {
					t.Errorf("%s\nnothing composed", tc.reason)
				}
				return
			}
			wantReason := tc.want.reason
			if wantReason == "" {
				wantReason = ReasonPolicy
			}
			if reason != wantReason {
				t.Errorf("%s\nValid=False reason %q, want %q (message %q)", tc.reason, reason, wantReason, valid)
			}
			if len(rsp.GetDesired().GetResources()) > 0 {
				t.Errorf("%s\nrefused, but composed %d resources", tc.reason, len(rsp.GetDesired().GetResources()))
			}
			for _, part := range append(tc.want.refused, "nothing was composed or changed") {
				if !strings.Contains(fatal, part) || !strings.Contains(valid, part) {
					t.Errorf("%s\nFatal %q and Valid=False %q, want both to contain %q", tc.reason, fatal, valid, part)
				}
			}
		})
	}
}

const permissiveInput = `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","policy":{
"podSecurity":{"defaultLevel":"privileged"},"serviceAccounts":{"names":["*"],"automountToken":true},"secrets":{"names":["*"]},
"nodePorts":{"allowed":true},"maxSize":1000000,"csiDrivers":["*"],"runtimeClasses":["*"],"schedulers":["*"],
"tolerations":{"forbiddenKeys":[]},"metadata":{"forbiddenPrefixes":[]}}}`

func TestRunFunctionPinnedRevision(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     string
		want   string // part of the refusal; "" composed
	}{
		"Automatic": {
			reason: "Following the platform's Composition (Crossplane's own revision reference included) is fine.",
			xr:     xr(`{"size":2,"compositionUpdatePolicy":"Automatic","compositionRevisionRef":{"name":"miniclusters-abc"},"containers":[{"image":"x","command":"hostname"}]}`, ""),
		},
		"ManualClaim": {
			reason: "A claim that pins a revision by hand could keep an old policy.",
			xr:     xr(`{"size":2,"compositionUpdatePolicy":"Manual","compositionRevisionRef":{"name":"miniclusters-old"},"containers":[{"image":"x","command":"hostname"}]}`, ""),
			want:   "spec.compositionUpdatePolicy: refused by the platform's policy (the Composition the XRD enforces)",
		},
		"SelectorV2": {
			reason: "A v2 composite that selects revisions by label (an old revision's hash) is refused too.",
			xr: `{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","metadata":{"name":"flux-sample","namespace":"tenant-a"},
"spec":{"size":2,"crossplane":{"compositionRevisionSelector":{"matchLabels":{"crossplane.io/composition-hash":"0ld"}}},"containers":[{"image":"x","command":"hostname"}]}}`,
			want: "spec.crossplane.compositionRevisionSelector: refused by the platform's policy",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := driver.RunRequest(context.Background(), New(WithRandom(entropy())), req(tc.xr, nil, ""), nil)
			if err != nil {
				t.Fatal(err)
			}
			var fatal string
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = r.GetMessage()
				}
			}
			switch {
			case tc.want == "" && fatal != "":
				t.Errorf("%s\nrefused: %s", tc.reason, fatal)
			case tc.want != "" && !strings.Contains(fatal, tc.want):
				t.Errorf("%s\nFatal %q, want it to contain %q", tc.reason, fatal, tc.want)
			}
		})
	}
}
