package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
)

// mc is the hello-world v1alpha2.MiniCluster (see raw) after v1alpha2.SetDefaults, then
// changed by opts. Options run after defaulting, so a case can also set
// what v1alpha2.SetDefaults would have filled in: that is Validate called on its own.
func mc(opts ...func(*v1alpha2.MiniCluster)) *v1alpha2.MiniCluster {
	m := raw()
	v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{})
	for _, o := range opts {
		o(m)
	}
	return m
}

// burst is a valid burst cluster: burst-0 joins the root flux-sample (size 4)
// through its lead broker's NodePort, and is one of the root's clusters.
func burst(opts ...func(*v1alpha2.MiniCluster)) *v1alpha2.MiniCluster {
	m := mc(func(m *v1alpha2.MiniCluster) {
		m.Name = "burst-0"
		m.Spec.Network.HeadlessName = "burst-0"
		m.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert"
		m.Spec.Flux.Bursting = v1alpha2.Bursting{
			LeadBroker: &v1alpha2.FluxBroker{Address: "34.123.45.6", Name: "flux-sample", Size: 4, Port: 30093},
			Clusters:   []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}},
		}
	})
	for _, o := range opts {
		o(m)
	}
	return m
}

// runner is the hello-world Flux runner container, defaulted.
func runner(opts ...func(*v1alpha2.MiniClusterContainer)) v1alpha2.MiniClusterContainer {
	c := v1alpha2.MiniClusterContainer{Image: "rockylinux:9", Command: "echo hello world", RunFlux: true, Logs: "/tmp/fluxout"}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// sidecar is a named container that does not run Flux.
func sidecar(name string, opts ...func(*v1alpha2.MiniClusterContainer)) v1alpha2.MiniClusterContainer {
	c := v1alpha2.MiniClusterContainer{Name: name, Image: "nginx", Logs: "/tmp/fluxout"}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func withName(name string) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { m.Name = name }
}

func withSpec(f func(*v1alpha2.MiniClusterSpec)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(&m.Spec) }
}

func withContainers(cs ...v1alpha2.MiniClusterContainer) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { m.Spec.Containers = cs }
}

func withSidecar(name string, opts ...func(*v1alpha2.MiniClusterContainer)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { m.Spec.Containers = append(m.Spec.Containers, sidecar(name, opts...)) }
}

func withServices(cs ...v1alpha2.MiniClusterContainer) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) {
		m.Spec.Services = nil
		for _, c := range cs {
			m.Spec.Services = append(m.Spec.Services, v1alpha2.ServiceContainer{MiniClusterContainer: c})
		}
	}
}

// withRunner changes the runner (container 0).
func withRunner(f func(*v1alpha2.MiniClusterContainer)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(&m.Spec.Containers[0]) }
}

// withVolume adds a volume to the runner.
func withVolume(name string, v v1alpha2.ContainerVolume) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) {
		m.Spec.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{name: v}
	}
}

func withFlux(f func(*v1alpha2.FluxSpec)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(&m.Spec.Flux) }
}

func withBursting(f func(*v1alpha2.Bursting)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(&m.Spec.Flux.Bursting) }
}

func withLeadBroker(f func(*v1alpha2.FluxBroker)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(m.Spec.Flux.Bursting.LeadBroker) }
}

func withPod(f func(*v1alpha2.PodSpec)) func(*v1alpha2.MiniCluster) {
	return func(m *v1alpha2.MiniCluster) { f(&m.Spec.Pod) }
}

func ports(ps ...int32) func(*v1alpha2.MiniClusterContainer) {
	return func(c *v1alpha2.MiniClusterContainer) { c.Ports = ps }
}

// invalid is what Validate must say about a bad v1alpha2.MiniCluster: the Field of
// every error, in order, and a piece of the text that tells the user the fix.
type invalid struct {
	fields []string
	msg    string
}

type invalidCase struct {
	reason string
	args   *v1alpha2.MiniCluster
	want   invalid
}

func invalidCases() map[string]invalidCase {
	return map[string]invalidCase{
		// Sizes and the Job.

		// Containers.
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
		"SidecarWithPortsNamedLikeNumber": {
			reason: "A sidecar with ports gets a Service named after it, and Service names start with a letter.",
			args:   mc(withSidecar("8app", ports(80))),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "names the Service of this container's ports"},
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

		// Services.
		"DuplicateServiceNames": {
			reason: "Services share one pod.",
			args:   mc(withServices(sidecar("db"), sidecar("db"))),
			want:   invalid{fields: []string{"spec.services[1].name"}, msg: "containers of a pod need distinct names"},
		},

		// Volumes.
		"ItemPathDotDot": {
			reason: "An item must stay inside its volume.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/etc/app", Items: map[string]string{"key": "../../etc/passwd"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[key]"}, msg: "without '..'"},
		},
		"ItemPathAbsolute": {
			reason: "An item path is relative to the volume.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{SecretName: "cfg", Path: "/etc/app", Items: map[string]string{"key": "/etc/passwd"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[key]"}, msg: "must be a relative path inside the volume"},
		},
		"SameVolumeNameDifferentSources": {
			reason: "A pod has one volume per name.",
			args: mc(
				withVolume("data", v1alpha2.ContainerVolume{ClaimName: "data", Path: "/data"}),
				withSidecar("app", func(c *v1alpha2.MiniClusterContainer) {
					c.Volumes = map[string]v1alpha2.ContainerVolume{"data": {HostPath: "/mnt/data", Path: "/data"}}
				}),
			),
			want: invalid{fields: []string{"spec.containers[1].volumes[data]"}, msg: "give them different names or the same source"},
		},

		// Flux.
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
		"FluxEnvironmentNotShellName": {
			reason: "flux.environment is exported by a shell script, where A-B is no variable.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"GOOD_ONE": "1", "A-B": "x"} })),
			want:   invalid{fields: []string{"spec.flux.environment[A-B]"}, msg: "must be a shell variable name"},
		},

		// v1alpha2.Bursting: root.
		"DuplicateBurstClusters": {
			reason: "Two clusters with one name would list the same hostnames twice.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[1].name"}, msg: "each cluster needs its own name"},
		},
		"BurstClusterNamedLikeMiniCluster": {
			reason: "A cluster named like the root would repeat the root's hostnames.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "flux-sample", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[0].name"}, msg: "already the root MiniCluster's name"},
		},

		// v1alpha2.Bursting: burst.
		"BurstNotAmongClusters": {
			reason: "A burst's own hostnames must be in the shared host list.",
			args: burst(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-1", Size: 4}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "a burst cluster must list the root's clusters, itself among them"},
		},
		"BurstClusterNamedLikeRoot": {
			reason: "In a burst, the root is leadBroker.name: a cluster named so would repeat its hostnames.",
			args: burst(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = append(b.Clusters, v1alpha2.BurstedCluster{Name: "flux-sample", Size: 4})
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[1].name"}, msg: "already the root MiniCluster's name"},
		},
		"BadLeadBrokerAddress": {
			reason: "The address lands in broker.toml's connect URI.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Address = "not an address!" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.address"}, msg: "must be an IP address or a DNS name"},
		},
		"BadLeadBrokerName": {
			reason: "The root's name is the prefix of its hostnames.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Name = "Flux_Sample" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.name"}, msg: "must be the root MiniCluster's name"},
		},

		// Pod.
		"BadLabelKey": {
			reason: "Label keys are qualified names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"bad key": "v"} })),
			want:   invalid{fields: []string{"spec.pod.labels[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"BadLabelValue": {
			reason: "Label values are restricted too.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"tier": "not ok!"} })),
			want:   invalid{fields: []string{"spec.pod.labels[tier]"}, msg: "a valid label must be an empty string or consist of alphanumeric characters"},
		},
		"BadNodeSelector": {
			reason: "nodeSelector entries are labels.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeSelector = map[string]string{"zone": "us central"} })),
			want:   invalid{fields: []string{"spec.pod.nodeSelector[zone]"}, msg: "a valid label"},
		},
		"NodeAffinityNoValues": {
			reason: "An In requirement without values matches no node.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeAffinity = map[string][]string{"topology.kubernetes.io/zone": nil} })),
			want:   invalid{fields: []string{"spec.pod.nodeAffinity[topology.kubernetes.io/zone]"}, msg: "list at least one value"},
		},
		"NodeAffinityBadKey": {
			reason: "nodeAffinity keys are label keys.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeAffinity = map[string][]string{"bad key": {"a"}} })),
			want:   invalid{fields: []string{"spec.pod.nodeAffinity[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"TolerationExistsWithValue": {
			reason: "Exists matches any value, so a value is a mistake.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Tolerations = []v1alpha2.Toleration{{Key: "gpu", Operator: "Exists", Value: "yes"}}
			})),
			want: invalid{fields: []string{"spec.pod.tolerations[0].value"}, msg: "must be empty when operator is Exists"},
		},
		"TolerationNoKeyEqual": {
			reason: "Without a key, a toleration must tolerate everything (Exists).",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Tolerations = []v1alpha2.Toleration{{Operator: "Equal", Value: "x"}} })),
			want:   invalid{fields: []string{"spec.pod.tolerations[0].operator"}, msg: "must be Exists when key is empty"},
		},
		"TolerationNoKeyNoOperator": {
			reason: "The operator defaults to Equal, which needs a key.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Tolerations = []v1alpha2.Toleration{{Key: "ok", Operator: "Exists"}, {Effect: "NoSchedule"}}
			})),
			want: invalid{fields: []string{"spec.pod.tolerations[1].operator"}, msg: "must be Exists when key is empty"},
		},

		// Names.
		"NameTooLongForHostnames": {
			reason: "The last pod's hostname <name>-<maxSize-1> is a DNS label of at most 63 characters.",
			args:   mc(withName(strings.Repeat("a", 62))),
			want:   invalid{fields: []string{"metadata.name"}, msg: "would have more than 63 characters; use a name of at most 61 characters"},
		},
		"NameTooLongForMaxSize": {
			reason: "The hostnames are sized for maxSize, not size.",
			args: mc(withName(strings.Repeat("a", 60)), withSpec(func(s *v1alpha2.MiniClusterSpec) {
				s.MaxSize = 1000
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "-999\", would have more than 63 characters"},
		},
		"EmptyName": {
			reason: "Everything is named after the MiniCluster.",
			args:   mc(withName("")),
			want:   invalid{fields: []string{"metadata.name"}, msg: "a MiniCluster needs a name"},
		},
		"UppercaseName": {
			reason: "The name is a hostname prefix, so a lowercase DNS label.",
			args:   mc(withName("Flux-Sample")),
			want:   invalid{fields: []string{"metadata.name"}, msg: "lowercase RFC 1123 label"},
		},
		"HeadlessNameStartsWithDigit": {
			reason: "Service names must start with a letter, which a pod subdomain need not.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "1flux" })),
			want:   invalid{fields: []string{"spec.network.headlessName"}, msg: "start with an alphabetic character"},
		},
		"NameStartsWithDigit": {
			reason: "The headless Service defaults to the MiniCluster's name, so the error says where the value came from.",
			args: func() *v1alpha2.MiniCluster {
				m := raw(withName("1sample"))
				v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{})
				return m
			}(),
			want: invalid{fields: []string{"metadata.name"}, msg: "Service names must start with a letter"},
		},
		// What the v1alpha2.MiniCluster composes, checked with Kubernetes' rules.
		"LeadBrokerServiceNameTooLong": {
			reason: "A burst root composes <name>-lead-broker, a Service name of at most 63 characters.",
			args: mc(withName(strings.Repeat("a", 52)), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "lead broker's NodePort Service"},
		},
		"ServicesPodHostnameTooLong": {
			reason: "The services Pod's hostname is <name>-services, a DNS label.",
			args:   mc(withName(strings.Repeat("a", 56)), withServices(sidecar("db"))),
			want:   invalid{fields: []string{"metadata.name"}, msg: "is too long for spec.services"},
		},
		"SidecarServiceNamedLikeHeadless": {
			reason: "A sidecar with ports gets a Service named after it, which must not be the broker Service.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "web" }), withSidecar("web", ports(80))),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "like the broker Service"},
		},
		"SidecarServiceNamedLikeLeadBroker": {
			reason: "Two Services of one claim cannot share a name.",
			args: mc(withSidecar("flux-sample-lead-broker", ports(80)), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.containers[1].name"}, msg: "like the lead broker's NodePort Service"},
		},
		"BurstClusterHostnameTooLong": {
			reason: "Each burst cluster's hostnames <name>-<index> are DNS labels too.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: strings.Repeat("b", 62), Size: 10}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[0].name"}, msg: "use a shorter name"},
		},
		"BurstWithoutClusters": {
			reason: "A burst cluster's own hostnames come from the root's clusters list.",
			args:   burst(withBursting(func(b *v1alpha2.Bursting) { b.Clusters = nil })),
			want:   invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "itself among them"},
		},
		"JobLabelBadKey": {
			reason: "jobLabels are the Job's labels.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"bad key": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"JobLabelOwnedByJobController": {
			reason: "job-name on the Job would make selectors meant for its pods pick the Job.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"job-name": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[job-name]"}, msg: "the Job controller sets on the broker pods"},
		},
		"JobLabelCrossplanes": {
			reason: "Crossplane overwrites its own labels on what it composes.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"crossplane.io/composite": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[crossplane.io/composite]"}, msg: "set by Crossplane"},
		},
		"PodLabelOwnedByJobController": {
			reason: "job-name is the Job controller's, and the Services select on it.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"job-name": "other"} })),
			want:   invalid{fields: []string{"spec.pod.labels[job-name]"}, msg: "set on the broker pods by the Job controller"},
		},
		"PodLabelBatchPrefix": {
			reason: "batch.kubernetes.io/ labels belong to the Job controller.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Labels = map[string]string{"batch.kubernetes.io/job-completion-index": "0"}
			})),
			want: invalid{fields: []string{"spec.pod.labels[batch.kubernetes.io/job-completion-index]"}, msg: "use another label key"},
		},
		"PodAnnotationsTooLarge": {
			reason: "Kubernetes caps annotations at 256 KiB.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Annotations = map[string]string{"big": strings.Repeat("x", 300*1024)} })),
			want:   invalid{fields: []string{"spec.pod.annotations"}, msg: "Too long: the annotations add up to 307203 bytes, more than 261120"},
		},
		"PodAnnotationBadKey": {
			reason: "Annotation keys are qualified names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Annotations = map[string]string{"a/b/c": "x"} })),
			want:   invalid{fields: []string{"spec.pod.annotations[a/b/c]"}, msg: "must consist of alphanumeric characters"},
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
		"MountPathDuplicate": {
			reason: "Two volumes of one container cannot be mounted at one path.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {Path: "/data", EmptyDir: true}, "b": {Path: "/data/", ClaimName: "pvc"}}
			})),
			want: invalid{fields: []string{"spec.containers[0].volumes[b].path"}, msg: "give each volume its own path"},
		},
		"TwoEmptyDirsDefaultPath": {
			reason: "Two emptyDir volumes without a path would both be mounted at /dev/shm.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {EmptyDir: true}, "b": {EmptyDir: true}}
			})),
			want: invalid{fields: []string{"spec.containers[0].volumes[b]"}, msg: "mounted at /dev/shm"},
		},
		"MountOverFluxView": {
			reason: "A user mount over the Flux view hides it.",
			args:   mc(withVolume("data", v1alpha2.ContainerVolume{Path: "/mnt/flux/data", EmptyDir: true})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[data].path"}, msg: "overlaps /mnt/flux"},
		},
		"MountOverEntrypoints": {
			reason: "The entrypoint ConfigMap's mount is the MiniCluster's.",
			args:   mc(withVolume("data", v1alpha2.ContainerVolume{Path: "/flux_operator", EmptyDir: true})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[data].path"}, msg: "overlaps /flux_operator"},
		},
		"ViewMountPathOnCurveDir": {
			reason: "flux.container.mountPath is a mount of every broker container too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/mnt/curve" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "overlaps /mnt/curve"},
		},
		"ViewMountPathOnMnt": {
			reason: "/mnt contains the certificate's mount.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/mnt" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "overlaps /mnt/curve"},
		},
		"NULInCommand": {
			reason: "A NUL byte cannot reach a script intact.",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.Command = "echo a\x00b" })),
			want:   invalid{fields: []string{"spec.containers[0].command"}, msg: "must not contain a NUL byte"},
		},
		"NULInEnvironmentKey": {
			reason: "Map keys reach scripts too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"A": "x\x00"} })),
			want:   invalid{fields: []string{"spec.flux.environment[A]"}, msg: "must not contain a NUL byte"},
		},
		"HooksOverConfigMapLimit": {
			reason: "The scripts live in one ConfigMap, which Kubernetes caps at 1 MiB.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, BrokerPre: big, WorkerPre: big, Post: big}
			}), withSidecar("a", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			}), withSidecar("b", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			}), withSidecar("c", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			})),
			want: invalid{fields: []string{"spec.containers"}, msg: "over Kubernetes' limit of 1048576 bytes"},
		},
		"BrokerConfigNotTOML": {
			reason: "Flux refuses a broker.toml it cannot parse.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = "[bootstrap\nhosts = 1" })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "is not valid TOML (line 1"},
		},
		"BrokerConfigUnknownBootstrapKey": {
			reason: "Flux refuses unknown [bootstrap] keys.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap("curve = \"x\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]")
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] has key \"curve\""},
		},
		"BrokerConfigWithoutBootstrap": {
			reason: "Without [bootstrap] Flux starts each broker as a singleton: the four never join.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = "[access]\nallow-guest-user = true\n" })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] lists no hosts, so Flux would start each of the up to 4 brokers as an instance of its own"},
		},
		"BrokerConfigWithoutHosts": {
			reason: "A [bootstrap] without hosts is a singleton too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = bootstrap("") })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] lists no hosts"},
		},
		"BrokerConfigPortOutOfRange": {
			reason: "default_port becomes the port of every bind and connect URI.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap("default_port = 70000\nhosts = [ { host = \"flux-sample-[0-3]\" } ]")
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "default_port is 70000, which is not a TCP port"},
		},
		"LeadBrokerIPv6": {
			reason: "Flux enables IPv4 only unless [bootstrap] enable_ipv6, which broker.toml leaves off.",
			args:   burst(withFlux(func(f *v1alpha2.FluxSpec) { f.Bursting.LeadBroker.Address = "fd00::1" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.address"}, msg: "is an IPv6 address, and the brokers speak IPv4 only"},
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
		"VolumeOverUsr": {
			reason: "A volume at /usr hides bash, which runs the runner's entrypoint.",
			args:   mc(withVolume("tools", v1alpha2.ContainerVolume{ConfigMapName: "tools", Path: "/usr"})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[tools].path"}, msg: "where /bin/bash and its libraries live"},
		},
		"FluxEnvironmentScriptVariable": {
			reason: "flux.environment is exported in the entrypoint script: configroot=/x would move Flux's configuration away.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"configroot": "/x", "OK": "1"} })),
			want:   invalid{fields: []string{"spec.flux.environment[configroot]"}, msg: "is a variable of the brokers' entrypoint script"},
		},
		"BrokerConfigOneEntryWithoutCurveCert": {
			reason: "flux-core 0.88 counts expanded hosts: one entry of four hosts needs curve_cert.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ndefault_bind = \"tcp://eth0:8050\"\ndefault_connect = \"tcp://%h:8050\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "lists more than one host without curve_cert"},
		},
		"BrokerConfigPortTokenWithoutPort": {
			reason: "Without default_port flux-core writes -1 for %p.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]", connect = "tcp://%h:%p" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[0].connect "tcp://%h:%p" has %p, the default_port, which [bootstrap] does not set`},
		},
		"BrokerConfigHostNotDNSName": {
			reason: "flux-core checks every expanded host as a DNS name.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login_[1-2]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[1].host has the host "login_1", which Flux refuses`},
		},
		"BrokerConfigParentUnknown": {
			reason: "flux-core refuses a parent that is no host of the list.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-0" }, { host = "flux-sample-[1-3]", parent = "nobody" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[1].parent "nobody" is not a host of the list`},
		},
		"BrokerConfigParentSelf": {
			reason: "flux-core refuses a host that is its own parent.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-0" }, { host = "flux-sample-[1-3]", parent = "flux-sample-2" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "is a host of the entry itself"},
		},
		"BrokerConfigConnectNotURI": {
			reason: "flux-core checks bind and connect URIs: tcp:// or ipc://.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]", connect = "http://x" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[0].connect "http://x" has a scheme other than tcp or ipc`},
		},
		"HostlistNotDNSName": {
			reason: "bursting.hostlist becomes [bootstrap] hosts, which flux-core checks as DNS names.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3],-login" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: `has the host "-login", which Flux refuses`},
		},
		"TopologyKTooLarge": {
			reason: "flux-core parses k with strtoul and refuses a value past 64 bits.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "kary:99999999999999999999" })),
			want:   invalid{fields: []string{"spec.flux.topology"}, msg: "has a k too large for Flux"},
		},
		"BrokerConfigAccessType": {
			reason: "connector-local unpacks [access] keys as booleans and refuses any other key.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[access]\nallow-guest-user = \"yes\"\nguests = true\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "[access] allow-guest-user is a string, and Flux refuses anything but a boolean"},
		},
		"BrokerConfigTBONDuration": {
			reason: "The overlay module parses [tbon] timeouts as Flux durations.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[tbon]\ntcp_user_timeout = \"2 minutes\"\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `[tbon] tcp_user_timeout is "2 minutes", which is not a Flux duration`},
		},
		"VolumeItemsNested": {
			reason: "The kubelet writes item a as a file and cannot then make it the directory of item b.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/cfg", Items: map[string]string{"a": "conf", "b": "conf/app.ini"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[b]"}, msg: "is inside the path of item a, a file"},
		},
		"ConnectTimeoutPastZMQ": {
			reason: "ZeroMQ takes the timeout as int milliseconds: 30 days overflow it and the followers cannot connect.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.ConnectTimeout = ptr("30d") })),
			want:   invalid{fields: []string{"spec.flux.connectTimeout"}, msg: "longer than ZeroMQ's limit"},
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
		"RunAsNonRootRunnerUID0": {
			reason: "The kubelet refuses a container that would run as uid 0 in a runAsNonRoot pod.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.RunAsNonRoot = ptr(true)
				p.SecurityContext.RunAsUser = ptr(int64(1000))
			}), withRunner(func(c *v1alpha2.MiniClusterContainer) { c.SecurityContext.RunAsUser = ptr(int64(0)) })),
			want: invalid{fields: []string{"spec.containers[0].securityContext.runAsUser"}, msg: "the kubelet refuses to start a container as uid 0"},
		},
		"RunAsNonRootViewAsRoot": {
			reason: "Without a uid the init container runs as the Flux view image's user, root.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.SecurityContext.RunAsNonRoot = ptr(true) })),
			want:   invalid{fields: []string{"spec.pod.securityContext.runAsNonRoot"}, msg: "runs as root, and the kubelet refuses to start it with runAsNonRoot"},
		},
		"DNSPolicyDefault": {
			reason: "The node's resolver cannot resolve the brokers' cluster DNS names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.DNSPolicy = "Default" })),
			want:   invalid{fields: []string{"spec.pod.dnsPolicy"}, msg: "cannot resolve the names the brokers connect to"},
		},
		"BrokerConfigHostsMissPods": {
			reason: "Each broker finds its rank by its hostname in the bootstrap hosts.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-2]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "do not include \"flux-sample-3\""},
		},
		"BrokerConfigTypes": {
			reason: "Flux unpacks each [bootstrap] key as one type and refuses the file otherwise.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ncurve_cert = \"/c\"\ndefault_port = \"8050\"\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h:%p\"\nenable_ipv6 = 1\nhosts = [ { host = \"flux-sample-[0-3]\", connect = 5 } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "[bootstrap] default_port is a string, and Flux refuses anything but an integer"},
		},
		"BrokerConfigHostWithoutHost": {
			reason: "Every hosts entry needs a host.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { bind = "tcp://eth0:%p" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] hosts[1] has no host key"},
		},
		"BrokerConfigWithoutCurveCert": {
			reason: "Flux refuses more than one hosts entry without curve_cert.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ndefault_port = 8050\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h:%p\"\nhosts = [ { host = \"flux-sample-[0-1]\" }, { host = \"flux-sample-[2-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "without curve_cert, and Flux then refuses to start: add curve_cert = \"/mnt/flux/config/curve/curve.cert\""},
		},
		"BrokerConfigWithoutBindAndConnect": {
			reason: "Rank 0 binds, and the others connect to it, at its entry's URIs or the defaults.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ncurve_cert = \"/c\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "gives rank 0 (hosts[0]) no connect URI"},
		},
		"BrokerConfigLeadNotFirst": {
			reason: "The pod named <name>-0 runs the job as the lead, so it must be rank 0.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "login" }, { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "hosts start with \"login\", but rank 0 must be \"flux-sample-0\""},
		},
		"MinimalServiceBrokerConfigTooLarge": {
			reason: "The brokers counted are those of the bootstrap list, other clusters' too.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.MinimalService = true
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "node-[0-299]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "this instance has up to 304 hosts in spec.flux.brokerConfig"},
		},
		"MinimalServiceHostlistTooLarge": {
			reason: "A custom host list counts whole.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) { f.MinimalService = true }), withBursting(func(b *v1alpha2.Bursting) {
				b.Hostlist = "flux-sample-[0-3],node-[0-299]"
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "this instance has up to 304 hosts in spec.flux.bursting.hostlist"},
		},
		"BurstPastFanout": {
			reason: "Past rank 256 a burst broker's parent is a root broker other than rank 0, unreachable from its cluster.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 254}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "make an instance of 258 brokers, and past 257"},
		},
		"HostlistLeadNotFirst": {
			reason: "The pod named <name>-0 runs the job as the lead, so it must be rank 0.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "node-[0-1],flux-sample-[0-3]" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "starts with \"node-0\", but rank 0 must be \"flux-sample-0\""},
		},
		"VolumeItemDotDotPrefix": {
			reason: "Kubernetes refuses item paths starting with '..'.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/cfg", Items: map[string]string{"k": "..data"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[k]"}, msg: "not starting with '..'"},
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
		"NodePortOutsideRange": {
			reason: "The API server refuses a NodePort outside its range (30000-32767 by default).",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 2}}
				b.LeadBrokerService.NodePort = 8050
			})),
			want: invalid{fields: []string{"spec.flux.bursting.leadBrokerService.nodePort"}, msg: "is outside Kubernetes' NodePort range 30000-32767"},
		},
		"ViewMountPathSystemDir": {
			reason: "The view's emptyDir over /usr hides bash.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/usr" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "would hide /usr of the image"},
		},
		"ViewMountPathUnderSys": {
			reason: "No mount point can be made in sysfs.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/sys/flux" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "is inside /proc or /sys"},
		},
		"VolumeAtProc": {
			reason: "runc refuses mounts at /proc.",
			args:   mc(withVolume("p", v1alpha2.ContainerVolume{HostPath: "/proc", Path: "/proc"})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[p].path"}, msg: "where the container runtime refuses mounts"},
		},
		"LeadBrokerServiceTooLong": {
			reason: "Only the MiniCluster's name makes <name>-lead-broker: the fix is a shorter name, not headlessName.",
			args: mc(withName(strings.Repeat("a", 52)), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "svc" }), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 2}}
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "use a name that starts with a letter and has at most 51 characters"},
		},
		"HostlistNotAHostlist": {
			reason: "bursting.hostlist is parsed as Flux will.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "is not a Flux host list"},
		},
		"HostlistWithoutOwnPods": {
			reason: "The brokers find their ranks by hostname in the host list.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "node-[0-3]" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "does not include \"flux-sample-0\""},
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
		"ViewMountPathOnPathlessEmptyDir": {
			reason: "An emptyDir without a path goes to /dev/shm: the error names the volume, not a path the user never wrote.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/dev/shm" }),
				withVolume("shm", v1alpha2.ContainerVolume{EmptyDir: true})),
			want: invalid{fields: []string{"spec.containers[0].volumes[shm]"}, msg: "an emptyDir without a path"},
		},
		"MinimalServiceTooLarge": {
			reason: "More brokers than the fanout + 1 make a tree.",
			args: mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MaxSize = 300 }), withFlux(func(f *v1alpha2.FluxSpec) {
				f.MinimalService = true
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "with more than 257 brokers"},
		},
	}
}

func TestValidateInvalid(t *testing.T) {
	cases := invalidCases()
	if len(cases) < 35 {
		t.Fatalf("want at least 35 invalid cases, have %d", len(cases))
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validate(tc.args)
			got := make([]string, 0, len(errs))
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want.fields, got); diff != "" {
				t.Errorf("%s\nValidate(...) fields: -want, +got:\n%s\nerrors: %v", tc.reason, diff, errs)
			}
			if text := errs.ToAggregate(); text == nil || !strings.Contains(text.Error(), tc.want.msg) {
				t.Errorf("%s\nValidate(...): want an error containing %q, got: %v", tc.reason, tc.want.msg, text)
			}
		})
	}
}

// TestValidateErrorsNameTheirField: the function turns these errors into a
// Fatal result the user reads on the claim, so every message must start with
// the field to fix and say more than "Required value".
func TestValidateErrorsNameTheirField(t *testing.T) {
	for name, tc := range invalidCases() {
		t.Run(name, func(t *testing.T) {
			for _, e := range validate(tc.args) {
				if e.Field == "" {
					t.Errorf("%s\nerror without a field: %v", tc.reason, e)
					continue
				}
				if !strings.HasPrefix(e.Field, "spec.") && !strings.HasPrefix(e.Field, "metadata.") {
					t.Errorf("%s\nerror field %q is not a path of the claim", tc.reason, e.Field)
				}
				if !strings.Contains(e.Error(), e.Field) {
					t.Errorf("%s\nerror %q does not name its field %q", tc.reason, e.Error(), e.Field)
				}
				if e.Type != field.ErrorTypeNotSupported && e.Detail == "" {
					t.Errorf("%s\nerror %q does not say what to do", tc.reason, e.Error())
				}
			}
		})
	}
}

// TestValidateDeterministic: the errors become the Fatal result's message;
// map-driven checks must report them in the same order every time, or the
// claim's condition changes on every reconcile.
func TestValidateDeterministic(t *testing.T) {
	m := mc(
		withRunner(func(c *v1alpha2.MiniClusterContainer) {
			c.Environment = map[string]string{"1A": "", "2B": "", "3C": "", "4D": ""}
			c.Secrets = map[string]v1alpha2.Secret{"S1": {}, "S2": {}, "S3": {}}
			c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {}, "b": {}, "c": {}, "D": {}}
		}),
		withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"A-1": "", "B-2": "", "C-3": ""} }),
		withPod(func(p *v1alpha2.PodSpec) {
			p.Labels = map[string]string{"a b": "", "c d": "", "e f": ""}
			p.NodeAffinity = map[string][]string{"x": nil, "y": nil, "z": nil}
		}),
	)
	first := validate(m).ToAggregate().Error()
	for i := 0; i < 50; i++ {
		if got := validate(m).ToAggregate().Error(); got != first {
			t.Fatalf("validate(...) is not deterministic\n-first, +later:\n%s", cmp.Diff(first, got))
		}
	}
}

func TestValidateValid(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   *v1alpha2.MiniCluster
	}{
		"HelloWorld": {
			reason: "The defaulted hello-world MiniCluster is valid.",
			args:   mc(),
		},
		"SizeOne": {
			reason: "One pod is a cluster.",
			args:   raw(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Size = nil }), func(m *v1alpha2.MiniCluster) { v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{}) }),
		},
		"ElasticSizes": {
			reason: "minSize <= size <= maxSize.",
			args: mc(withSpec(func(s *v1alpha2.MiniClusterSpec) {
				s.MinSize = 2
				s.MaxSize = 8
			})),
		},
		"MinSizeEqualsSize": {
			reason: "The quorum may be every broker.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MinSize = 4 })),
		},
		"TasksZero": {
			reason: "tasks: 0 means one task per node.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Tasks = ptr(int32(0)) })),
		},
		"BackoffLimitZero": {
			reason: "A Job may never retry.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.BackoffLimit = ptr(int32(0)) })),
		},
		"LongestName": {
			reason: "A name whose last hostname is exactly 63 characters.",
			args:   mc(withName(strings.Repeat("a", 61)), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "svc" })),
		},
		"CustomHeadlessName": {
			reason: "headlessName may differ from the name.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "flux-service" })),
		},
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
		"SidecarWithoutPortsNamedLikeNumber": {
			reason: "Without ports no Service is named after the sidecar, so a DNS-1123 label suffices.",
			args:   mc(withSidecar("8app")),
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
		"EveryVolumeType": {
			reason: "Every volume source, with and without optional fields.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{
					"data":    {ClaimName: "data-pvc", Path: "/data", ReadOnly: true},
					"scratch": {HostPath: "/mnt/scratch", Path: "/scratch"},
					"config":  {ConfigMapName: "app-config", Path: "/etc/app", Items: map[string]string{"app.toml": "app.toml"}},
					"creds":   {SecretName: "creds", Path: "/etc/creds", Items: map[string]string{"token": "auth/token", "ca": "ca..pem"}},
					"shm":     {EmptyDir: true},
					"ram":     {EmptyDir: true, EmptyDirMedium: "memory", EmptyDirSizeLimit: "1Gi", Path: "/ram"},
					"bucket":  {CSIDriver: "gcsfuse.csi.storage.gke.io", CSIDriverAttributes: map[string]string{"bucketName": "b"}, Path: "/bucket"},
				}
			})),
		},
		"SharedVolume": {
			reason: "Two containers may mount the same volume (same name, same source) at different paths.",
			args: mc(
				withVolume("data", v1alpha2.ContainerVolume{ClaimName: "data", Path: "/data"}),
				withSidecar("app", func(c *v1alpha2.MiniClusterContainer) {
					c.Volumes = map[string]v1alpha2.ContainerVolume{"data": {ClaimName: "data", Path: "/srv/data"}}
				}),
			),
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
		"FluxOptions": {
			reason: "Valid Flux settings at their edges.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.ConnectTimeout = ptr("500ms")
				f.LogLevel = ptr(int32(0))
				f.Topology = "mincrit:3"
				f.Scheduler.QueuePolicy = "easy"
				f.Container = v1alpha2.FluxContainer{Name: "view", Image: "ghcr.io/converged-computing/flux-view-rocky:tag-9", MountPath: "/opt/flux-view"}
				f.Environment = map[string]string{"FLUX_URI_RESOLVE": "1", "_private": "x"}
				f.CurveCertSecret = "my-curve-cert"
			})),
		},
		"BrokerConfigWithOtherHosts": {
			reason: "A broker.toml Flux accepts: every pod listed, the lead first, other hosts after, the URIs and certificate set.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login", parent = "flux-sample-0" } ]`) + "default_port = 8050\nenable_ipv6 = false\n"
			})),
		},
		"VolumeOverProcFile": {
			reason: "runc lets a bind mount cover a few /proc files (lxcfs).",
			args:   mc(withVolume("cpuinfo", v1alpha2.ContainerVolume{HostPath: "/var/lib/lxcfs/proc/cpuinfo", Path: "/proc/cpuinfo"})),
		},
		"BurstAtFanout": {
			reason: "257 brokers in all keep every burst broker a child of rank 0.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 253}}
			})),
		},
		"ConnectTimeoutEmpty": {
			reason: `"" turns the connect timeout off.`,
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.ConnectTimeout = ptr("") })),
		},
		"LogLevelSeven": {
			reason: "7 is debug.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.LogLevel = ptr(int32(7)) })),
		},
		"Topologies": {
			reason: "kary, binomial and custom.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "kary:2" })),
		},
		"BinomialTopology": {
			reason: "binomial takes no argument.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "binomial" })),
		},
		"CurveCert": {
			reason: "A user-supplied certificate.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.CurveCert = curvetest.SampleCert })),
		},
		"BurstingRoot": {
			reason: "A root declares the clusters that may join and may pick its NodePort.",
			args: mc(
				withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MaxSize = 8 }),
				withBursting(func(b *v1alpha2.Bursting) {
					b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-1", Size: 2}}
					b.LeadBrokerService.NodePort = 30093
				}),
			),
		},
		"BurstingRootDefaulted": {
			reason: "Clusters without name or size are valid once defaulted.",
			args: func() *v1alpha2.MiniCluster {
				m := raw(withBursting(func(b *v1alpha2.Bursting) { b.Clusters = []v1alpha2.BurstedCluster{{}, {}} }))
				v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{})
				return m
			}(),
		},
		"Burst": {
			reason: "A burst whose own name is among the clusters (it shares the root's list).",
			args:   burst(),
		},
		"BurstAmongSeveralClusters": {
			reason: "A burst that is not the first cluster.",
			args: burst(withName("burst-1"), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "burst-1" }), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-1", Size: 4}}
			})),
		},
		"BurstDNSAddress": {
			reason: "The lead broker's address may be a DNS name.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Address = "lead.hpc.example.com" })),
		},
		"CustomHostlist": {
			reason: "Hosts that do not follow <name>-<index> (upstream's Compute Engine example).",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3],gffw-compute-a-[001-003]" })),
		},
		"Pod": {
			reason: "Every pod setting with valid values.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.RestartPolicy = "Never"
				p.DNSPolicy = "ClusterFirstWithHostNet"
				p.Labels = map[string]string{"app.kubernetes.io/part-of": "hpc", "empty": ""}
				p.Annotations = map[string]string{"example.com/note": "anything goes!"}
				p.NodeSelector = map[string]string{"cloud.google.com/gke-nodepool": "c2"}
				p.NodeAffinity = map[string][]string{"topology.kubernetes.io/zone": {"us-central1-a", "us-central1-b"}}
				p.Tolerations = []v1alpha2.Toleration{
					{Operator: "Exists"},
					{Key: "gpu", Operator: "Exists", Effect: "NoSchedule"},
					{Key: "hpc", Operator: "Equal", Value: "true", Effect: "NoExecute"},
					{Key: "hpc", Value: "true"},
				}
				p.RuntimeClassName = "kata"
			})),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(field.ErrorList(nil), validate(tc.args)); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// validate plans m in the namespace of the tests and returns its errors.
// bootstrap is a broker.toml whose [bootstrap] table Flux accepts apart
// from the hosts line given.
func bootstrap(hosts string) string {
	return "[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\ndefault_bind = \"tcp://eth0:8050\"\ndefault_connect = \"tcp://%h.flux-sample:8050\"\n" + hosts + "\n"
}

func validate(m *v1alpha2.MiniCluster) field.ErrorList {
	_, errs := New(m, Facts{Namespace: "default"})
	return errs
}

// raw is the hello-world v1alpha2.MiniCluster before defaults.
func raw(opts ...func(*v1alpha2.MiniCluster)) *v1alpha2.MiniCluster {
	m := &v1alpha2.MiniCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample", Namespace: "default"},
		Spec: v1alpha2.MiniClusterSpec{
			Size: ptr(int32(4)),
			Containers: []v1alpha2.MiniClusterContainer{{
				Image:   "rockylinux:9",
				Command: "echo hello world",
			}},
		},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// TestFSDSeconds: Flux durations as the overlay module reads them.
func TestFSDSeconds(t *testing.T) {
	cases := map[string]struct {
		reason string
		fsd    string
		want   float64
	}{
		"Bare":         {"A bare number is seconds.", "5", 5},
		"Milliseconds": {"ms is not m.", "500ms", 0.5},
		"Minutes":      {"m.", "1.5m", 90},
		"Hours":        {"h.", "2h", 7200},
		"Days":         {"d.", "24d", 24 * 86400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := fsdSeconds(tc.fsd); got != tc.want {
				t.Errorf("%s\nfsdSeconds(%q) = %v, want %v", tc.reason, tc.fsd, got, tc.want)
			}
		})
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

// TestBrokerQuorum: the lead waits for a quorum of brokers before it runs the
// job; hosts beyond this cluster's pods must not be part of it, or the lead
// would wait for them forever.
func TestBrokerQuorum(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   *v1alpha2.MiniCluster
		want   int32
	}{
		"Default": {
			reason: "Every host is a pod of this cluster: Flux's default, all of them.",
			args:   mc(),
			want:   0,
		},
		"MinSize": {
			reason: "minSize is the quorum.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MinSize = 2 })),
			want:   2,
		},
		"BrokerConfigOwnHosts": {
			reason: "A brokerConfig that lists this cluster's pods only keeps Flux's default.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: 0,
		},
		"BrokerConfigMoreHosts": {
			reason: "Hosts past this cluster's pods may never come: the lead waits for its own.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login" } ]`)
			})),
			want: 4,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(tc.args, Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("%s\nNew(...): %v", tc.reason, errs)
			}
			if p.BrokerQuorum != tc.want {
				t.Errorf("%s\nBrokerQuorum = %d, want %d", tc.reason, p.BrokerQuorum, tc.want)
			}
		})
	}
}

// TestFinished: what a finished cluster still composes follows from the
// phase its status says, whatever spec.cleanup.
func TestFinished(t *testing.T) {
	type want struct{ finished, cleanedUp bool }
	cases := map[string]struct {
		reason  string
		phase   string
		cleanup bool
		want    want
	}{
		"New":               {reason: "A new MiniCluster has no phase yet.", want: want{}},
		"Pending":           {reason: "A pending cluster has not finished.", phase: v1alpha2.PhasePending, cleanup: true, want: want{}},
		"Queued":            {reason: "A queued cluster has not finished.", phase: v1alpha2.PhaseQueued, cleanup: true, want: want{}},
		"Running":           {reason: "A running cluster has not finished.", phase: v1alpha2.PhaseRunning, cleanup: true, want: want{}},
		"Succeeded":         {reason: "A succeeded cluster has finished; without spec.cleanup its Job stays.", phase: v1alpha2.PhaseSucceeded, want: want{finished: true}},
		"Failed":            {reason: "A failed cluster has finished too.", phase: v1alpha2.PhaseFailed, want: want{finished: true}},
		"SucceededCleanup":  {reason: "spec.cleanup on a finished cluster removes its pods.", phase: v1alpha2.PhaseSucceeded, cleanup: true, want: want{finished: true, cleanedUp: true}},
		"FailedWithCleanup": {reason: "spec.cleanup applies to a failed cluster as well.", phase: v1alpha2.PhaseFailed, cleanup: true, want: want{finished: true, cleanedUp: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(mc(func(m *v1alpha2.MiniCluster) {
				m.Spec.Cleanup = tc.cleanup
				m.Status.Phase = tc.phase
			}), Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("New(...): %v", errs)
			}
			if diff := cmp.Diff(tc.want, want{finished: p.Finished, cleanedUp: p.CleanedUp}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nNew(...) Finished, CleanedUp: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
