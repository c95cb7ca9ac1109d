package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

const (
	claimUID = "5c2d7e11-1b2c-4d3e-8f40-112233445566"
	selfUID  = "3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55"
	otherUID = "99999999-2222-4333-8444-555555555555"
	jobHash  = "0123456789abcdef"
)

var v2Self = Self{UID: selfUID, Kind: "MiniCluster", Name: "flux-sample", Namespaced: true, MiniCluster: "flux-sample", Namespace: "tenant-a"}

var claimSelf = Self{UID: selfUID, Kind: "XMiniCluster", Name: "flux-sample-x7k2p", MiniCluster: "flux-sample", Namespace: "tenant-a"}

// object is an object of kind named name in namespace ns, controlled by
// the composite of uid ("" for no controller), with labels (k=v).
func object(kind, ns, name, uid string, labels ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	if kind == "Job" {
		u.SetAPIVersion("batch/v1")
	}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if uid != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "flux-framework.org/v1alpha2", Kind: "MiniCluster", Name: "x", UID: types.UID(uid), Controller: ptr.To(true)}})
	}
	if len(labels) > 0 {
		l := map[string]string{}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
		u.SetLabels(l)
	}
	return u
}

func TestTrusted(t *testing.T) {
	cases := map[string]struct {
		reason   string
		self     Self
		observed map[string]*unstructured.Unstructured
		own      []string
		foreign  []string // parts of the one refusal; none: no refusal
	}{
		"Own": {
			reason:   "Objects this composite controls, in its namespace, are its own.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID), "service": object("Service", "tenant-a", "flux-sample", selfUID)},
			own:      []string{"job", "service"},
		},
		"Orphan": {
			reason:   "An orphan of a deleted MiniCluster (kubectl delete --cascade=orphan), named again in spec.crossplane.resourceRefs: refused, naming it and the field, never adopted.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "orph", ""), "service": object("Service", "tenant-a", "flux-sample", selfUID)},
			own:      []string{"service"},
			foreign:  []string{"spec.crossplane.resourceRefs", "Job tenant-a/orph (composition resource job) has no controller", "adopts none", "nothing was composed or changed"},
		},
		"AnotherComposites": {
			reason:   "An object another composite controls is not this one's.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"entrypoint": object("ConfigMap", "tenant-a", "other-entrypoint", otherUID)},
			foreign:  []string{"ConfigMap tenant-a/other-entrypoint", "is controlled by MiniCluster x (uid " + otherUID + "), not by this MiniCluster (uid " + selfUID + ")"},
		},
		"AnotherNamespace": {
			reason:   "Claims: a tenant's claim bound to an admin's composite, whose objects live in hpc-prod: Crossplane moved the composite's claim labels to the tenant's namespace, its objects did not move.",
			self:     claimSelf,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "hpc-prod", "flux-sample", selfUID)},
			foreign:  []string{"spec.resourceRefs of XMiniCluster flux-sample-x7k2p", "lives in namespace hpc-prod, not in this MiniCluster's namespace tenant-a", "delete this claim"},
		},
		"AnotherClaim": {
			reason:   "Claims: objects composed for another claim name it in their labels.",
			self:     claimSelf,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID, v1alpha2.LabelClaimName+"=admin", v1alpha2.LabelClaimNamespace+"=tenant-a")},
			foreign:  []string{"was composed for the claim tenant-a/admin, not for this MiniCluster tenant-a/flux-sample"},
		},
		"V2ClaimLabelsAreTheTenants": {
			reason:   "v2: labels on the tenant's own objects are whatever the tenant wrote; only the controller and the namespace count.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID, v1alpha2.LabelClaimName+"=admin")},
			own:      []string{"job"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := Trusted(tc.self, tc.observed)
			var own []string
			for k := range tr.Own {
				own = append(own, k)
			}
			if diff := cmp.Diff(tc.own, own, cmpSorted); diff != "" {
				t.Errorf("%s\nown: -want, +got:\n%s", tc.reason, diff)
			}
			r := tr.ForeignRefused(tc.self)
			if len(tc.foreign) == 0 {
				if r != nil {
					t.Errorf("%s\nrefused: %s", tc.reason, r.Message)
				}
				return
			}
			if r == nil || r.Reason != ReasonForeignObject {
				t.Fatalf("%s\nrefusal %+v, want reason %s", tc.reason, r, ReasonForeignObject)
			}
			for _, part := range tc.foreign {
				if !strings.Contains(r.Message, part) {
					t.Errorf("%s\nmessage %q, want it to contain %q", tc.reason, r.Message, part)
				}
			}
		})
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestAdmittedSize(t *testing.T) {
	job := func(queue string, suspend bool) *unstructured.Unstructured {
		u := object("Job", "tenant-a", "flux-sample", selfUID)
		if queue != "" {
			u.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": queue})
		}
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "parallelism")
		_ = unstructured.SetNestedField(u.Object, suspend, "spec", "suspend")
		return u
	}
	cases := map[string]struct {
		reason   string
		observed *unstructured.Unstructured
		self     Self
		want     int32
	}{
		"Admitted":   {reason: "Kueue admitted the own Job with 4 pods: the plan keeps 4.", observed: job("q", false), self: v2Self, want: 4},
		"Queued":     {reason: "A Job Kueue has not admitted yet takes the new size.", observed: job("q", true), self: v2Self},
		"NoKueue":    {reason: "Without Kueue the size follows spec.size.", observed: job("", false), self: v2Self},
		"NotTrusted": {reason: "An orphaned Job's parallelism is no fact about this MiniCluster.", observed: job("q", false), self: Self{UID: otherUID, Namespaced: true, Namespace: "tenant-a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Trusted(tc.self, map[string]*unstructured.Unstructured{render.KeyJob: tc.observed}).AdmittedSize(); got != tc.want {
				t.Errorf("%s\nAdmittedSize %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}

func TestComposite(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   []string // parts of the refusal, with its reason first; none: no refusal
	}{
		"Claimed": {
			reason: "Crossplane's claim controller sets the claim labels and spec.claimRef together.",
			xr:     xr(map[string]any{"labels": claimLabels("flux-sample", "tenant-a")}, map[string]any{"claimRef": claimRef("flux-sample", "tenant-a")}),
		},
		"ClaimRefOnly": {
			reason: "A claim reference without labels names the claim too.",
			xr:     xr(nil, map[string]any{"claimRef": claimRef("flux-sample", "tenant-a")}),
		},
		"HandMadeWithLabels": {
			reason: "An admin's XMiniCluster with claim labels only is bindable by any tenant's claim (spec.resourceRef): refused before it composes anything.",
			xr:     xr(map[string]any{"labels": claimLabels("admin", "hpc-prod")}, nil),
			want:   []string{ReasonUnclaimed, "spec.claimRef: XMiniCluster x was not made by a MiniCluster claim", "set spec.claimRef", "nothing was composed or changed"},
		},
		"LabelsDisagree": {
			reason: "Labels naming another claim than spec.claimRef were not written by Crossplane.",
			xr:     xr(map[string]any{"labels": claimLabels("admin", "hpc-prod")}, map[string]any{"claimRef": claimRef("grab", "team-a")}),
			want:   []string{ReasonUnclaimed, "bound to claim team-a/grab (spec.claimRef) but its labels", "name hpc-prod/admin"},
		},
		"V2": {
			reason: "A namespaced composite is the tenant's own object: no claim binds it.",
			xr:     xr(map[string]any{"namespace": "tenant-a"}, nil),
		},
		"PinnedRevision": {
			reason: "A revision of the Composition picked by hand runs the policy of another time.",
			xr:     xr(map[string]any{"namespace": "tenant-a"}, map[string]any{"crossplane": map[string]any{"compositionUpdatePolicy": "Manual"}}),
			want:   []string{ReasonPolicy, "spec.crossplane.compositionUpdatePolicy: refused by the platform's policy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Composite(tc.xr)
			if len(tc.want) == 0 {
				if r != nil {
					t.Errorf("%s\nrefused: %s", tc.reason, r.Message)
				}
				return
			}
			if r == nil || r.Reason != tc.want[0] {
				t.Fatalf("%s\nrefusal %+v, want reason %s", tc.reason, r, tc.want[0])
			}
			for _, part := range tc.want[1:] {
				if !strings.Contains(r.Message, part) {
					t.Errorf("%s\nmessage %q, want it to contain %q", tc.reason, r.Message, part)
				}
			}
		})
	}
}

func xr(metadata, spec map[string]any) map[string]any {
	md := map[string]any{"name": "x"}
	for k, v := range metadata {
		md[k] = v
	}
	s := map[string]any{"size": int64(1)}
	for k, v := range spec {
		s[k] = v
	}
	return map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "XMiniCluster", "metadata": md, "spec": s}
}

func claimLabels(name, ns string) map[string]any {
	return map[string]any{v1alpha2.LabelClaimName: name, v1alpha2.LabelClaimNamespace: ns}
}

func claimRef(name, ns string) map[string]any {
	return map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "name": name, "namespace": ns}
}

func TestMatchKey(t *testing.T) {
	cases := map[string]struct {
		entry, key string
		want       bool
	}{
		"Domain":             {entry: "kubernetes.io/", key: "kubernetes.io/hostname", want: true},
		"Subdomain":          {entry: "kubernetes.io/", key: "statefulset.kubernetes.io/pod-name", want: true},
		"DeeperSubdomain":    {entry: "kubernetes.io/", key: "a.cluster-autoscaler.kubernetes.io/x", want: true},
		"NotASubdomain":      {entry: "k8s.io/", key: "kueue.x-k8s.io/priority-class", want: false},
		"Kueue":              {entry: "kueue.x-k8s.io/", key: "kueue.x-k8s.io/priority-class", want: true},
		"SuffixIsNoDomain":   {entry: "istio.io/", key: "notistio.io/x", want: false},
		"ExactKey":           {entry: "aadpodidbinding", key: "aadpodidbinding", want: true},
		"ExactKeyNoPrefix":   {entry: "aadpodidbinding", key: "x/aadpodidbinding", want: false},
		"UnprefixedKey":      {entry: "kubernetes.io/", key: "hostname", want: false},
		"Any":                {entry: "*", key: "anything/at-all", want: true},
		"Empty":              {entry: "", key: "x", want: false},
		"DomainOfOtherEntry": {entry: "example.org/", key: "example.org/owner", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MatchKey(tc.entry, tc.key); got != tc.want {
				t.Errorf("MatchKey(%q, %q) = %t, want %t", tc.entry, tc.key, got, tc.want)
			}
		})
	}
}

// TestCheck holds the findings of issue 33 about the spec alone: each is
// refused under the default policy with its key and field.
func TestCheck(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy v1beta1.Policy
		mutate func(s *v1alpha2.MiniClusterSpec)
		want   []string // "key field" of each refusal
	}{
		"StatefulSetPodName": {
			reason: "A subdomain of kubernetes.io is Kubernetes' too: statefulset.kubernetes.io/pod-name receives another workload's per-pod traffic.",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Labels = map[string]string{"statefulset.kubernetes.io/pod-name": "db-0"}
				s.Pod.Annotations = map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
			},
			want: []string{"policy.metadata.forbiddenPrefixes spec.pod.labels[statefulset.kubernetes.io/pod-name]", "policy.metadata.forbiddenPrefixes spec.pod.annotations[cluster-autoscaler.kubernetes.io/safe-to-evict]"},
		},
		"KueuePriorityClass": {
			reason: "A WorkloadPriorityClass is cluster-wide: by default no MiniCluster names one.",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.JobLabels = map[string]string{LabelKueuePriorityClass: "high"}
				s.Pod.Labels = map[string]string{LabelKueuePriorityClass: "high"}
			},
			want: []string{"policy.kueue.priorityClasses spec.jobLabels[kueue.x-k8s.io/priority-class]", "policy.kueue.priorityClasses spec.pod.labels[kueue.x-k8s.io/priority-class]"},
		},
		"KueuePriorityClassAllowed": {
			reason: "A priority class the platform lists is fine.",
			policy: v1beta1.Policy{Kueue: v1beta1.KueuePolicy{PriorityClasses: []string{"low"}}},
			mutate: func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{LabelKueuePriorityClass: "low"} },
		},
		"OtherKueueLabels": {
			reason: "Kueue's other labels are the platform's (a forbidden prefix).",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.JobLabels = map[string]string{"kueue.x-k8s.io/max-exec-time-seconds": "60", "kueue.x-k8s.io/queue-name": "q"}
			},
			want: []string{"policy.metadata.forbiddenPrefixes spec.jobLabels[kueue.x-k8s.io/max-exec-time-seconds]"},
		},
		"QueueNotListed": {
			reason: "A platform that lists its queues refuses the others.",
			policy: v1beta1.Policy{Kueue: v1beta1.KueuePolicy{Queues: []string{"batch"}}},
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.JobLabels = map[string]string{"kueue.x-k8s.io/queue-name": "urgent"}
			},
			want: []string{"policy.kueue.queues spec.jobLabels[kueue.x-k8s.io/queue-name]"},
		},
		"QueueRequired": {
			reason: "A platform that runs everything through Kueue refuses a MiniCluster without a queue.",
			policy: v1beta1.Policy{Kueue: v1beta1.KueuePolicy{RequireQueue: true}},
			want:   []string{"policy.kueue.requireQueue spec.jobLabels[kueue.x-k8s.io/queue-name]"},
		},
		"SteeringAnnotations": {
			reason: "Annotations a mesh, a CNI or a cloud identity acts on after the check: refused by default (the mesh's domain is forbidden outright); one without a prefix is the user's.",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Annotations = map[string]string{"sidecar.istio.io/userVolume": "[]", "k8s.v1.cni.cncf.io/networks": "other/net", "iam.amazonaws.com/role": "admin", "note": "mine"}
			},
			want: []string{"policy.metadata.allowedAnnotationPrefixes spec.pod.annotations[iam.amazonaws.com/role]", "policy.metadata.allowedAnnotationPrefixes spec.pod.annotations[k8s.v1.cni.cncf.io/networks]", "policy.metadata.forbiddenPrefixes spec.pod.annotations[sidecar.istio.io/userVolume]"},
		},
		"AllowedAnnotation": {
			reason: "The platform extends the allow-list by prefix.",
			policy: v1beta1.Policy{Metadata: v1beta1.MetadataPolicy{AllowedAnnotationPrefixes: []string{"example.org/"}}},
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Annotations = map[string]string{"team.example.org/owner": "physics"}
			},
		},
		"IdentityLabels": {
			reason: "Labels that bind cloud identities and the mesh are the platform's.",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Labels = map[string]string{"aadpodidbinding": "admin", "azure.workload.identity/use": "true", "sidecar.istio.io/inject": "true"}
			},
			want: []string{"policy.metadata.forbiddenPrefixes spec.pod.labels[aadpodidbinding]", "policy.metadata.forbiddenPrefixes spec.pod.labels[azure.workload.identity/use]", "policy.metadata.forbiddenPrefixes spec.pod.labels[sidecar.istio.io/inject]"},
		},
		"DrainingAndPressure": {
			reason: "By default a toleration may not keep pods on cordoned, draining or pressured nodes.",
			mutate: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Tolerations = []v1alpha2.Toleration{
					{Key: "node.kubernetes.io/unschedulable", Operator: "Exists"},
					{Key: "node.kubernetes.io/memory-pressure", Operator: "Exists"},
					{Key: "node.kubernetes.io/disk-pressure", Operator: "Exists"},
					{Key: "node.kubernetes.io/pid-pressure", Operator: "Exists"},
					{Key: "node.kubernetes.io/not-ready", Operator: "Exists"},
				}
			},
			want: []string{"policy.tolerations.forbiddenKeys spec.pod.tolerations[0]", "policy.tolerations.forbiddenKeys spec.pod.tolerations[1]", "policy.tolerations.forbiddenKeys spec.pod.tolerations[2]", "policy.tolerations.forbiddenKeys spec.pod.tolerations[3]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range Check(tc.policy.Effective(), miniCluster(tc.mutate), nil) {
				got = append(got, r.Key+" "+r.Field.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrefusals: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEnforceQueue(t *testing.T) {
	p := v1beta1.Policy{Kueue: v1beta1.KueuePolicy{DefaultQueue: "batch", RequireQueue: true}}.Effective()
	mc := miniCluster(nil)
	if rs := Enforce(p, mc); len(rs) > 0 {
		t.Fatal(rs)
	}
	if got := mc.Spec.JobLabels["kueue.x-k8s.io/queue-name"]; got != "batch" {
		t.Errorf("the platform's default queue is %q on the MiniCluster, want batch", got)
	}
	if rs := Check(p, mc, nil); len(rs) > 0 {
		t.Errorf("a MiniCluster in the default queue is refused: %v", rs)
	}
	own := miniCluster(func(s *v1alpha2.MiniClusterSpec) {
		s.Pod.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "mine"}
	})
	_ = Enforce(p, own)
	if got := own.Spec.JobLabels["kueue.x-k8s.io/queue-name"]; got != "" {
		t.Errorf("a MiniCluster that names its queue got the default one too: %q", got)
	}
}

// TestSecrets holds the exemptions of policy.secrets: a pull secret only
// as a pull secret, the own certificate only by who made it.
func TestSecrets(t *testing.T) {
	burst := []string{v1alpha2.LabelBurstName + "=b", v1alpha2.LabelBurstNamespace + "=root-ns"}
	labels := func(kvs []string) map[string]string {
		l := map[string]string{}
		for _, kv := range kvs {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
		return l
	}
	cases := map[string]struct {
		reason  string
		mutate  func(mc *v1alpha2.MiniCluster)
		exempt  Exempt
		secrets map[string]Secret
		want    []string // refused fields
	}{
		"PullSecretPulls": {
			reason: "The platform's pull secret, named as an image pull secret, needs no decision.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].ImagePullSecret = "regcred" },
			exempt: Exempt{PullSecrets: []string{"regcred"}},
		},
		"PullSecretMounted": {
			reason: "The platform's pull secret mounted or read into the environment is the registry's credentials in the tenant's hands.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{"r": {SecretName: "regcred", Path: "/r"}}
				mc.Spec.Containers[0].Secrets = map[string]v1alpha2.Secret{"TOKEN": {Name: "regcred", Key: ".dockerconfigjson"}}
			},
			exempt:  Exempt{PullSecrets: []string{"regcred"}},
			secrets: map[string]Secret{"regcred": {}},
			want:    []string{"spec.containers[0].secrets[TOKEN].name"},
		},
		"OwnCertificateComposed": {
			reason: "A volume of the certificate Secret this MiniCluster composes itself is its own.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{"c": {SecretName: "flux-sample-curve-cert", Path: "/c"}} //nolint:gosec // G101: a Secret name, not a credential
			},
			exempt: Exempt{OwnCertificate: true},
		},
		"CertificateByNameOnly": {
			reason:  "A Secret merely named <name>-curve-cert, which this MiniCluster did not compose, is any Secret: another root's certificate.",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert" },
			secrets: map[string]Secret{"flux-sample-curve-cert": {}},
			want:    []string{"spec.flux.curveCertSecret"},
		},
		"CertificateControlled": {
			reason:  "The certificate Secret this composite controls is its own.",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert" },
			secrets: map[string]Secret{"flux-sample-curve-cert": {ControllerUID: selfUID}},
		},
		"BurstCopy": {
			reason:  "The burst controller's copy, annotated with the uid of the MiniCluster it was written for: this one.",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert" },
			secrets: map[string]Secret{"flux-sample-curve-cert": {Labels: labels(burst), ForClaimUID: claimUID}},
		},
		"CopyForAnotherMiniCluster": {
			reason: "A copy written for another MiniCluster of this name (the tenant deleted the burst MiniCluster and made its own, with the Burst's labels): not this one's.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert"
				mc.Labels = labels(burst)
			},
			secrets: map[string]Secret{"flux-sample-curve-cert": {Labels: labels(burst), ForClaimUID: "0b6c1e2a-0000-4000-8000-00000000dead"}},
			want:    []string{"spec.flux.curveCertSecret"},
		},
		"ForgedBurstLabels": {
			reason: "The Burst's labels on the MiniCluster and the Secret prove nothing: a tenant writes its MiniCluster's labels.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert"
				mc.Labels = labels(burst)
			},
			secrets: map[string]Secret{"flux-sample-curve-cert": {Labels: labels(burst)}},
			want:    []string{"spec.flux.curveCertSecret"},
		},
		"CopyElsewhere": {
			reason:  "A copy for this MiniCluster under another name exempts nothing.",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "root-curve-cert" },
			secrets: map[string]Secret{"root-curve-cert": {ForClaimUID: claimUID}},
			want:    []string{"spec.flux.curveCertSecret"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := miniCluster(nil)
			tc.mutate(mc)
			p := v1beta1.Policy{}.Effective()
			var got []string
			for _, r := range CheckCluster(p, mc, tc.exempt, Cluster{CompositeUID: selfUID, ClaimUID: claimUID, Secrets: tc.secrets}) {
				if r.Key != "policy.secrets" {
					t.Errorf("%s\nrefusal of key %s, want policy.secrets", tc.reason, r.Key)
				}
				got = append(got, r.Field.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrefused fields: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecide: what a run judges, given what it trusts.
func TestDecide(t *testing.T) {
	services := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Services = []v1alpha2.ServiceContainer{{MiniClusterContainer: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"}}}
	}
	privilegedServices := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Services = []v1alpha2.ServiceContainer{{MiniClusterContainer: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", SecurityContext: v1alpha2.SecurityContext{Privileged: true}}}}
	}
	allOwn := func(keys ...string) func(objs []render.Object) map[string]*unstructured.Unstructured {
		return func(objs []render.Object) map[string]*unstructured.Unstructured {
			out := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				if len(keys) > 0 && !contains(keys, o.Name) {
					continue
				}
				u := object("X", "tenant-a", objectName(o), selfUID)
				if o.Name == render.KeyJob {
					u.SetAnnotations(map[string]string{v1alpha2.AnnotationJobSpecHash: jobHash})
				}
				out[o.Name] = u
			}
			return out
		}
	}
	type want struct {
		lookups []string
		waiting bool
		kept    bool
		refused string // reason
	}
	cases := map[string]struct {
		reason   string
		opts     []func(*v1alpha2.MiniCluster)
		observed func([]render.Object) map[string]*unstructured.Unstructured
		hash     string
		answered bool
		want     want
	}{
		"New": {
			reason: "A new MiniCluster: everything is judged, so the Namespace and every name it composes are looked up, and nothing is decided until they are answered.",
			want:   want{lookups: []string{"namespace", "existing-curve-cert", "existing-entrypoint", "existing-job", "existing-service"}, waiting: true},
		},
		"NewAnswered": {
			reason:   "With the answers: composed.",
			answered: true,
			want:     want{lookups: []string{"namespace", "existing-curve-cert", "existing-entrypoint", "existing-job", "existing-service"}},
		},
		"Steady": {
			reason:   "Everything its own, the Job rendered from the spec it was admitted with: kept, nothing judged or looked up.",
			observed: allOwn(),
			hash:     jobHash,
			want:     want{kept: true},
		},
		"JobOfAnotherSpec": {
			reason:   "Its own Job, with another job-spec hash: judged again (the Namespace is looked up), not looked up by name (it is its own).",
			observed: allOwn(),
			hash:     "fedcba9876543210",
			want:     want{lookups: []string{"namespace"}, waiting: true},
		},
		"ServicesPodGone": {
			reason:   "The Job kept, the services Pod to be composed again: it is judged, and its name looked up.",
			opts:     []func(*v1alpha2.MiniCluster){services},
			observed: allOwn(render.KeyJob, render.KeyService, render.KeyEntrypoint, render.KeyCurveCert),
			hash:     jobHash,
			want:     want{kept: true, lookups: []string{"namespace", "existing-services-pod"}, waiting: true},
		},
		"PrivilegedServicesPodGone": {
			reason:   "A privileged services Pod composed again in an unlabelled namespace: refused by the default level, whatever the Job kept.",
			opts:     []func(*v1alpha2.MiniCluster){privilegedServices},
			observed: allOwn(render.KeyJob, render.KeyService, render.KeyEntrypoint, render.KeyCurveCert),
			hash:     jobHash,
			answered: true,
			want:     want{kept: true, lookups: []string{"namespace", "existing-services-pod"}, refused: ReasonPolicy},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t, tc.opts...)
			objs := render.Render(render.Input{Plan: p, CurveCert: []byte("cert")})
			observed := map[string]*unstructured.Unstructured{}
			if tc.observed != nil {
				observed = tc.observed(objs)
			}
			d := Decide(Input{
				Policy: v1beta1.Policy{}.Effective(), Self: v2Self, Plan: p, Objects: objs, JobSpecHash: tc.hash,
				Trust: Trusted(v2Self, observed),
				Answer: func(string) ([]*unstructured.Unstructured, bool) {
					if !tc.answered {
						return nil, false
					}
					return nil, true
				},
			})
			got := want{waiting: d.Waiting, kept: d.Kept}
			for _, l := range d.Lookups {
				got.lookups = append(got.lookups, l.Name)
			}
			if d.Refused != nil {
				got.refused = d.Refused.Reason
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpSorted); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestDecideClaimUID: the burst controller's copy is recognised by the uid
// of the tenant's MiniCluster object: the v2 composite's own, or, in the
// claim shape, the claim's, which is looked up.
func TestDecideClaimUID(t *testing.T) {
	burst := func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert" }
	secretFor := func(uid string) []*unstructured.Unstructured {
		s := object("Secret", "tenant-a", "flux-sample-curve-cert", "")
		s.SetAnnotations(map[string]string{v1alpha2.AnnotationBurstClaimUID: uid})
		return []*unstructured.Unstructured{s}
	}
	claim := object("MiniCluster", "tenant-a", "flux-sample", "")
	claim.SetUID(types.UID(claimUID))
	cases := map[string]struct {
		reason  string
		self    Self
		secret  []*unstructured.Unstructured
		lookups []string
		refused bool
	}{
		"V2": {
			reason:  "v2: the copy names the MiniCluster, which is the composite.",
			self:    v2Self,
			secret:  secretFor(selfUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "existing-entrypoint", "existing-job", "existing-service"},
		},
		"Claims": {
			reason:  "Claims: the copy names the claim; its uid is looked up.",
			self:    claimSelf,
			secret:  secretFor(claimUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "claim", "existing-entrypoint", "existing-job", "existing-service"},
		},
		"ClaimsCopyForTheComposite": {
			reason:  "Claims: a copy naming the composite's uid was not written for the claim.",
			self:    claimSelf,
			secret:  secretFor(selfUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "claim", "existing-entrypoint", "existing-job", "existing-service"},
			refused: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t, burst)
			objs := render.Render(render.Input{Plan: p})
			d := Decide(Input{
				Policy: v1beta1.Policy{}.Effective(), Self: tc.self, Plan: p, Objects: objs, Trust: Trusted(tc.self, nil),
				Answer: func(name string) ([]*unstructured.Unstructured, bool) {
					switch name {
					case "secret/flux-sample-curve-cert":
						return tc.secret, true
					case LookupClaim:
						return []*unstructured.Unstructured{claim}, true
					}
					return nil, true
				},
			})
			var lookups []string
			for _, l := range d.Lookups {
				lookups = append(lookups, l.Name)
			}
			if diff := cmp.Diff(tc.lookups, lookups, cmpSorted); diff != "" {
				t.Errorf("%s\nlookups: -want, +got:\n%s", tc.reason, diff)
			}
			if got := d.Refused != nil; got != tc.refused {
				t.Errorf("%s\nrefused %t, want %t: %+v", tc.reason, got, tc.refused, d.Refused)
			}
			if tc.refused && !strings.Contains(d.Refused.Message, "(policy.secrets)") {
				t.Errorf("%s\nrefusal %q, want policy.secrets", tc.reason, d.Refused.Message)
			}
		})
	}
}
