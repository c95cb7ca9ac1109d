package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestGang: the gang is the quorum the MiniCluster starts with, kept as it
// grows and never larger than its size.
func TestGang(t *testing.T) {
	sized := func(size, minSize, maxSize int32) func(*v1alpha2.MiniCluster) {
		return func(m *v1alpha2.MiniCluster) {
			m.Spec.Size, m.Spec.MinSize, m.Spec.MaxSize = &size, minSize, maxSize
		}
	}
	cases := map[string]struct {
		reason string
		mc     *v1alpha2.MiniCluster
		facts  Facts
		want   *Gang
	}{
		"Off": {
			reason: "Without Facts.Gang there is no gang.",
			mc:     mc(),
		},
		"Size": {
			reason: "A new gang is spec.size.",
			mc:     mc(sized(4, 0, 0)), facts: Facts{Gang: true},
			want: &Gang{PodGroup: "flux-sample", MinCount: 4},
		},
		"MinSize": {
			reason: "With minSize the gang is the quorum, minSize.",
			mc:     mc(sized(4, 2, 0)), facts: Facts{Gang: true},
			want: &Gang{PodGroup: "flux-sample", MinCount: 2},
		},
		"Grown": {
			reason: "A grown MiniCluster keeps the gang it started with.",
			mc:     mc(sized(6, 0, 8)), facts: Facts{Gang: true, GangMinCount: 4},
			want: &Gang{PodGroup: "flux-sample", MinCount: 4},
		},
		"Shrunk": {
			reason: "A shrunk MiniCluster's gang is no larger than its size.",
			mc:     mc(sized(2, 0, 8)), facts: Facts{Gang: true, GangMinCount: 4},
			want: &Gang{PodGroup: "flux-sample", MinCount: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(tc.mc, tc.facts)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.want, p.Gang); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
