package entrypoint_test

// What every broker offers Flux, from the claim to flux R encode's argv:
// internal/plan decides the resources (the rule of docs/minicluster.md),
// the runner script encodes them, run under bash with a fake flux.

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

func TestRunnerEncodesResources(t *testing.T) {
	t.Parallel()
	q := intstr.FromString
	n := func(i int32) intstr.IntOrString { return intstr.FromInt32(i) }
	const hosts = "--hosts=flux-sample-[0-3]"
	encode := func(args ...string) []string { return append([]string{"R", "encode", hosts}, args...) }
	nodeCount := [][]string{{"R", "encode", "--local"}, {"R", "decode", "--count=core"}}
	cases := map[string]struct {
		reason   string
		limits   v1alpha2.ContainerResource
		requests v1alpha2.ContainerResource
		flux     string // spec.flux.resources
		cores    string // the node's, as flux R decode counts them; 4 when ""
		want     [][]string
		wantExit int
	}{
		"NoResources": {
			reason: "A runner without CPU or GPUs offers the node's cores, as hwloc finds them.",
			want:   [][]string{encode("--local")},
		},
		"CPULimit": {
			reason: "cpu: 2 is cores 0-1 on every broker.",
			limits: v1alpha2.ContainerResource{"cpu": n(2)},
			want:   [][]string{encode("--cores=0-1")},
		},
		"CPULimitOne": {
			reason: "cpu: 1 is core 0: flux's idset refuses 0-0.",
			limits: v1alpha2.ContainerResource{"cpu": n(1)},
			want:   [][]string{encode("--cores=0")},
		},
		"CPURequest": {
			reason:   "A request of 1500m without a limit is rounded up to cores 0-1.",
			requests: v1alpha2.ContainerResource{"cpu": q("1500m")},
			want:     [][]string{encode("--cores=0-1")},
		},
		"NvidiaGPUs": {
			reason: "nvidia.com/gpu: 2 is GPUs 0-1, on the node's cores (R encode takes --local or --cores, not both).",
			limits: v1alpha2.ContainerResource{"nvidia.com/gpu": n(2)},
			want:   append(nodeCount, encode("--cores=0-3", "--gpus=0-1")),
		},
		"GPUsOnOneCoreNode": {
			reason: "A node of one core is core 0.",
			limits: v1alpha2.ContainerResource{"nvidia.com/gpu": n(1)},
			cores:  "1",
			want:   append(nodeCount, encode("--cores=0", "--gpus=0")),
		},
		"GPUsNodeNotCounted": {
			reason:   "A node whose cores cannot be counted fails the MiniCluster, with the fix, rather than give Flux a guess.",
			limits:   v1alpha2.ContainerResource{"nvidia.com/gpu": n(1)},
			cores:    "none",
			want:     nodeCount,
			wantExit: entrypoint.JobFailedExitCode,
		},
		"CoresAndGPUs": {
			reason: "cpu 4 and amd.com/gpu 1: cores 0-3 and GPU 0.",
			limits: v1alpha2.ContainerResource{"cpu": n(4), "amd.com/gpu": n(1)},
			want:   [][]string{encode("--cores=0-3", "--gpus=0")},
		},
		"Node": {
			reason: "flux.resources: node keeps hwloc's view of the node, whatever the runner was given.",
			limits: v1alpha2.ContainerResource{"cpu": n(2), "nvidia.com/gpu": n(2)},
			flux:   v1alpha2.FluxResourcesNode,
			want:   [][]string{encode("--local")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mc := &v1alpha2.MiniCluster{}
			mc.Name = "flux-sample"
			mc.Namespace = "default"
			mc.Spec.Size = new(int32(4))
			mc.Spec.Logging.Quiet = true
			mc.Spec.Flux.Resources = tc.flux
			mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{
				Command:   "echo hello world",
				Resources: v1alpha2.ContainerResources{Limits: tc.limits, Requests: tc.requests},
			}}
			v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
			p, errs := plan.New(mc.DeepCopy(), plan.Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("%s\nplan.New(): %v", tc.reason, errs.ToAggregate())
			}
			env := map[string]string{"FAKE_FLUX_CORES": tc.cores}
			if tc.cores == "" {
				env["FAKE_FLUX_CORES"] = "4"
			}
			for _, host := range []string{"flux-sample-0", "flux-sample-1"} {
				r := entrypoint.RunRunner(t, mc.DeepCopy(), p.Resources, host, env)
				if r.Exit != tc.wantExit {
					t.Errorf("%s\n%s: exit code %d, want %d\nstderr:\n%s", tc.reason, host, r.Exit, tc.wantExit, r.Stderr)
				}
				var got [][]string
				for _, c := range r.Calls {
					if len(c) > 0 && c[0] == "R" {
						got = append(got, c)
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s\n%s: flux R calls: -want, +got:\n%s", tc.reason, host, diff)
				}
			}
		})
	}
}
