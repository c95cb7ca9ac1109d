package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// TestBrokerResources holds the rule of docs/minicluster.md ("What Flux
// sees"): what a claim's runner was given becomes every broker's cores and
// GPUs.
func TestBrokerResources(t *testing.T) {
	q := intstr.FromString
	n := func(i int32) intstr.IntOrString { return intstr.FromInt32(i) }
	res := func(limits, requests v1alpha2.ContainerResource) func(*v1alpha2.MiniCluster) {
		return withRunner(func(c *v1alpha2.MiniClusterContainer) {
			c.Resources = v1alpha2.ContainerResources{Limits: limits, Requests: requests}
		})
	}
	cases := map[string]struct {
		reason string
		mc     *v1alpha2.MiniCluster
		want   entrypoint.Resources
	}{
		"NoResources": {
			reason: "A runner without CPU or GPUs offers the node's cores, as hwloc finds them.",
			mc:     mc(),
			want:   entrypoint.Resources{},
		},
		"MemoryOnly": {
			reason: "Memory says nothing about cores.",
			mc:     mc(res(v1alpha2.ContainerResource{"memory": q("1Gi")}, nil)),
			want:   entrypoint.Resources{},
		},
		"CPULimit": {
			reason: "A CPU limit of 2 is 2 cores.",
			mc:     mc(res(v1alpha2.ContainerResource{"cpu": n(2)}, nil)),
			want:   entrypoint.Resources{Cores: 2},
		},
		"CPULimitWinsOverRequest": {
			reason: "The limit is what the container may use; the request only what it is sure to get.",
			mc:     mc(res(v1alpha2.ContainerResource{"cpu": q("3")}, v1alpha2.ContainerResource{"cpu": q("1")})),
			want:   entrypoint.Resources{Cores: 3},
		},
		"CPURequestRoundedUp": {
			reason: "Without a limit the request counts, rounded up to whole cores: 1500m is 2.",
			mc:     mc(res(nil, v1alpha2.ContainerResource{"cpu": q("1500m")})),
			want:   entrypoint.Resources{Cores: 2},
		},
		"SmallRequest": {
			reason: "100m is still one core: Flux schedules whole cores.",
			mc:     mc(res(nil, v1alpha2.ContainerResource{"cpu": q("100m")})),
			want:   entrypoint.Resources{Cores: 1},
		},
		"ZeroLimit": {
			reason: "A CPU limit of 0 is no limit (Kubernetes sets no quota): the node's cores.",
			mc:     mc(res(v1alpha2.ContainerResource{"cpu": q("0")}, nil)),
			want:   entrypoint.Resources{},
		},
		"NvidiaGPUs": {
			reason: "nvidia.com/gpu: 2 is GPUs 0-1, on the node's cores when the runner has no CPU limit or request.",
			mc:     mc(res(v1alpha2.ContainerResource{"nvidia.com/gpu": n(2)}, nil)),
			want:   entrypoint.Resources{GPUs: 2},
		},
		"GPUsAndCores": {
			reason: "Cores and GPUs together.",
			mc:     mc(res(v1alpha2.ContainerResource{"cpu": q("4"), "amd.com/gpu": n(1)}, v1alpha2.ContainerResource{"amd.com/gpu": n(1)})),
			want:   entrypoint.Resources{Cores: 4, GPUs: 1},
		},
		"IntelGPUs": {
			reason: "gpu.intel.com/i915 and /xe count GPUs; GPU Aware Scheduling's millicores, memory.max and tiles are shares of one, not GPUs.",
			mc: mc(res(v1alpha2.ContainerResource{
				"gpu.intel.com/i915": n(1), "gpu.intel.com/xe": n(2),
				"gpu.intel.com/millicores": n(500), "gpu.intel.com/memory.max": q("1Gi"), "gpu.intel.com/tiles": n(2),
			}, nil)),
			want: entrypoint.Resources{GPUs: 3},
		},
		"OtherExtendedResources": {
			reason: "Other devices (a NIC, FPGAs) are not GPUs.",
			mc:     mc(res(v1alpha2.ContainerResource{"example.com/fpga": n(2), "rdma/hca": n(1)}, nil)),
			want:   entrypoint.Resources{},
		},
		"Node": {
			reason: "flux.resources: node keeps the node's view, whatever the runner was given.",
			mc: mc(res(v1alpha2.ContainerResource{"cpu": n(2), "nvidia.com/gpu": n(1)}, nil),
				withFlux(func(f *v1alpha2.FluxSpec) { f.Resources = v1alpha2.FluxResourcesNode })),
			want: entrypoint.Resources{FromNode: true},
		},
		"PodExplicit": {
			reason: "flux.resources: pod is the default spelled out.",
			mc: mc(res(v1alpha2.ContainerResource{"cpu": n(2)}, nil),
				withFlux(func(f *v1alpha2.FluxSpec) { f.Resources = v1alpha2.FluxResourcesPod })),
			want: entrypoint.Resources{Cores: 2},
		},
		"SidecarNotCounted": {
			reason: "Only the runner's resources count: a sidecar's CPU is not Flux's.",
			mc: mc(withContainers(runner(), sidecar("nginx", func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"cpu": n(8), "nvidia.com/gpu": n(1)}
			}))),
			want: entrypoint.Resources{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(tc.mc, Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("%s\nNew(): %v", tc.reason, errs.ToAggregate())
			}
			if diff := cmp.Diff(tc.want, p.Resources); diff != "" {
				t.Errorf("%s\nResources: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
