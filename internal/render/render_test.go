package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestRender(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   []string
	}{
		"HelloWorld": {
			reason: "A plain MiniCluster composes its scripts, its own certificate, the broker Service and the Job, the Job last.",
			want:   []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyJob},
		},
		"OwnCurveCertSecret": {
			reason: "A claim that names its own certificate Secret gets none composed: the function must not own, and so delete, the user's Secret.",
			opts:   []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) { m.Spec.Flux.CurveCertSecret = "my-cert" }},
			want:   []string{KeyEntrypoint, KeyService, KeyJob},
		},
		"SidecarPorts": {
			reason: "Each non-runner container with ports gets a Service, keyed by its name so two sidecars never share a resource name.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers[0].RunFlux = true
				m.Spec.Containers = append(m.Spec.Containers,
					v1alpha2.MiniClusterContainer{Name: "web", Image: "nginx", Ports: []int32{80}},
					v1alpha2.MiniClusterContainer{Name: "api", Image: "nginx", Ports: []int32{8080}},
				)
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, "service-web", "service-api", KeyJob},
		},
		"BurstRoot": {
			reason: "The root of a burst exposes its lead broker; a burst cluster (leadBroker set) does not.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}}
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyLeadBroker, KeyJob},
		},
		"Services": {
			reason: "spec.services adds the services Pod.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyServicesPod, KeyJob},
		},
		"ServicesWhileRunning": {
			reason: "The services Pod stays while the cluster runs.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
				m.Status.Phase = v1alpha2.PhaseRunning
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyServicesPod, KeyJob},
		},
		"ServicesAfterSuccess": {
			reason: "Once the cluster has succeeded the services Pod goes without spec.cleanup (no Job's pod, nothing else would stop it), and the Job stays with its pods and logs.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
				m.Status.Phase = v1alpha2.PhaseSucceeded
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyJob},
		},
		"ServicesAfterFailure": {
			reason: "A failed cluster has finished too: its services Pod goes.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
				m.Status.Phase = v1alpha2.PhaseFailed
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyJob},
		},
		"CleanedUp": {
			reason: "spec.cleanup on a finished cluster removes the Job and the services Pod, and keeps the rest.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
				m.Spec.Cleanup = true
				m.Status.Phase = v1alpha2.PhaseSucceeded
			}},
			want: []string{KeyEntrypoint, KeyCurveCert, KeyService},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, o := range Render(input(t, tc.opts...)) {
				got = append(got, o.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRender(...): -want, +got resource names:\n%s", tc.reason, diff)
			}
		})
	}
}
