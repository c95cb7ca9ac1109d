package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// securityOf is every security setting of a pod: the pod's and each
// container's, init container first.
type securityOf struct {
	Pod        *corev1.PodSecurityContext
	Containers []*corev1.SecurityContext
}

func security(p corev1.PodSpec) securityOf {
	out := securityOf{Pod: p.SecurityContext}
	for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
		out.Containers = append(out.Containers, c.SecurityContext)
	}
	return out
}

func TestSecurityContexts(t *testing.T) {
	// restricted is what restricted requires of a container.
	restricted := func(sc corev1.SecurityContext) *corev1.SecurityContext {
		sc.AllowPrivilegeEscalation = ptr.To(false)
		if sc.Capabilities == nil {
			sc.Capabilities = &corev1.Capabilities{}
		}
		sc.Capabilities.Drop = []corev1.Capability{"ALL"}
		return &sc
	}
	runtimeDefault := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	cases := map[string]struct {
		reason   string
		mutate   func(*v1alpha2.MiniCluster)
		brokers  securityOf
		services *securityOf
	}{
		"Root": {
			reason:  "hello-world asks for nothing: no security context at all, as before.",
			brokers: securityOf{Containers: []*corev1.SecurityContext{nil, nil}},
		},
		"NonRootRunner": {
			reason: "A runner as uid 1000: the pod and each container get what restricted requires, and the view's init container runs as the runner.",
			mutate: func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers[0].SecurityContext = v1alpha2.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))}
			},
			brokers: securityOf{
				Pod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
				Containers: []*corev1.SecurityContext{
					restricted(corev1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))}),
					restricted(corev1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))}),
				},
			},
		},
		"ClaimSettingsKept": {
			reason: "What the claim sets is kept over the restricted settings (a Localhost profile, its own drop list); both spellings of added capabilities merge.",
			mutate: func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.SecurityContext = v1alpha2.PodSecurityContext{
					RunAsUser: ptr.To(int64(1000)), SeccompProfile: &v1alpha2.SeccompProfile{Type: "Localhost", LocalhostProfile: ptr.To("hpc.json")},
					FSGroupChangePolicy: "OnRootMismatch", SupplementalGroupsPolicy: "Strict",
					Sysctls: []v1alpha2.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}},
				}
				m.Spec.Containers[0].SecurityContext = v1alpha2.SecurityContext{
					AddCapabilities:        []v1alpha2.Capability{"NET_BIND_SERVICE"},
					Capabilities:           &v1alpha2.Capabilities{Add: []v1alpha2.Capability{"NET_BIND_SERVICE"}, Drop: []v1alpha2.Capability{"NET_RAW"}},
					ReadOnlyRootFilesystem: ptr.To(true), ProcMount: "Default",
					SELinuxOptions:  &v1alpha2.SELinuxOptions{Level: "s0:c1"},
					AppArmorProfile: &v1alpha2.AppArmorProfile{Type: "RuntimeDefault"},
				}
			},
			brokers: securityOf{
				Pod: &corev1.PodSecurityContext{
					RunAsUser: ptr.To(int64(1000)), RunAsNonRoot: ptr.To(true),
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("hpc.json")},
					FSGroupChangePolicy:      ptr.To(corev1.FSGroupChangeOnRootMismatch),
					SupplementalGroupsPolicy: ptr.To(corev1.SupplementalGroupsPolicyStrict),
					Sysctls:                  []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}},
				},
				Containers: []*corev1.SecurityContext{
					restricted(corev1.SecurityContext{}),
					{
						AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
						ProcMount:       ptr.To(corev1.DefaultProcMount),
						SELinuxOptions:  &corev1.SELinuxOptions{Level: "s0:c1"},
						AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault},
						Capabilities:    &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"NET_RAW"}},
					},
				},
			},
		},
		"Privileged": {
			reason: "A privileged runner keeps what it asks for and gets nothing more.",
			mutate: func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers[0].SecurityContext = v1alpha2.SecurityContext{RunAsUser: ptr.To(int64(1000)), Privileged: true}
			},
			brokers: securityOf{Containers: []*corev1.SecurityContext{nil, {RunAsUser: ptr.To(int64(1000)), Privileged: ptr.To(true)}}},
		},
		"Services": {
			reason: "A service with its own uid: the services Pod gets the restricted settings too.",
			mutate: func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.SecurityContext.RunAsUser = ptr.To(int64(1000))
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", SecurityContext: v1alpha2.SecurityContext{RunAsUser: ptr.To(int64(999))}})
			},
			brokers: securityOf{
				Pod:        &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
				Containers: []*corev1.SecurityContext{restricted(corev1.SecurityContext{}), restricted(corev1.SecurityContext{})},
			},
			services: &securityOf{
				Pod:        &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
				Containers: []*corev1.SecurityContext{restricted(corev1.SecurityContext{RunAsUser: ptr.To(int64(999))})},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var opts []func(*v1alpha2.MiniCluster)
			if tc.mutate != nil {
				opts = append(opts, tc.mutate)
			}
			in := input(t, opts...)
			if diff := cmp.Diff(tc.brokers, security(Job(in).Spec.Template.Spec)); diff != "" {
				t.Errorf("%s\nbroker pods: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.services != nil {
				if diff := cmp.Diff(*tc.services, security(ServicesPod(in).Spec)); diff != "" {
					t.Errorf("%s\nservices Pod: -want, +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}
