package entrypoint

// The claim the tests start from, and the Plan and runner script of it.

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

const (
	testName = "flux-sample"
	leadHost = "flux-sample-0"
	workHost = "flux-sample-1"
)

func ptrTo[T any](v T) *T { return &v }

// claim is a defaulted MiniCluster flux-sample of the given size whose only
// container runs Flux with command, after mutate changed it. Defaults are
// applied after mutate, as the API server would, so explicit values stay.
func claim(size int32, command string, mutate ...func(*v1alpha2.MiniCluster)) *v1alpha2.MiniCluster {
	mc := &v1alpha2.MiniCluster{}
	mc.Name = testName
	mc.Spec.Size = ptrTo(size)
	mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Name: "app", Command: command, RunFlux: true}}
	for _, m := range mutate {
		if m != nil {
			m(mc)
		}
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	return mc
}

// plan is the Plan internal/plan would pass for mc: quorum is minSize when set,
// and the runner's commands are prepared. (Bursting and maxSize > size also
// set a quorum there; BrokerOptions only sees the number, so minSize
// covers the script's side of it.)
func plan(t *testing.T, mc *v1alpha2.MiniCluster, p Paths) Plan {
	t.Helper()
	pl := Plan{
		Layout:   Layout{MountPath: mc.Spec.Flux.Container.MountPath, Fixed: p},
		Name:     mc.Name,
		Size:     mc.Spec.SizeValue(),
		Tasks:    mc.Spec.TasksValue(),
		Quorum:   mc.Spec.MinSize,
		LogLevel: mc.Spec.Flux.LogLevelValue(),
	}
	if i := mc.Spec.Runner(); i >= 0 {
		cmds, errs := Prepare(mc, i, pl)
		if len(errs) > 0 {
			t.Fatalf("Prepare(): %v", errs.ToAggregate())
		}
		pl.Commands = cmds
	}
	return pl
}

// runner is the runner script of mc's container 0 in the sandbox paths p.
func runner(t *testing.T, mc *v1alpha2.MiniCluster, p Paths) string {
	t.Helper()
	return Runner(mc, 0, plan(t, mc, p))
}
