package entrypoint

// The Flux RESTful API pattern (examples/restful-api, docs/restful-api.md),
// run under bash with a fake flux: what runs on the lead and on a worker.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestRestfulAPIExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../examples/restful-api/claim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// What Kubernetes gives the runner from the claim's environment and
	// secrets; the script must hand it on to the server.
	env := map[string]string{
		"FLUX_REQUIRE_AUTH": "true", "FLUX_NUMBER_NODES": "2",
		"FLUX_USER": "fluxuser", "FLUX_TOKEN": "a-token", "FLUX_SECRET_KEY": "a-key",
	}
	server := words("uvicorn", "app.main:app", "--host=0.0.0.0", "--port=5000")
	cases := map[string]struct {
		reason     string
		host       string
		wantCalls  func(mp string) [][]string
		wantEvents []string
	}{
		"Lead": {
			reason: "The lead makes the database (commands.brokerPre), then the server is the lead broker's initial program (launcher): no flux submit.",
			host:   leadHost,
			wantCalls: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, server...)}
			},
			wantEvents: []string{
				"flux R", "alembic revision --autogenerate -m Create initial tables", "alembic upgrade head",
				"python3 app/db/init_db.py init", "flux start",
			},
		},
		"Worker": {
			reason: "A worker runs a follower broker and neither the database nor the server.",
			host:   workHost,
			wantCalls: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
			},
			wantEvents: []string{"flux R", "flux start"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mc := &v1alpha2.MiniCluster{}
			if err := yaml.UnmarshalStrict(b, mc); err != nil {
				t.Fatal(err)
			}
			sb := newSandbox(t)
			sb.use(mc)
			v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
			for _, tool := range []string{"alembic", "python3"} {
				mustWrite(t, filepath.Join(sb.bin, tool), "#!/bin/sh\necho \""+tool+" $*\" >> \"${EVENTS:?}\"\n", 0o755)
			}
			r := sb.run(t, runner(t, mc, sb.paths), tc.host, env)
			if r.exit != 0 {
				t.Fatalf("%s\nexit %d\nstdout:\n%s\nstderr:\n%s", tc.reason, r.exit, r.stdout, r.stderr)
			}
			if diff := cmp.Diff(tc.wantCalls(sb.mp), r.calls); diff != "" {
				t.Errorf("%s\nflux calls: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantEvents, r.events); diff != "" {
				t.Errorf("%s\nevents: -want, +got:\n%s", tc.reason, diff)
			}
			got := r.envs[len(r.envs)-1]
			for k, v := range env {
				if got[k] != v {
					t.Errorf("%s\nflux start has %s=%q, want %q", tc.reason, k, got[k], v)
				}
			}
		})
	}
}
