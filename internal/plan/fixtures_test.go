package plan

// The MiniClusters the tests of this package start from: hello-world, raw
// and defaulted, a burst cluster, containers, and options that change them.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
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

// bootstrap is a broker.toml whose [bootstrap] table Flux accepts apart
// from the hosts line given.
func bootstrap(hosts string) string {
	return "[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\ndefault_bind = \"tcp://eth0:8050\"\ndefault_connect = \"tcp://%h.flux-sample:8050\"\n" + hosts + "\n"
}
