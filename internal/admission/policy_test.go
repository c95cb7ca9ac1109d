package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func miniCluster(mutate func(s *v1alpha2.MiniClusterSpec)) *v1alpha2.MiniCluster {
	size := int32(2)
	mc := &v1alpha2.MiniCluster{}
	mc.Name, mc.Namespace = "flux-sample", "tenant-a"
	mc.Spec.Size = &size
	mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Image: "x", Command: "hostname", RunFlux: true}}
	if mutate != nil {
		mutate(&mc.Spec)
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	return mc
}

func TestEnforce(t *testing.T) {
	deadline := int64(600)
	hpc := v1alpha2.Toleration{Key: "hpc", Operator: "Exists", Effect: "NoSchedule"}
	cases := map[string]struct {
		reason  string
		policy  v1beta1.Policy
		mc      *v1alpha2.MiniCluster
		want    func(s *v1alpha2.MiniClusterSpec)
		refused []string
	}{
		"Nothing": {
			reason: "The default policy sets nothing on the pods.",
			mc:     miniCluster(nil),
		},
		"SetsEnforced": {
			reason: "Enforced tolerations and node labels join the claim's; a claim without a deadline gets the maximum.",
			policy: v1beta1.Policy{MaxDeadlineSeconds: 600, Tolerations: v1beta1.TolerationPolicy{Enforced: []v1alpha2.Toleration{hpc}},
				NodeSelector: v1beta1.NodeSelectorPolicy{Enforced: map[string]string{"pool": "hpc"}}},
			mc: miniCluster(func(s *v1alpha2.MiniClusterSpec) { s.Pod.NodeSelector = map[string]string{"zone": "a"} }),
			want: func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.Tolerations = []v1alpha2.Toleration{hpc}
				s.Pod.NodeSelector = map[string]string{"zone": "a", "pool": "hpc"}
				s.DeadlineSeconds = &deadline
			},
		},
		"SameValue": {
			reason: "A claim asking for the enforced value itself is fine, and a toleration is not added twice.",
			policy: v1beta1.Policy{Tolerations: v1beta1.TolerationPolicy{Enforced: []v1alpha2.Toleration{hpc}},
				NodeSelector: v1beta1.NodeSelectorPolicy{Enforced: map[string]string{"pool": "hpc"}}},
			mc: miniCluster(func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.NodeSelector = map[string]string{"pool": "hpc"}
				s.Pod.Tolerations = []v1alpha2.Toleration{hpc}
			}),
		},
		"Conflict": {
			reason: "Another value of an enforced label, in the selector or the affinity, is refused; the claim is left as it was.",
			policy: v1beta1.Policy{NodeSelector: v1beta1.NodeSelectorPolicy{Enforced: map[string]string{"pool": "hpc"}}},
			mc: miniCluster(func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.NodeSelector = map[string]string{"pool": "gpu"}
				s.Pod.NodeAffinity = map[string][]string{"pool": {"gpu"}}
			}),
			refused: []string{"spec.pod.nodeSelector[pool]", "spec.pod.nodeAffinity[pool]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := tc.mc.DeepCopy()
			if tc.want != nil {
				tc.want(&want.Spec)
			}
			rs := Enforce(tc.policy.Effective(), tc.mc)
			var got []string
			for _, r := range rs {
				got = append(got, r.Field.String())
			}
			if diff := cmp.Diff(tc.refused, got); diff != "" {
				t.Errorf("%s\nrefused fields: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(want, tc.mc); diff != "" {
				t.Errorf("%s\nMiniCluster: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNeeds(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy v1beta1.Policy
		mc     *v1alpha2.MiniCluster
		want   Lookups
	}{
		"HelloWorld": {
			reason: "The default ServiceAccount and no Secrets: nothing to look up.",
			mc:     miniCluster(nil),
		},
		"References": {
			reason: "Each Secret once, sorted; its own certificate and the platform's pull secrets are not looked up; the ServiceAccount by name.",
			mc: miniCluster(func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.ServiceAccountName = "runner"
				s.Containers[0].ImagePullSecret = "platform-pull"
				s.Containers[0].Secrets = map[string]v1alpha2.Secret{"A": {Name: "db", Key: "k"}, "B": {Name: "api", Key: "k"}}
				s.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{"c": {SecretName: "flux-sample-curve-cert", Path: "/c"}, "d": {SecretName: "db", Path: "/d"}} //nolint:gosec // G101: Secret names, not credentials
				s.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "b", Size: 1}}
			}),
			want: Lookups{ServiceAccount: "runner", Secrets: []string{"api", "db"}, Namespace: true},
		},
		"ByName": {
			reason: "Names the policy lists need no lookup; NodePorts allowed everywhere need no namespace.",
			policy: v1beta1.Policy{ServiceAccounts: v1beta1.ServiceAccountPolicy{Names: []string{"runner"}}, Secrets: v1beta1.SecretPolicy{Names: []string{"*"}},
				NodePorts: v1beta1.NodePortPolicy{Allowed: true}},
			mc: miniCluster(func(s *v1alpha2.MiniClusterSpec) {
				s.Pod.ServiceAccountName = "runner"
				s.Containers[0].Secrets = map[string]v1alpha2.Secret{"A": {Name: "db", Key: "k"}}
				s.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "b", Size: 1}}
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Needs(tc.policy.Effective(), tc.mc, Exempt{PullSecrets: []string{"platform-pull"}, OwnCertificate: true})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nNeeds: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPermissiveAllowsEverything: every check of Check passes under
// PermissivePolicy for a claim that asks for all of it.
func TestPermissiveAllowsEverything(t *testing.T) {
	mc := miniCluster(func(s *v1alpha2.MiniClusterSpec) {
		big := int32(100000)
		s.Size = &big
		s.Pod.AutomountServiceAccountToken = true
		s.Pod.RuntimeClassName, s.Pod.SchedulerName = "kata", "fluence"
		s.Pod.Tolerations = []v1alpha2.Toleration{{Operator: "Exists"}}
		s.Pod.Labels = map[string]string{"crossplane.io/x": "y", "kueue.x-k8s.io/priority-class": "high"}
		s.Pod.Annotations = map[string]string{"sidecar.istio.io/userVolume": "[]"}
		s.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{"v": {CSIDriver: "x.csi", Path: "/v"}}
		s.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "b", Size: 1}}
	})
	p := v1beta1.PermissivePolicy().Effective()
	if rs := append(Check(p, mc, nil), CheckSize(p, mc, 0)...); len(rs) > 0 {
		t.Errorf("Check refused under the permissive policy: %v", rs)
	}
	if rs := CheckCluster(p, mc, Exempt{}, Cluster{}); len(rs) > 0 {
		t.Errorf("CheckCluster refused under the permissive policy: %v", rs)
	}
	def := v1beta1.Policy{}.Effective()
	if rs := append(Check(def, mc, nil), CheckSize(def, mc, 0)...); len(rs) != 9 {
		t.Errorf("the default policy refused %d of the 9 things asked: %v", len(rs), rs)
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
