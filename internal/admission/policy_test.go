package admission

import (
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
