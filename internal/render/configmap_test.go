package render

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

func TestConfigMap(t *testing.T) {
	type want struct {
		name string
		keys []string
	}
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   want
	}{
		"HelloWorld": {
			reason: "The ConfigMap the pods mount as <name>-entrypoint has broker.toml, the host list, the init script and the runner's script.",
			want: want{
				name: "flux-sample-entrypoint",
				keys: []string{entrypoint.BrokerConfigKey, entrypoint.InitKey, entrypoint.HostlistKey, entrypoint.RunnerKey(0)},
			},
		},
		"Sidecars": {
			reason: "A wrapped sidecar's script is there under its own index (the command the container runs); a sidecar that keeps its entrypoint has none.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers = []v1alpha2.MiniClusterContainer{
					{Name: "wrapped", Image: "nginx"},
					{Name: "own", Image: "nginx", NoWrapEntrypoint: true},
					{Image: "rockylinux:9", Command: "hostname", RunFlux: true},
				}
			}},
			want: want{
				name: "flux-sample-entrypoint",
				keys: []string{entrypoint.BrokerConfigKey, entrypoint.InitKey, entrypoint.HostlistKey, entrypoint.SidecarKey(0), entrypoint.RunnerKey(2)},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, tc.opts...)
			cm := ConfigMap(in)
			got := want{name: cm.Name, keys: slices.Sorted(maps.Keys(cm.Data))}
			tc.want.keys = slices.Sorted(maps.Keys(setOf(tc.want.keys...)))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nConfigMap(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(in.Files, cm.Data); diff != "" {
				t.Errorf("%s\nConfigMap(...) data is not the plan's files: -plan, +got:\n%s", tc.reason, diff)
			}
			// A second render from the same plan must not see what a caller
			// did to the first one's objects.
			cm.Data[entrypoint.HostlistKey] = "changed"
			if in.Files[entrypoint.HostlistKey] == "changed" {
				t.Errorf("%s\nchanging the rendered ConfigMap changed the plan's files", tc.reason)
			}
		})
	}
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}
