package admission

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

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
