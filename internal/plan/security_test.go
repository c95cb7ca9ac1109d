package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestSecurityContextInvalid(t *testing.T) {
	cases := map[string]invalidCase{
		"NoEscalationWithSysAdmin": {
			reason: "Kubernetes refuses allowPrivilegeEscalation: false with SYS_ADMIN added, under either spelling.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.AllowPrivilegeEscalation = ptr(false)
				c.SecurityContext.Capabilities = &v1alpha2.Capabilities{Add: []v1alpha2.Capability{"sys_admin"}}
			})),
			want: invalid{fields: []string{"spec.containers[0].securityContext.allowPrivilegeEscalation"}, msg: "drop SYS_ADMIN, or allowPrivilegeEscalation: false"},
		},
		"NoEscalationWithLegacySysAdmin": {
			reason: "The legacy addCapabilities counts as well, on the Flux view's init container too.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.Container.SecurityContext.AllowPrivilegeEscalation = ptr(false)
				f.Container.SecurityContext.AddCapabilities = []v1alpha2.Capability{"SYS_ADMIN"}
			})),
			want: invalid{fields: []string{"spec.flux.container.securityContext.allowPrivilegeEscalation"}, msg: "can escalate privileges"},
		},
		"ContainerNonRootAsRoot": {
			reason: "The kubelet refuses a runAsNonRoot container that runs as uid 0.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsNonRoot = ptr(true)
				c.SecurityContext.RunAsUser = ptr(int64(0))
			})),
			want: invalid{fields: []string{"spec.containers[0].securityContext.runAsUser"}, msg: "run as another uid, or drop runAsNonRoot"},
		},
		"ContainerNonRootPodRoot": {
			reason: "A container's runAsNonRoot with the pod's runAsUser 0 and none of its own.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) { p.SecurityContext.RunAsUser = ptr(int64(0)) }), withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsNonRoot = ptr(true)
			}), withFlux(func(f *v1alpha2.FluxSpec) { f.Container.SecurityContext.RunAsUser = ptr(int64(1000)) })),
			want: invalid{fields: []string{"spec.containers[0].securityContext.runAsNonRoot"}, msg: "set runAsUser here to another uid"},
		},
		"ViewNonRootAsImageRoot": {
			reason: "runAsNonRoot on the init container alone: the view image runs as root.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.Container.SecurityContext.RunAsNonRoot = ptr(true)
			})),
			want: invalid{fields: []string{"spec.flux.container.securityContext.runAsNonRoot"}, msg: "runs as root, and the kubelet refuses to start it with runAsNonRoot"},
		},
		"SeccompLocalhostAbsolute": {
			reason: "The API server refuses an absolute seccomp localhostProfile: it is relative to the kubelet's seccomp directory.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("/var/lib/kubelet/seccomp/flux.json")}
			})),
			want: invalid{fields: []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile"}, msg: "must be a relative path"},
		},
		"SeccompLocalhostDotDot": {
			reason: "The API server refuses a '..' element anywhere in a seccomp localhostProfile, on the pod's securityContext too.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("profiles/../../../etc/flux.json")}
			})),
			want: invalid{fields: []string{"spec.pod.securityContext.seccompProfile.localhostProfile"}, msg: "must not contain '..'"},
		},
		"SeccompLocalhostTrailingDotDot": {
			reason: "A last element '..' is a backstep as well.",
			args: mc(withServices(sidecar("db", func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("profiles/..")}
			}))),
			want: invalid{fields: []string{"spec.services[0].securityContext.seccompProfile.localhostProfile"}, msg: "name a file under that directory"},
		},
		"SeccompLocalhostEmpty": {
			reason: "Type Localhost without a profile (a composite that skipped the schema) names no file, on the Flux view's init container too.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.Container.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("")}
			})),
			want: invalid{fields: []string{"spec.flux.container.securityContext.seccompProfile.localhostProfile"}, msg: "name it, or use type RuntimeDefault"},
		},
		"AppArmorLocalhostPadded": {
			reason: "The API server refuses an AppArmor localhostProfile padded with whitespace.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.AppArmorProfile = &v1alpha2.AppArmorProfile{Type: "Localhost", LocalhostProfile: ptr(" flux-profile\n")}
			})),
			want: invalid{fields: []string{"spec.containers[0].securityContext.appArmorProfile.localhostProfile"}, msg: "must not be padded with whitespace"},
		},
		"AppArmorLocalhostBlank": {
			reason: "An AppArmor localhostProfile of whitespace alone names no profile.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.AppArmorProfile = &v1alpha2.AppArmorProfile{Type: "Localhost", LocalhostProfile: ptr("  ")}
			})),
			want: invalid{fields: []string{"spec.pod.securityContext.appArmorProfile.localhostProfile"}, msg: "name of an AppArmor profile loaded on the node"},
		},
		"Sysctls": {
			reason: "Sysctl names follow Kubernetes' rule and are set once.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.Sysctls = []v1alpha2.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}, {Name: "Net.Core", Value: "1"}, {Name: "net/core/somaxconn", Value: "2048"}}
			})),
			want: invalid{fields: []string{"spec.pod.securityContext.sysctls[1].name", "spec.pod.securityContext.sysctls[2].name"}, msg: "set each sysctl once"},
		},
		"IPCSysctlWithHostIPC": {
			reason: "Kubernetes refuses IPC-namespace sysctls in a pod that shares the node's IPC namespace.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.HostIPC = true
				p.SecurityContext.Sysctls = []v1alpha2.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net.ipv4.ip_local_port_range", Value: "1024 65000"}}
			})),
			want: invalid{fields: []string{"spec.pod.securityContext.sysctls[0].name"}, msg: "drop the sysctl or hostIPC"},
		},
	}
	checkInvalid(t, cases)
}

func TestSecurityContextValid(t *testing.T) {
	cases := map[string]validCase{
		"FullContexts": {
			reason: "Every Kubernetes setting the Flux Operator takes, consistent with each other.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext = v1alpha2.PodSecurityContext{
					RunAsUser: ptr(int64(1000)), RunAsNonRoot: ptr(true), FSGroup: ptr(int64(1000)),
					FSGroupChangePolicy: "OnRootMismatch", SupplementalGroupsPolicy: "Strict",
					SeccompProfile:  &v1alpha2.SeccompProfile{Type: "RuntimeDefault"},
					AppArmorProfile: &v1alpha2.AppArmorProfile{Type: "RuntimeDefault"},
					SELinuxOptions:  &v1alpha2.SELinuxOptions{Level: "s0:c123,c456"},
					Sysctls:         []v1alpha2.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}, {Name: "kernel/shm_rmid_forced", Value: "1"}},
				}
			}), withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext = v1alpha2.SecurityContext{
					AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true), ProcMount: "Default",
					Capabilities: &v1alpha2.Capabilities{Add: []v1alpha2.Capability{"NET_BIND_SERVICE"}, Drop: []v1alpha2.Capability{"ALL"}},
				}
			})),
		},
		"LocalhostProfiles": {
			reason: "Relative seccomp profiles without a '..' element pass, as do AppArmor profile names, which are no paths: the API server accepts '/' and '..' in them.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("profiles/flux.json")}
				p.SecurityContext.AppArmorProfile = &v1alpha2.AppArmorProfile{Type: "Localhost", LocalhostProfile: ptr("/usr/bin/../flux")}
			}), withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr("./..flux/..json")}
				c.SecurityContext.AppArmorProfile = &v1alpha2.AppArmorProfile{Type: "Localhost", LocalhostProfile: ptr("k8s-apparmor-example-deny-write")}
			})),
		},
		"EscalationWithSysAdmin": {
			reason: "SYS_ADMIN is refused only with allowPrivilegeEscalation: false.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.AddCapabilities = []v1alpha2.Capability{"SYS_ADMIN"}
				c.SecurityContext.AllowPrivilegeEscalation = ptr(true)
			})),
		},
	}
	checkValid(t, cases)
}

func TestRestricted(t *testing.T) {
	uid := func(u int64) func(*v1alpha2.MiniClusterContainer) {
		return func(c *v1alpha2.MiniClusterContainer) { c.SecurityContext.RunAsUser = ptr(u) }
	}
	type want struct {
		restricted, services bool
		viewUID, viewGID     *int64
	}
	cases := map[string]struct {
		reason string
		args   *v1alpha2.MiniCluster
		want   want
	}{
		"Root": {
			reason: "hello-world runs as its image's user: its pods keep what it asks for.",
			args:   mc(),
		},
		"NonRootRunner": {
			reason: "A runner as uid 1000 that asks for nothing privileged: restricted, and the view copies as the runner.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsUser = ptr(int64(1000))
				c.SecurityContext.RunAsGroup = ptr(int64(1001))
			})),
			want: want{restricted: true, viewUID: ptr(int64(1000)), viewGID: ptr(int64(1001))},
		},
		"PodUser": {
			reason: "The pod's runAsUser runs every container, the init container too: nothing to add to it.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.SecurityContext.RunAsUser = ptr(int64(1000)) })),
			want:   want{restricted: true},
		},
		"ViewOwnGroup": {
			reason: "The view keeps the group it names.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsUser = ptr(int64(1000))
				c.SecurityContext.RunAsGroup = ptr(int64(1001))
			}), withFlux(func(f *v1alpha2.FluxSpec) { f.Container.SecurityContext.RunAsGroup = ptr(int64(7)) })),
			want: want{restricted: true, viewUID: ptr(int64(1000))},
		},
		"ViewAsRoot": {
			reason: "An init container that asks for uid 0 conflicts with runAsNonRoot.",
			args:   mc(withRunner(uid(1000)), withFlux(func(f *v1alpha2.FluxSpec) { f.Container.SecurityContext.RunAsUser = ptr(int64(0)) })),
		},
		"SidecarAsImageUser": {
			reason: "A sidecar without a uid may run as root: runAsNonRoot would stop it.",
			args:   mc(withRunner(uid(1000)), withSidecar("db")),
		},
		"NetBindService": {
			reason: "NET_BIND_SERVICE is the one capability restricted allows.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsUser = ptr(int64(1000))
				c.SecurityContext.Capabilities = &v1alpha2.Capabilities{Add: []v1alpha2.Capability{"NET_BIND_SERVICE"}}
			})),
			want: want{restricted: true, viewUID: ptr(int64(1000))},
		},
		"Privileged": {
			reason: "Each privilege the claim asks for keeps the restricted settings away.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.SecurityContext.RunAsUser = ptr(int64(1000))
				c.SecurityContext.AddCapabilities = []v1alpha2.Capability{"SYS_PTRACE"}
			})),
		},
		"Unconfined": {
			reason: "An Unconfined seccomp profile conflicts with RuntimeDefault.",
			args: mc(withRunner(uid(1000)), withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.SeccompProfile = &v1alpha2.SeccompProfile{Type: "Unconfined"}
			})),
		},
		"HostPID": {
			reason: "Host namespaces are a privilege.",
			args:   mc(withRunner(uid(1000)), withPod(func(p *v1alpha2.PodSpec) { p.HostPID = true })),
		},
		"HostPathVolume": {
			reason: "A hostPath volume is a privilege.",
			args:   mc(withRunner(uid(1000)), withVolume("data", v1alpha2.ContainerVolume{HostPath: "/data", Path: "/data"})),
		},
		"Services": {
			reason: "Services with their own uid get the settings too; the pod's runAsUser does not reach the services Pod.",
			args:   mc(withRunner(uid(1000)), withServices(sidecar("db", uid(999)))),
			want:   want{restricted: true, services: true, viewUID: ptr(int64(1000))},
		},
		"ServicesAsImageUser": {
			reason: "A service without a uid of its own: the services Pod keeps what it asks for.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.SecurityContext.RunAsUser = ptr(int64(1000)) }), withServices(sidecar("db"))),
			want:   want{restricted: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if errs := validate(tc.args); len(errs) > 0 {
				t.Fatalf("%s\nnot valid: %v", tc.reason, errs)
			}
			u, g := ViewUser(tc.args)
			got := want{restricted: Restricted(tc.args), services: RestrictedServices(tc.args), viewUID: u, viewGID: g}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
