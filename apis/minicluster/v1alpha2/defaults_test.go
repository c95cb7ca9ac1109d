package v1alpha2

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// raw is the hello-world claim as a user writes it, before any default:
// name flux-sample, size 4, one container running "echo hello world" in
// rockylinux:9. Options state only what a case changes.
func raw(opts ...func(*MiniCluster)) *MiniCluster {
	m := &MiniCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample", Namespace: "default"},
		Spec: MiniClusterSpec{
			Size: ptr(int32(4)),
			Containers: []MiniClusterContainer{{
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

// services makes spec.services of cs.
func services(cs ...MiniClusterContainer) []ServiceContainer {
	out := make([]ServiceContainer, 0, len(cs))
	for _, c := range cs {
		out = append(out, ServiceContainer{MiniClusterContainer: c})
	}
	return out
}

// defaulted is what SetDefaults must make of raw(), spelled out field by
// field (with literal values, not the package's constants, so a changed
// default fails here), then changed by opts.
func defaulted(opts ...func(*MiniCluster)) *MiniCluster {
	m := &MiniCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample", Namespace: "default"},
		Spec: MiniClusterSpec{
			Size:            ptr(int32(4)),
			MaxSize:         4,
			Tasks:           ptr(int32(1)),
			DeadlineSeconds: ptr(int64(31500000)),
			BackoffLimit:    ptr(int32(100)),
			Network:         Network{HeadlessName: "flux-sample"},
			Pod:             PodSpec{RestartPolicy: "OnFailure"},
			Flux: FluxSpec{
				Container: FluxContainer{
					Name:      "flux-view",
					Image:     "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble",
					MountPath: "/mnt/flux",
				},
				ConnectTimeout: ptr("5s"),
				LogLevel:       ptr(int32(6)),
				Scheduler:      FluxScheduler{QueuePolicy: "fcfs"},
			},
			Containers: []MiniClusterContainer{{
				Image:   "rockylinux:9",
				Command: "echo hello world",
				RunFlux: true,
				Logs:    "/tmp/fluxout",
			}},
		},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func TestSetDefaults(t *testing.T) {
	type args struct {
		mc *MiniCluster
		p  PlatformDefaults
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *MiniCluster
	}{
		"HelloWorld": {
			reason: "Every unset field of the hello-world claim gets its default.",
			args:   args{mc: raw()},
			want:   defaulted(),
		},
		"SizeDefaultsToOne": {
			reason: "Without size a MiniCluster has one pod, and maxSize follows it.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Size = nil })},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Size = ptr(int32(1))
				m.Spec.MaxSize = 1
			}),
		},
		"MaxSizeDefaultsToSize": {
			reason: "maxSize defaults to size, whatever size is.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Size = ptr(int32(7)) })},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Size = ptr(int32(7))
				m.Spec.MaxSize = 7
			}),
		},
		"MaxSizeKept": {
			reason: "An explicit maxSize is kept.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.MaxSize = 10 })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.MaxSize = 10 }),
		},
		"TasksZeroKept": {
			reason: "tasks: 0 means one task per node and must not become the default 1.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Tasks = ptr(int32(0)) })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Tasks = ptr(int32(0)) }),
		},
		"BackoffLimitZeroKept": {
			reason: "backoffLimit: 0 (never retry) must not become the default 100.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.BackoffLimit = ptr(int32(0)) })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.BackoffLimit = ptr(int32(0)) }),
		},
		"ExplicitJobSettingsKept": {
			reason: "Explicit tasks, deadlineSeconds, backoffLimit and restartPolicy win over the defaults.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Tasks = ptr(int32(8))
				m.Spec.DeadlineSeconds = ptr(int64(600))
				m.Spec.BackoffLimit = ptr(int32(3))
				m.Spec.Pod.RestartPolicy = "Never"
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Tasks = ptr(int32(8))
				m.Spec.DeadlineSeconds = ptr(int64(600))
				m.Spec.BackoffLimit = ptr(int32(3))
				m.Spec.Pod.RestartPolicy = "Never"
			}),
		},
		"HeadlessNameKept": {
			reason: "An explicit headlessName is kept instead of the MiniCluster's name.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Network.HeadlessName = "flux-service" })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Network.HeadlessName = "flux-service" }),
		},
		"HeadlessNameFollowsName": {
			reason: "headlessName defaults to the MiniCluster's own name (not upstream's old flux-service).",
			args:   args{mc: raw(func(m *MiniCluster) { m.Name = "lammps" })},
			want: defaulted(func(m *MiniCluster) {
				m.Name = "lammps"
				m.Spec.Network.HeadlessName = "lammps"
			}),
		},
		"FluxContainerKept": {
			reason: "An explicit flux view name, image and mountPath are kept.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Container = FluxContainer{Name: "view", Image: "ghcr.io/converged-computing/flux-view-rocky:tag-9", MountPath: "/opt/view"}
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Container = FluxContainer{Name: "view", Image: "ghcr.io/converged-computing/flux-view-rocky:tag-9", MountPath: "/opt/view"}
			}),
		},
		"FluxContainerPartlySet": {
			reason: "Each field of the flux container is defaulted on its own.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.Container.PullAlways = true })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.Container.PullAlways = true }),
		},
		"ConnectTimeoutWithOtherFluxFields": {
			reason: "connectTimeout defaults to 5s even when the claim sets other flux fields (a YAML default of a parent object would not).",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Topology = "kary:2"
				m.Spec.Flux.LogLevel = ptr(int32(7))
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Topology = "kary:2"
				m.Spec.Flux.LogLevel = ptr(int32(7))
			}),
		},
		"ConnectTimeoutEmptyKept": {
			reason: `connectTimeout: "" turns the option off and must stay "".`,
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("") })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("") }),
		},
		"ConnectTimeoutKept": {
			reason: "An explicit connectTimeout is kept.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("30s") })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("30s") }),
		},
		"LogLevelZeroKept": {
			reason: "logLevel: 0 (emergencies only) must not become the default 6.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.LogLevel = ptr(int32(0)) })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.LogLevel = ptr(int32(0)) }),
		},
		"QueuePolicyKept": {
			reason: "An explicit queuePolicy is kept.",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.Scheduler.QueuePolicy = "easy" })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.Scheduler.QueuePolicy = "easy" }),
		},
		"LeadBrokerPortDefault": {
			reason: "A leadBroker without port uses 8050.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.LeadBroker = &FluxBroker{Address: "10.0.0.1", Name: "root", Size: 4}
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.LeadBroker = &FluxBroker{Address: "10.0.0.1", Name: "root", Size: 4, Port: 8050}
			}),
		},
		"LeadBrokerPortKept": {
			reason: "A leadBroker's port (the root's NodePort) is kept.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.LeadBroker = &FluxBroker{Address: "10.0.0.1", Name: "root", Size: 4, Port: 30093}
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.LeadBroker = &FluxBroker{Address: "10.0.0.1", Name: "root", Size: 4, Port: 30093}
			}),
		},
		"NoLeadBrokerNoDefault": {
			reason: "Without leadBroker, none is made up (it would turn the cluster into a burst).",
			args:   args{mc: raw(func(m *MiniCluster) { m.Spec.Flux.Bursting.Hostlist = "flux-sample-[0-3],vm-[1-2]" })},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.Bursting.Hostlist = "flux-sample-[0-3],vm-[1-2]" }),
		},
		"BurstClustersDefaults": {
			reason: "Burst clusters default to spec.size and burst-<position> (upstream meant to but mutated a copy).",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.Clusters = []BurstedCluster{{}, {Name: "gpu"}, {Size: 2}, {Name: "big", Size: 16}}
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.Clusters = []BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "gpu", Size: 4}, {Name: "burst-2", Size: 2}, {Name: "big", Size: 16}}
			}),
		},
		"BurstClustersFollowDefaultSize": {
			reason: "A burst cluster without size takes spec.size after size itself was defaulted.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Size = nil
				m.Spec.Flux.Bursting.Clusters = []BurstedCluster{{}}
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Size = ptr(int32(1))
				m.Spec.MaxSize = 1
				m.Spec.Flux.Bursting.Clusters = []BurstedCluster{{Name: "burst-0", Size: 1}}
			}),
		},
		"SingleContainerRunsFlux": {
			reason: "A single container is the Flux runner even without runFlux.",
			args:   args{mc: raw()},
			want:   defaulted(),
		},
		"TwoContainersNotGuessed": {
			reason: "With two containers, SetDefaults does not pick a runner: Validate asks the user to.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Containers = append(m.Spec.Containers, MiniClusterContainer{Name: "app", Image: "nginx"})
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Containers[0].RunFlux = false
				m.Spec.Containers = append(m.Spec.Containers, MiniClusterContainer{Name: "app", Image: "nginx", Logs: "/tmp/fluxout"})
			}),
		},
		"ContainerImageAndLogsDefault": {
			reason: "Containers and services without image or logs get the operator's image and /tmp/fluxout.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Containers = []MiniClusterContainer{{Command: "hostname", RunFlux: true}, {Name: "side"}}
				m.Spec.Services = services(MiniClusterContainer{Name: "db"})
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Containers = []MiniClusterContainer{
					{Command: "hostname", RunFlux: true, Image: "ghcr.io/rse-ops/accounting:app-latest", Logs: "/tmp/fluxout"},
					{Name: "side", Image: "ghcr.io/rse-ops/accounting:app-latest", Logs: "/tmp/fluxout"},
				}
				m.Spec.Services = services(MiniClusterContainer{Name: "db", Image: "ghcr.io/rse-ops/accounting:app-latest", Logs: "/tmp/fluxout"})
			}),
		},
		"ContainerLogsKept": {
			reason: "Explicit logs directories are kept, for containers and services.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Containers[0].Logs = "/data/out"
				m.Spec.Services = services(MiniClusterContainer{Name: "db", Image: "postgres", Logs: "/var/log"})
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Containers[0].Logs = "/data/out"
				m.Spec.Services = services(MiniClusterContainer{Name: "db", Image: "postgres", Logs: "/var/log"})
			}),
		},
		"SingleServiceDoesNotRunFlux": {
			reason: "The one-container rule is for spec.containers only: a single service is not a runner.",
			args: args{mc: raw(func(m *MiniCluster) {
				m.Spec.Services = services(MiniClusterContainer{Name: "db", Image: "postgres"})
			})},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Services = services(MiniClusterContainer{Name: "db", Image: "postgres", Logs: "/tmp/fluxout"})
			}),
		},
		"PlatformViewImage": {
			reason: "The platform's view image replaces the API default when the claim sets none.",
			args:   args{mc: raw(), p: PlatformDefaults{ViewImage: "registry.local/flux-view-rocky:tag-9"}},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.Container.Image = "registry.local/flux-view-rocky:tag-9" }),
		},
		"PlatformViewImageClaimWins": {
			reason: "The claim's own view image wins over the platform's.",
			args: args{
				mc: raw(func(m *MiniCluster) { m.Spec.Flux.Container.Image = "mine:1" }),
				p:  PlatformDefaults{ViewImage: "registry.local/flux-view-rocky:tag-9"},
			},
			want: defaulted(func(m *MiniCluster) { m.Spec.Flux.Container.Image = "mine:1" }),
		},
		"PlatformConnectTimeout": {
			reason: "The platform's connect timeout replaces 5s when the claim sets none.",
			args:   args{mc: raw(), p: PlatformDefaults{ConnectTimeout: ptr("30s")}},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("30s") }),
		},
		"PlatformConnectTimeoutEmpty": {
			reason: `A platform may turn the connect timeout off with "".`,
			args:   args{mc: raw(), p: PlatformDefaults{ConnectTimeout: ptr("")}},
			want:   defaulted(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("") }),
		},
		"PlatformConnectTimeoutClaimWins": {
			reason: "The claim's connect timeout, even \"\", wins over the platform's.",
			args: args{
				mc: raw(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("") }),
				p:  PlatformDefaults{ConnectTimeout: ptr("30s")},
			},
			want: defaulted(func(m *MiniCluster) { m.Spec.Flux.ConnectTimeout = ptr("") }),
		},
		"PlatformNodeSelectorAndTolerations": {
			reason: "The platform's node selector and tolerations apply when the claim sets none.",
			args: args{mc: raw(), p: PlatformDefaults{
				NodeSelector: map[string]string{"node.kubernetes.io/instance-type": "c2-standard-8"},
				Tolerations:  []Toleration{{Key: "hpc", Operator: "Exists", Effect: "NoSchedule"}},
			}},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Pod.NodeSelector = map[string]string{"node.kubernetes.io/instance-type": "c2-standard-8"}
				m.Spec.Pod.Tolerations = []Toleration{{Key: "hpc", Operator: "Exists", Effect: "NoSchedule"}}
			}),
		},
		"PlatformNodeSelectorAndTolerationsClaimWins": {
			reason: "The claim's node selector and tolerations replace the platform's entirely (no merge).",
			args: args{
				mc: raw(func(m *MiniCluster) {
					m.Spec.Pod.NodeSelector = map[string]string{"zone": "a"}
					m.Spec.Pod.Tolerations = []Toleration{{Key: "gpu", Operator: "Equal", Value: "yes"}}
				}),
				p: PlatformDefaults{
					NodeSelector: map[string]string{"node.kubernetes.io/instance-type": "c2-standard-8"},
					Tolerations:  []Toleration{{Key: "hpc", Operator: "Exists"}},
				},
			},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Pod.NodeSelector = map[string]string{"zone": "a"}
				m.Spec.Pod.Tolerations = []Toleration{{Key: "gpu", Operator: "Equal", Value: "yes"}}
			}),
		},
		"PlatformDefaultsDoNotTouchOtherFields": {
			reason: "Platform defaults change only the fields they name.",
			args: args{mc: raw(), p: PlatformDefaults{
				ViewImage: "v:1", ConnectTimeout: ptr("1m"),
				NodeSelector: map[string]string{"a": "b"}, Tolerations: []Toleration{{Operator: "Exists"}},
				ImagePullSecrets: []string{"pull"},
			}},
			want: defaulted(func(m *MiniCluster) {
				m.Spec.Flux.Container.Image = "v:1"
				m.Spec.Flux.ConnectTimeout = ptr("1m")
				m.Spec.Pod.NodeSelector = map[string]string{"a": "b"}
				m.Spec.Pod.Tolerations = []Toleration{{Operator: "Exists"}}
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			SetDefaults(tc.args.mc, tc.args.p)
			if diff := cmp.Diff(tc.want, tc.args.mc); diff != "" {
				t.Errorf("%s\nSetDefaults(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSetDefaultsIdempotent: the function defaults what may already have
// been defaulted (by the API server, or by an earlier call), so applying the
// defaults twice must equal applying them once.
func TestSetDefaultsIdempotent(t *testing.T) {
	platform := PlatformDefaults{
		ViewImage:      "registry.local/view:1",
		ConnectTimeout: ptr("10s"),
		NodeSelector:   map[string]string{"pool": "hpc"},
		Tolerations:    []Toleration{{Key: "hpc", Operator: "Exists"}},
	}
	cases := map[string]struct {
		reason string
		mc     *MiniCluster
		p      PlatformDefaults
	}{
		"HelloWorld": {
			reason: "The hello-world claim.",
			mc:     raw(),
		},
		"Empty": {
			reason: "A claim with nothing set but its name.",
			mc:     &MiniCluster{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
		},
		"ExplicitZeros": {
			reason: "Explicit zero values that must survive both passes.",
			mc: raw(func(m *MiniCluster) {
				m.Spec.Tasks = ptr(int32(0))
				m.Spec.BackoffLimit = ptr(int32(0))
				m.Spec.Flux.LogLevel = ptr(int32(0))
				m.Spec.Flux.ConnectTimeout = ptr("")
			}),
		},
		"Bursting": {
			reason: "Burst clusters and a lead broker.",
			mc: raw(func(m *MiniCluster) {
				m.Spec.Flux.Bursting.Clusters = []BurstedCluster{{}, {Name: "gpu"}, {Size: 2}}
				m.Spec.Flux.Bursting.LeadBroker = &FluxBroker{Address: "10.0.0.1", Name: "root", Size: 4}
			}),
		},
		"ContainersAndServices": {
			reason: "Several containers and services.",
			mc: raw(func(m *MiniCluster) {
				m.Spec.Containers = append(m.Spec.Containers, MiniClusterContainer{Name: "side"})
				m.Spec.Services = services(MiniClusterContainer{Name: "db"})
			}),
		},
		"Platform": {
			reason: "Platform defaults applied twice.",
			mc:     raw(),
			p:      platform,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			once := tc.mc.DeepCopy()
			SetDefaults(once, tc.p)
			twice := once.DeepCopy()
			SetDefaults(twice, tc.p)
			if diff := cmp.Diff(once, twice); diff != "" {
				t.Errorf("%s\nSetDefaults twice: -once, +twice:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSetDefaultsDoesNotAliasPlatform: one PlatformDefaults serves every
// claim, so a claim's defaulted node selector or tolerations must be copies.
func TestSetDefaultsDoesNotAliasPlatform(t *testing.T) {
	p := PlatformDefaults{
		NodeSelector: map[string]string{"pool": "hpc"},
		Tolerations:  []Toleration{{Key: "hpc", Operator: "Exists"}},
	}
	m := raw()
	SetDefaults(m, p)
	m.Spec.Pod.NodeSelector["pool"] = "changed"
	m.Spec.Pod.Tolerations[0].Key = "changed"

	want := PlatformDefaults{
		NodeSelector: map[string]string{"pool": "hpc"},
		Tolerations:  []Toleration{{Key: "hpc", Operator: "Exists"}},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("changing a defaulted claim must not change the platform defaults\n-want, +got:\n%s", diff)
	}
}

func TestRunner(t *testing.T) {
	cases := map[string]struct {
		reason     string
		containers []MiniClusterContainer
		want       int
	}{
		"None": {
			reason: "Without containers there is no runner.",
			want:   -1,
		},
		"NoRunFlux": {
			reason:     "Without runFlux there is no runner (SetDefaults sets it for a single container).",
			containers: []MiniClusterContainer{{Name: "a"}, {Name: "b"}},
			want:       -1,
		},
		"Second": {
			reason:     "The runner is the container with runFlux.",
			containers: []MiniClusterContainer{{Name: "a"}, {Name: "b", RunFlux: true}},
			want:       1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &MiniClusterSpec{Containers: tc.containers}
			if diff := cmp.Diff(tc.want, s.Runner()); diff != "" {
				t.Errorf("%s\nRunner(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestContainers(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   MiniClusterSpec
		list   func(*MiniClusterSpec) []*MiniClusterContainer
		want   MiniClusterSpec
	}{
		"Containers": {
			reason: "The pointers are spec.containers' own, in order.",
			spec:   MiniClusterSpec{Containers: []MiniClusterContainer{{Name: "a"}, {Name: "b"}}},
			list:   func(s *MiniClusterSpec) []*MiniClusterContainer { return Containers(s.Containers) },
			want:   MiniClusterSpec{Containers: []MiniClusterContainer{{Name: "a", Image: "0"}, {Name: "b", Image: "1"}}},
		},
		"Services": {
			reason: "The pointers are the services' own containers, in order: a change through one is a change to spec.services.",
			spec:   MiniClusterSpec{Services: services(MiniClusterContainer{Name: "db"}, MiniClusterContainer{Name: "web"})},
			list:   func(s *MiniClusterSpec) []*MiniClusterContainer { return Containers(s.Services) },
			want:   MiniClusterSpec{Services: services(MiniClusterContainer{Name: "db", Image: "0"}, MiniClusterContainer{Name: "web", Image: "1"})},
		},
		"None": {
			reason: "No services, no containers.",
			list:   func(s *MiniClusterSpec) []*MiniClusterContainer { return Containers(s.Services) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.spec
			cs := tc.list(&s)
			if len(cs) != len(tc.want.Containers)+len(tc.want.Services) {
				t.Fatalf("%s\nContainers(...) has %d containers, want %d", tc.reason, len(cs), len(tc.want.Containers)+len(tc.want.Services))
			}
			for i, c := range cs {
				c.Image = strconv.Itoa(i)
			}
			if diff := cmp.Diff(tc.want, s); diff != "" {
				t.Errorf("%s\nthe spec after a change through Containers(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestValues covers the accessors that read a field or its default, so the
// plan, the scripts and the burst controller agree on a value the claim left
// unset.
func TestValues(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   MiniClusterSpec
		want   [3]int32 // size, tasks, log level
	}{
		"Unset": {
			reason: "Unset fields are their defaults: size 1, tasks 1, log level 6.",
			want:   [3]int32{DefaultSize, DefaultTasks, DefaultLogLevel},
		},
		"Set": {
			reason: "Set fields are returned as they are.",
			spec:   MiniClusterSpec{Size: ptr(int32(5)), Tasks: ptr(int32(4)), Flux: FluxSpec{LogLevel: ptr(int32(7))}},
			want:   [3]int32{5, 4, 7},
		},
		"Zero": {
			reason: "An explicit 0 is returned as is, not replaced by the default: the schema refuses a size of 0, and a log level of 0 is Flux's quietest.",
			spec:   MiniClusterSpec{Size: ptr(int32(0)), Tasks: ptr(int32(0)), Flux: FluxSpec{LogLevel: ptr(int32(0))}},
			want:   [3]int32{0, 0, 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := [3]int32{tc.spec.SizeValue(), tc.spec.TasksValue(), tc.spec.Flux.LogLevelValue()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n[SizeValue, TasksValue, LogLevelValue]: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
