package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

var wantBrokerPort = corev1.ServicePort{Name: "flux-broker", Port: 8050, TargetPort: intstr.FromInt32(8050), Protocol: corev1.ProtocolTCP}

func TestBrokerService(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   corev1.ServiceSpec
	}{
		"Headless": {
			reason: "By default the Service is headless over every broker, so each pod <name>-<i> resolves, even before it is ready: brokers must find each other to become ready.",
			want: corev1.ServiceSpec{
				ClusterIP:                corev1.ClusterIPNone,
				PublishNotReadyAddresses: true,
				Selector:                 map[string]string{plan.LabelJobName: "flux-sample"},
			},
		},
		"Minimal": {
			reason: "flux.minimalService exposes only the lead broker (completion index 0), on the broker port.",
			opts:   []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) { m.Spec.Flux.MinimalService = true }},
			want: corev1.ServiceSpec{
				Type:                     corev1.ServiceTypeClusterIP,
				PublishNotReadyAddresses: true,
				Selector:                 map[string]string{plan.LabelJobName: "flux-sample", plan.LabelCompletionIndex: "0"},
				Ports:                    []corev1.ServicePort{wantBrokerPort},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, tc.opts...)
			svc := BrokerService(in)
			if diff := cmp.Diff(tc.want, svc.Spec); diff != "" {
				t.Errorf("%s\nBrokerService(...).Spec: -want, +got:\n%s", tc.reason, diff)
			}
			// The Service's name is the pods' subdomain: a mismatch leaves
			// the brokers without DNS names.
			if sub := Job(in).Spec.Template.Spec.Subdomain; svc.Name != sub {
				t.Errorf("%s\nBrokerService(...) is named %q, the pods' subdomain is %q", tc.reason, svc.Name, sub)
			}
		})
	}
}

func TestLeadBrokerService(t *testing.T) {
	cases := map[string]struct {
		reason   string
		nodePort int32
		want     corev1.ServiceSpec
	}{
		"NodePort": {
			reason:   "A burst root exposes rank 0's broker port on the NodePort it asks for, so burst clusters can be told the address in advance.",
			nodePort: 30093,
			want: corev1.ServiceSpec{
				Type:                     corev1.ServiceTypeNodePort,
				PublishNotReadyAddresses: true,
				Selector:                 map[string]string{plan.LabelJobName: "flux-sample", plan.LabelCompletionIndex: "0"},
				Ports:                    []corev1.ServicePort{func() corev1.ServicePort { p := wantBrokerPort; p.NodePort = 30093; return p }()},
			},
		},
		"Allocated": {
			reason: "Without a nodePort Kubernetes allocates one: the port is left 0, not invented.",
			want: corev1.ServiceSpec{
				Type:                     corev1.ServiceTypeNodePort,
				PublishNotReadyAddresses: true,
				Selector:                 map[string]string{plan.LabelJobName: "flux-sample", plan.LabelCompletionIndex: "0"},
				Ports:                    []corev1.ServicePort{wantBrokerPort},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}}
				m.Spec.Flux.Bursting.LeadBrokerService.NodePort = tc.nodePort
			})
			svc := LeadBrokerService(in)
			if diff := cmp.Diff(tc.want, svc.Spec); diff != "" {
				t.Errorf("%s\nLeadBrokerService(...).Spec: -want, +got:\n%s", tc.reason, diff)
			}
			if svc.Name != "flux-sample-lead-broker" {
				t.Errorf("%s\nLeadBrokerService(...) is named %q, want flux-sample-lead-broker (the burst controller looks it up by name)", tc.reason, svc.Name)
			}
			// Bursts connect to the port the Service forwards to: it must be
			// the one the lead's broker.toml binds.
			bind := fmt.Sprintf("default_port = %d", svc.Spec.Ports[0].TargetPort.IntVal)
			if !strings.Contains(in.Files[entrypoint.BrokerConfigKey], bind) {
				t.Errorf("%s\nLeadBrokerService(...) forwards to a port broker.toml does not bind (no %q in it)", tc.reason, bind)
			}
		})
	}
}

func TestContainerServices(t *testing.T) {
	type service struct {
		name string
		spec corev1.ServiceSpec
	}
	selector := map[string]string{plan.LabelName: "flux-sample"}
	cases := map[string]struct {
		reason     string
		containers []v1alpha2.MiniClusterContainer
		want       []service
	}{
		"SidecarsWithPorts": {
			reason: "Each sidecar with ports gets a ClusterIP Service of its own name with one TCP port per container port, in the order of spec.containers.",
			containers: []v1alpha2.MiniClusterContainer{
				{Image: "rockylinux:9", Command: "hostname", RunFlux: true},
				{Name: "web", Image: "nginx", Ports: []int32{80, 443}},
				{Name: "api", Image: "api", Ports: []int32{8080}},
			},
			want: []service{
				{name: "web", spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: []corev1.ServicePort{
					{Name: "port-80", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP},
					{Name: "port-443", Port: 443, TargetPort: intstr.FromInt32(443), Protocol: corev1.ProtocolTCP},
				}}},
				{name: "api", spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector, Ports: []corev1.ServicePort{
					{Name: "port-8080", Port: 8080, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
				}}},
			},
		},
		"RunnerAndPortless": {
			reason: "The runner's ports are reached through the broker Service, and a sidecar without ports has nothing to expose: neither gets a Service.",
			containers: []v1alpha2.MiniClusterContainer{
				{Image: "rockylinux:9", Command: "hostname", RunFlux: true, Ports: []int32{9000}},
				{Name: "quiet", Image: "busybox"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) { m.Spec.Containers = tc.containers })
			var got []service
			for _, svc := range ContainerServices(in) {
				got = append(got, service{name: svc.Name, spec: svc.Spec})
				// A selector the broker pods do not carry selects nothing.
				labels := Job(in).Spec.Template.Labels
				for k, v := range svc.Spec.Selector {
					if labels[k] != v {
						t.Errorf("%s\nService %s selects %s=%s, which the broker pods do not carry", tc.reason, svc.Name, k, v)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(service{})); diff != "" {
				t.Errorf("%s\nContainerServices(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
