package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// containersInvalid: containers, services and the Flux init container
// (checkContainers): names, environment, images, ports and resources.
func containersInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"NonRunnerWithoutName": {
			reason: "Only the runner's name is derived (from the MiniCluster's).",
			args:   mc(withSidecar("")),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "a container that does not run Flux needs a name"},
		},
		"DuplicateContainerNames": {
			reason: "Containers of a pod need distinct names.",
			args:   mc(withSidecar("app"), withSidecar("app")),
			want:   invalid{fields: []string{"spec.containers[2].name"}, msg: "already the name of spec.containers[1]"},
		},
		"DuplicateContainerNameBeforeRunner": {
			reason: "A duplicate is found whatever the order of the containers.",
			args:   mc(withContainers(sidecar("app"), sidecar("app"), runner())),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "already the name of spec.containers[0]"},
		},
		"SidecarNamedLikeMiniCluster": {
			reason: "The runner's container takes the MiniCluster's name, so a sidecar cannot.",
			args:   mc(withSidecar("flux-sample")),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "the Flux runner's container, which is named after the MiniCluster"},
		},
		"SidecarNamedLikeInitContainer": {
			reason: "The init container takes flux.container.name, so a sidecar cannot.",
			args:   mc(withSidecar("flux-view")),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "the Flux init container (spec.flux.container.name)"},
		},
		"NoWrapEntrypointOnRunner": {
			reason: "The runner always runs the generated entrypoint.",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.NoWrapEntrypoint = true })),
			want:   invalid{fields: []string{"spec.containers[0].noWrapEntrypoint"}, msg: "always runs the generated entrypoint"},
		},
		"BadEnvVarName": {
			reason: "Kubernetes rejects environment variables that start with a digit.",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.Environment = map[string]string{"OK": "1", "1FOO": "x"} })),
			want:   invalid{fields: []string{"spec.containers[0].environment[1FOO]"}, msg: "must not start with a digit"},
		},
		"SecretBadEnvName": {
			reason: "A Secret's variable name is an environment variable name too.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Secrets = map[string]v1alpha2.Secret{"9LIVES": {Name: "s", Key: "k"}}
			})),
			want: invalid{fields: []string{"spec.containers[0].secrets[9LIVES]"}, msg: "must not start with a digit"},
		},
		"BadResourceQuantity": {
			reason: "Resources are quantities.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"cpu": intstr.FromInt32(2), "memory": intstr.FromString("lots")}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[memory]"}, msg: "must be a non-negative quantity such as 4, 500m or 2Gi"},
		},
		"BadResourceRequest": {
			reason: "Requests are checked like limits.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Requests = v1alpha2.ContainerResource{"cpu": intstr.FromString("two")}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.requests[cpu]"}, msg: "must be a non-negative quantity"},
		},
		"NegativeResource": {
			reason: "Kubernetes rejects negative requests and limits.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Requests = v1alpha2.ContainerResource{"cpu": intstr.FromInt32(-2)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.requests[cpu]"}, msg: "must be a non-negative quantity"},
		},
		"DuplicateServiceNames": {
			reason: "Services share one pod.",
			args:   mc(withServices(sidecar("db"), sidecar("db"))),
			want:   invalid{fields: []string{"spec.services[1].name"}, msg: "containers of a pod need distinct names"},
		},
		"FluxContainerNamedLikeMiniCluster": {
			reason: "The runner's container has the MiniCluster's name, so the init container cannot.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.Name = "flux-sample" })),
			want:   invalid{fields: []string{"spec.flux.container.name"}, msg: "choose another name for the init container"},
		},
		"FluxContainerBadResources": {
			reason: "The init container's resources are quantities.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.Container.Resources.Limits = v1alpha2.ContainerResource{"memory": intstr.FromString("1 GB")}
			})),
			want: invalid{fields: []string{"spec.flux.container.resources.limits[memory]"}, msg: "must be a non-negative quantity"},
		},
		"SecretKeyRefBadNameAndKey": {
			reason: "secretKeyRef names one of its Secret's keys (the Secret's name is the schema's).",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Secrets = map[string]v1alpha2.Secret{"TOKEN": {Name: "My Secret", Key: "a/b"}}
			})),
			want: invalid{fields: []string{"spec.containers[0].secrets[TOKEN].key"}, msg: "must be a key of a Secret"},
		},
		"UnknownResourceName": {
			reason: "A resource name without a domain must be one Kubernetes knows.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"gpu": intstr.FromInt32(1)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[gpu]"}, msg: "supported values"},
		},
		"RequestAboveLimit": {
			reason: "Kubernetes refuses a request above its limit.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"cpu": intstr.FromInt32(1)}
				c.Resources.Requests = v1alpha2.ContainerResource{"cpu": intstr.FromInt32(2)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.requests[cpu]"}, msg: "less than or equal to the cpu limit"},
		},
		"FractionalGPU": {
			reason: "Extended resources are whole numbers.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"nvidia.com/gpu": intstr.FromString("500m")}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[nvidia.com/gpu]"}, msg: "must be a whole number"},
		},
		"HugePagesAlone": {
			reason: "Kubernetes refuses huge pages without a cpu or memory request or limit (found by the property test).",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"hugepages-2Mi": intstr.FromString("2Gi")}
				c.Resources.Requests = v1alpha2.ContainerResource{"hugepages-2Mi": intstr.FromString("2Gi")}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources"}, msg: "huge pages need a cpu or memory request or limit"},
		},
		"HugePagesNotAPageMultiple": {
			reason: "Huge pages come in whole pages (found by the property test).",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"hugepages-2Mi": intstr.FromString("3Mi"), "memory": intstr.FromString("1Gi")}
				c.Resources.Requests = v1alpha2.ContainerResource{"hugepages-2Mi": intstr.FromString("3Mi")}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[hugepages-2Mi]", "spec.containers[0].resources.requests[hugepages-2Mi]"}, msg: "whole multiple of the page size 2Mi"},
		},
		"ExtendedResourcePrefixTooLong": {
			reason: "Kubernetes also needs requests.<name> to be a qualified name, so the prefix has 9 bytes less.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				name := strings.Repeat("a", 246) + ".com/gpu"
				c.Resources.Limits = v1alpha2.ContainerResource{name: intstr.FromInt32(1)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[" + strings.Repeat("a", 246) + ".com/gpu]"}, msg: "must be a resource name such as cpu"},
		},
		"ExtendedResourceQuotaName": {
			reason: "requests.<name> names a quota, not an extended resource.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Limits = v1alpha2.ContainerResource{"requests.example.com/gpu": intstr.FromInt32(1)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.limits[requests.example.com/gpu]"}, msg: "must not start with requests."},
		},
		"ImageUppercase": {
			reason: "The kubelet refuses an image whose repository is not lowercase (InvalidImageName).",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.Image = "Rockylinux:9" })),
			want:   invalid{fields: []string{"spec.containers[0].image"}, msg: "is not an image reference the kubelet can pull"},
		},
		"ViewImageShortDigest": {
			reason: "A sha256 digest has 64 hexadecimal digits.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.Container.Image = "ghcr.io/converged-computing/flux-view-ubuntu@sha256:" + strings.Repeat("a", 40)
			})),
			want: invalid{fields: []string{"spec.flux.container.image"}, msg: "the digest must be sha256:"},
		},
		"SidecarOnBrokerPort": {
			reason: "A sidecar listening on the broker's port shares the pod's network with the broker.",
			args:   mc(withSidecar("web", ports(8050))),
			want:   invalid{fields: []string{"spec.containers[1].ports[0]"}, msg: "is the Flux broker's port (8050)"},
		},
		"PortOfTwoContainers": {
			reason: "Two containers of one pod cannot listen on one port.",
			args:   mc(withSidecar("a", ports(80)), withSidecar("b", ports(443, 80))),
			want:   invalid{fields: []string{"spec.containers[2].ports[1]"}, msg: "is also a port of spec.containers[1]"},
		},
		"FluxContainerNamedLikeSystemVolume": {
			reason: "The init container's name is also the view volume's, which must not clash with the MiniCluster's own volumes.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.Name = "spack-software" })),
			want:   invalid{fields: []string{"spec.flux.container.name"}, msg: "already has a volume of this name"},
		},
		"GPURequestWithoutLimit": {
			reason: "Extended resources need a limit equal to the request.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Resources.Requests = v1alpha2.ContainerResource{"nvidia.com/gpu": intstr.FromInt32(1)}
			})),
			want: invalid{fields: []string{"spec.containers[0].resources.requests[nvidia.com/gpu]"}, msg: "so set limits[nvidia.com/gpu] to the same value"},
		},
	}
}

// containersValid: containers in every mode, sidecars and services.
func containersValid() map[string]validCase {
	return map[string]validCase{
		"SidecarWithPorts": {
			reason: "A sidecar with ports, its own volume and a noWrapEntrypoint one.",
			args: mc(
				withSidecar("nginx", ports(80, 443)),
				withSidecar("metrics", ports(9090), func(c *v1alpha2.MiniClusterContainer) { c.NoWrapEntrypoint = true }),
			),
		},
		"RunnerNotFirst": {
			reason: "The runner may be any container.",
			args:   mc(withContainers(sidecar("app"), runner())),
		},
		"RunnerNameIsIgnored": {
			reason: "The runner's container is named after the MiniCluster, so its declared name may equal a sidecar's or the MiniCluster's.",
			args: mc(withContainers(
				runner(func(c *v1alpha2.MiniClusterContainer) { c.Name = "app" }),
				sidecar("app"),
			)),
		},
		"RunnerNamedLikeMiniCluster": {
			reason: "Upstream examples name the runner like the MiniCluster.",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.Name = "flux-sample" })),
		},
		"Modes": {
			reason: "batch with batchRaw, launcher, and commands.script without command are valid modes.",
			args: mc(withContainers(
				runner(func(c *v1alpha2.MiniClusterContainer) {
					c.Batch = true
					c.BatchRaw = true
					c.Command = "echo one\necho two"
				}),
				sidecar("launch", func(c *v1alpha2.MiniClusterContainer) { c.Launcher = true }),
				sidecar("script", func(c *v1alpha2.MiniClusterContainer) { c.Commands.Script = "#!/bin/sh\nhostname\n" }),
			)),
		},
		"EnvironmentSecretsResources": {
			reason: "Environment, Secret variables and quantities as strings or integers.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Environment = map[string]string{"OMP_NUM_THREADS": "4", "my.env-name": "x"}
				c.Secrets = map[string]v1alpha2.Secret{"TOKEN": {Name: "api", Key: "token"}}
				c.Resources = v1alpha2.ContainerResources{
					Limits:   v1alpha2.ContainerResource{"cpu": intstr.FromInt32(4), "memory": intstr.FromString("2Gi"), "nvidia.com/gpu": intstr.FromInt32(1)},
					Requests: v1alpha2.ContainerResource{"cpu": intstr.FromString("500m")},
				}
				c.ImagePullPolicy = "Always"
			})),
		},
		"Services": {
			reason: "Services with ports, volumes and the hooks that apply to them.",
			args: mc(withServices(
				sidecar("db", ports(5432), func(c *v1alpha2.MiniClusterContainer) {
					c.Image = "postgres:16"
					c.Volumes = map[string]v1alpha2.ContainerVolume{"pg": {ClaimName: "pg", Path: "/var/lib/postgresql"}}
					c.Commands = v1alpha2.Commands{Init: "true", Post: "true", ServicePre: "true"}
				}),
				sidecar("web", ports(80)),
			)),
		},
		"ServiceNamedLikeMiniCluster": {
			reason: "Services run in their own pod, next to no runner container.",
			args:   mc(withServices(sidecar("flux-sample"))),
		},
	}
}

// TestImageReference: the images github.com/distribution/reference (the
// kubelet's parser) accepts pass, and those it refuses do not.
func TestImageReference(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	cases := map[string]struct {
		reason string
		image  string
		ok     bool
	}{
		"Short":          {"A Docker Hub name with a tag.", "rockylinux:9", true},
		"Registry":       {"A registry, path and tag.", "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", true},
		"UppercaseHost":  {"The registry's host may have capitals.", "GHCR.io/x/y:1", true},
		"PortSeparators": {"A registry port and every separator.", "localhost:5000/a__b/c--d:v1.0_x", true},
		"IPv6Registry":   {"An IPv6 registry.", "[::1]:5000/x", true},
		"Digest":         {"A digest.", "x@" + digest, true},
		"TagAndDigest":   {"A tag and a digest.", "x:1@" + digest, true},
		"Uppercase":      {"The repository is lowercase.", "Rockylinux:9", false},
		"UppercasePath":  {"Every path component is lowercase.", "GHCR.io/x/Y:1", false},
		"Space":          {"No spaces.", "rocky linux:9", false},
		"DoubleColon":    {"One tag.", "rockylinux::9", false},
		"DoubleDot":      {"Separators are ., _, __ or dashes.", "a..b", false},
		"LeadingDash":    {"A component starts with a letter or digit.", "a/-b", false},
		"ShortDigest":    {"A digest has its full length.", "rockylinux@sha256:abc", false},
		"UpperDigest":    {"A digest is lowercase.", "x@sha256:" + strings.Repeat("0123456789ABCDEF", 4), false},
		"UnknownDigest":  {"Only known digest algorithms.", "x@md5:0123456789abcdef0123456789abcdef", false},
		"LongName":       {"A name has at most 255 characters.", strings.Repeat("a", 256), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := imageReferenceError(tc.image) == ""; got != tc.ok {
				t.Errorf("%s\nimageReferenceError(%q) accepts: %v, want %v", tc.reason, tc.image, got, tc.ok)
			}
		})
	}
}
