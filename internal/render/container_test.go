package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// The mounts every broker container has, in order: home, the Flux view,
// the scripts and the software tree.
var wantBrokerMounts = []corev1.VolumeMount{
	{Name: "flux-operator-home", MountPath: "/home/flux-operator"},
	{Name: "flux-view", MountPath: "/mnt/flux"},
	{Name: "flux-entrypoint", MountPath: "/flux_operator", ReadOnly: true},
	{Name: "spack-software", MountPath: "/opt/software"},
}

func TestBrokerContainer(t *testing.T) {
	type want struct {
		name    string
		command []string
		mounts  []corev1.VolumeMount
		probe   *corev1.Probe
	}
	data := map[string]v1alpha2.ContainerVolume{"data": {Path: "/data", ClaimName: "data"}}
	cases := map[string]struct {
		reason     string
		containers []v1alpha2.MiniClusterContainer
		index      int
		want       want
	}{
		"Runner": {
			reason:     "The runner is named after the MiniCluster (the pod failure policy names it), runs its runner script, mounts the certificate its broker needs and is ready once the broker's socket exists.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9", Command: "hostname", RunFlux: true}},
			want: want{
				name:    "flux-sample",
				command: []string{"/bin/bash", "/flux_operator/wait-0.sh"},
				mounts:  append(append([]corev1.VolumeMount{}, wantBrokerMounts...), corev1.VolumeMount{Name: "flux-curve-cert", MountPath: "/mnt/curve", ReadOnly: true}),
				probe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "test -S /mnt/flux/config/run/flux/local"}}},
					PeriodSeconds:    5,
					FailureThreshold: 1,
				},
			},
		},
		"RunnerVolumesBeforeCertificate": {
			reason: "The runner's own volumes come after the MiniCluster's mounts and before the certificate's.",
			containers: []v1alpha2.MiniClusterContainer{
				{Name: "web", Image: "nginx"},
				{Image: "rockylinux:9", Command: "hostname", RunFlux: true, Volumes: data},
			},
			index: 1,
			want: want{
				name:    "flux-sample",
				command: []string{"/bin/bash", "/flux_operator/wait-1.sh"},
				mounts: append(append([]corev1.VolumeMount{}, wantBrokerMounts...),
					corev1.VolumeMount{Name: "data", MountPath: "/data"},
					corev1.VolumeMount{Name: "flux-curve-cert", MountPath: "/mnt/curve", ReadOnly: true}),
				probe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "test -S /mnt/flux/config/run/flux/local"}}},
					PeriodSeconds:    5,
					FailureThreshold: 1,
				},
			},
		},
		"WrappedSidecar": {
			reason: "A sidecar keeps its name, runs its wrapper script (by its own index) so it can use Flux, mounts the view and its volumes but not the certificate, and has no readiness probe.",
			containers: []v1alpha2.MiniClusterContainer{
				{Name: "web", Image: "nginx", Volumes: data},
				{Image: "rockylinux:9", Command: "hostname", RunFlux: true},
			},
			want: want{
				name:    "web",
				command: []string{"/bin/bash", "/flux_operator/start-0.sh"},
				mounts:  append(append([]corev1.VolumeMount{}, wantBrokerMounts...), corev1.VolumeMount{Name: "data", MountPath: "/data"}),
			},
		},
		"UnwrappedSidecar": {
			reason: "noWrapEntrypoint leaves the command unset, so the image's own entrypoint runs.",
			containers: []v1alpha2.MiniClusterContainer{
				{Image: "rockylinux:9", Command: "hostname", RunFlux: true},
				{Name: "web", Image: "nginx", NoWrapEntrypoint: true},
			},
			index: 1,
			want:  want{name: "web", mounts: wantBrokerMounts},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) { m.Spec.Containers = tc.containers })
			c := Job(in).Spec.Template.Spec.Containers[tc.index]
			got := want{name: c.Name, command: c.Command, mounts: c.VolumeMounts, probe: c.ReadinessProbe}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nJob(...) container %d: -want, +got:\n%s", tc.reason, tc.index, diff)
			}
		})
	}
}

func TestServiceContainer(t *testing.T) {
	type want struct {
		command []string
		mounts  []corev1.VolumeMount
	}
	cases := map[string]struct {
		reason  string
		service v1alpha2.MiniClusterContainer
		want    want
	}{
		"Command": {
			reason:  "A service's command runs through a shell, so it can have arguments; a service is no broker and mounts only its own volumes.",
			service: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", Command: "postgres -D /var/lib/db", Volumes: map[string]v1alpha2.ContainerVolume{"db": {Path: "/var/lib/db", ClaimName: "db"}}},
			want: want{
				command: []string{"/bin/sh", "-c", "postgres -D /var/lib/db"},
				mounts:  []corev1.VolumeMount{{Name: "db", MountPath: "/var/lib/db"}},
			},
		},
		"ImageEntrypoint": {
			reason:  "Without a command the image's entrypoint runs.",
			service: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) { m.Spec.Services = services(tc.service) })
			c := ServicesPod(in).Spec.Containers[0]
			got := want{command: c.Command, mounts: c.VolumeMounts}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nServicesPod(...) container: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// settings are the fields of a container that come from its declaration
// alone, whichever pod it is in.
type settings struct {
	image           string
	workingDir      string
	pullPolicy      corev1.PullPolicy
	stdin, tty      bool
	lifecycle       *corev1.Lifecycle
	resources       corev1.ResourceRequirements
	securityContext *corev1.SecurityContext
	ports           []corev1.ContainerPort
	env             []corev1.EnvVar
}

func settingsOf(c corev1.Container) settings {
	return settings{
		image: c.Image, workingDir: c.WorkingDir, pullPolicy: c.ImagePullPolicy, stdin: c.Stdin, tty: c.TTY,
		lifecycle: c.Lifecycle, resources: c.Resources, securityContext: c.SecurityContext, ports: c.Ports, env: c.Env,
	}
}

func TestContainerSettings(t *testing.T) {
	cases := map[string]struct {
		reason string
		decl   func(*v1alpha2.MiniClusterContainer)
		want   settings
	}{
		"Defaults": {
			reason: "A bare declaration pulls if not present, keeps stdin and a TTY open for attaching, and sets nothing else: an empty security context is none, not {}.",
			want:   settings{image: "nginx", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true},
		},
		"PullAlwaysWins": {
			reason: "pullAlways overrides imagePullPolicy.",
			decl:   func(c *v1alpha2.MiniClusterContainer) { c.PullAlways, c.ImagePullPolicy = true, "Never" },
			want:   settings{image: "nginx", pullPolicy: corev1.PullAlways, stdin: true, tty: true},
		},
		"PullPolicy": {
			reason: "imagePullPolicy replaces the IfNotPresent default.",
			decl:   func(c *v1alpha2.MiniClusterContainer) { c.ImagePullPolicy = "Never" },
			want:   settings{image: "nginx", pullPolicy: corev1.PullNever, stdin: true, tty: true},
		},
		"Environment": {
			reason: "Plain variables come first, then those from Secrets, each sorted: the pod template must not change from one render to the next.",
			decl: func(c *v1alpha2.MiniClusterContainer) {
				c.Environment = map[string]string{"ZONE": "a", "APP": "web"}
				c.Secrets = map[string]v1alpha2.Secret{"TOKEN": {Name: "creds", Key: "token"}, "PASSWORD": {Name: "creds", Key: "password"}}
			},
			want: settings{image: "nginx", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true, env: []corev1.EnvVar{
				{Name: "APP", Value: "web"},
				{Name: "ZONE", Value: "a"},
				{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
				{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}},
			}},
		},
		"Hooks": {
			reason: "Lifecycle hooks run through a shell, so a hook can have arguments.",
			decl: func(c *v1alpha2.MiniClusterContainer) {
				c.LifeCycle = v1alpha2.LifeCycle{PostStartExec: "echo started > /tmp/started", PreStopExec: "sleep 5"}
			},
			want: settings{image: "nginx", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true, lifecycle: &corev1.Lifecycle{
				PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "echo started > /tmp/started"}}},
				PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "sleep 5"}}},
			}},
		},
		"Resources": {
			reason: "Limits and requests carry over as quantities.",
			decl: func(c *v1alpha2.MiniClusterContainer) {
				c.Resources = v1alpha2.ContainerResources{
					Limits:   v1alpha2.ContainerResource{"cpu": intstr.FromInt32(2)},
					Requests: v1alpha2.ContainerResource{"memory": intstr.FromString("1Gi")},
				}
			},
			want: settings{image: "nginx", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true, resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			}},
		},
		"SecurityContext": {
			reason: "privileged, added capabilities and the user and group carry over.",
			decl: func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext = v1alpha2.SecurityContext{Privileged: true, AddCapabilities: []v1alpha2.Capability{"SYS_ADMIN"}, RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000)}
			},
			want: settings{image: "nginx", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true, securityContext: &corev1.SecurityContext{
				Privileged:   ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}},
				RunAsUser:    ptr.To[int64](1000),
				RunAsGroup:   ptr.To[int64](1000),
			}},
		},
		"PortsAndWorkingDir": {
			reason: "Ports are TCP container ports; workingDir carries over.",
			decl:   func(c *v1alpha2.MiniClusterContainer) { c.Ports, c.WorkingDir = []int32{80, 443}, "/srv" },
			want: settings{image: "nginx", workingDir: "/srv", pullPolicy: corev1.PullIfNotPresent, stdin: true, tty: true, ports: []corev1.ContainerPort{
				{ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 443, Protocol: corev1.ProtocolTCP},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			decl := v1alpha2.MiniClusterContainer{Name: "web", Image: "nginx"}
			if tc.decl != nil {
				tc.decl(&decl)
			}
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers = []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9", Command: "hostname", RunFlux: true}, decl}
				m.Spec.Services = services(decl)
			})
			// The same declaration means the same container in either pod.
			if diff := cmp.Diff(tc.want, settingsOf(Job(in).Spec.Template.Spec.Containers[1]), cmp.AllowUnexported(settings{})); diff != "" {
				t.Errorf("%s\nJob(...) sidecar: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, settingsOf(ServicesPod(in).Spec.Containers[0]), cmp.AllowUnexported(settings{})); diff != "" {
				t.Errorf("%s\nServicesPod(...) container: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestInitContainer(t *testing.T) {
	type want struct {
		name    string
		command []string
		mounts  []corev1.VolumeMount
		settings
	}
	cases := map[string]struct {
		reason string
		view   func(*v1alpha2.FluxContainer)
		want   want
	}{
		"Defaults": {
			reason: "The init container runs the init script with the view, home and scripts mounted (what the broker containers read), and is not interactive.",
			want: want{
				name:     "flux-view",
				command:  []string{"/bin/bash", "/flux_operator/flux-init.sh"},
				mounts:   wantBrokerMounts[:3],
				settings: settings{image: "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", pullPolicy: corev1.PullIfNotPresent},
			},
		},
		"ViewSettings": {
			reason: "flux.container's name, mount path, pull, working directory, resources and security context are the init container's; the view volume follows its name and mount path.",
			view: func(v *v1alpha2.FluxContainer) {
				v.Name, v.MountPath, v.Image, v.PullAlways, v.WorkingDir = "view", "/opt/flux", "view:latest", true, "/tmp"
				v.Resources = v1alpha2.ContainerResources{Limits: v1alpha2.ContainerResource{"cpu": intstr.FromInt32(1)}}
				v.SecurityContext = v1alpha2.SecurityContext{RunAsUser: ptr.To[int64](0)}
			},
			want: want{
				name:    "view",
				command: []string{"/bin/bash", "/flux_operator/flux-init.sh"},
				mounts: []corev1.VolumeMount{
					{Name: "flux-operator-home", MountPath: "/home/flux-operator"},
					{Name: "view", MountPath: "/opt/flux"},
					{Name: "flux-entrypoint", MountPath: "/flux_operator", ReadOnly: true},
				},
				settings: settings{
					image: "view:latest", workingDir: "/tmp", pullPolicy: corev1.PullAlways,
					resources:       corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
					securityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				if tc.view != nil {
					tc.view(&m.Spec.Flux.Container)
				}
			})
			pod := Job(in).Spec.Template.Spec
			if len(pod.InitContainers) != 1 {
				t.Fatalf("%s\nJob(...) has %d init containers, want 1", tc.reason, len(pod.InitContainers))
			}
			c := pod.InitContainers[0]
			got := want{name: c.Name, command: c.Command, mounts: c.VolumeMounts, settings: settingsOf(c)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, settings{})); diff != "" {
				t.Errorf("%s\nJob(...) init container: -want, +got:\n%s", tc.reason, diff)
			}
			// The view the init container fills must be the broker
			// containers' view.
			for _, bc := range pod.Containers {
				if diff := cmp.Diff(c.VolumeMounts, bc.VolumeMounts[:len(c.VolumeMounts)]); diff != "" {
					t.Errorf("%s\ncontainer %s does not mount what the init container writes: -init, +container:\n%s", tc.reason, bc.Name, diff)
				}
			}
		})
	}
}
