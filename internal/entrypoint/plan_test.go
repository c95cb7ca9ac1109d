package entrypoint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestPlanValues checks that the values internal/plan decides reach the
// commands as it decided them: a spec field left unset is not defaulted a
// second time here.
func TestPlanValues(t *testing.T) {
	undefaulted := func() *v1alpha2.MiniCluster {
		mc := &v1alpha2.MiniCluster{}
		mc.Name = testName
		mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Name: "app", Command: "echo hi", RunFlux: true}}
		return mc
	}
	cases := map[string]struct {
		reason    string
		mc        *v1alpha2.MiniCluster
		plan      Plan
		wantFlags []string
		wantOpts  []string
	}{
		"PlanTasksAndLevel": {
			reason:    "Tasks and log level come from the Plan, not from the spec's (unset) fields.",
			mc:        undefaulted(),
			plan:      Plan{Layout: Layout{MountPath: "/mnt/flux"}, Size: 2, Tasks: 3, LogLevel: 2},
			wantFlags: []string{"-N", "2", "-n3"},
			wantOpts:  bo{level: 2}.args("/mnt/flux"),
		},
		"PlanZero": {
			reason:    "Zero tasks and level 0 are values, not holes to fill.",
			mc:        undefaulted(),
			plan:      Plan{Layout: Layout{MountPath: "/mnt/flux"}, Size: 4},
			wantFlags: []string{"-N", "4"},
			wantOpts:  bo{level: 0}.args("/mnt/flux"),
		},
		"PlanMountPath": {
			reason:    "The paths follow the Plan's layout, not the spec's mount path.",
			mc:        claim(2, "echo hi", func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.MountPath = "/elsewhere" }),
			plan:      Plan{Layout: Layout{MountPath: "/opt/flux"}, Size: 2, Tasks: 2, LogLevel: 6},
			wantFlags: []string{"-N", "2", "-n2"},
			wantOpts:  std().args("/opt/flux"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmds, errs := Prepare(tc.mc, 0, tc.plan)
			if len(errs) > 0 {
				t.Fatalf("%s\nPrepare(): %v", tc.reason, errs.ToAggregate())
			}
			if diff := cmp.Diff(tc.wantFlags, cmds.Flags); diff != "" {
				t.Errorf("%s\nflags: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantOpts, BrokerOptions(tc.mc, tc.plan)); diff != "" {
				t.Errorf("%s\nbroker options: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
