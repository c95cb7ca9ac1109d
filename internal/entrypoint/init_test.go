package entrypoint

// The init container's script (reference §2.4). Its view copy reads the
// absolute paths /opt/view and /opt/software of the view image, which a
// test cannot relocate: the copy itself is only exercised through the
// flux.container.disable variant and the failure without a view.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestInit(t *testing.T) {
	brokerToml := "[bootstrap]\ncurve_cert = \"x\"\n# $HOME $(touch pwned) `touch pwned` EOT\n"
	hostlist := "flux-sample-[0-3]"
	_, viewErr := os.Stat("/opt/view")
	hasView := viewErr == nil

	cases := map[string]struct {
		reason   string
		mutate   func(mc *v1alpha2.MiniCluster)
		skip     string
		wantExit int
		wantDone bool
		stdout   *string
	}{
		"DisableQuiet": {
			reason:   "flux.container.disable: the config is installed, no view is required, and quiet prints nothing.",
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.Disable = true; mc.Spec.Logging.Quiet = true },
			wantDone: true,
			stdout:   ptrTo(""),
		},
		"Disable": {
			reason:   "Without quiet broker.toml is printed.",
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.Disable = true },
			wantDone: true,
		},
		"NoViewFails": {
			reason:   "With the view enabled but no /opt/view in the image the init container fails visibly (set -e) and never marks itself done.",
			skip:     map[bool]string{true: "/opt/view exists on this machine"}[hasView],
			wantExit: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			sb := newSandbox(t)
			mp := filepath.Join(sb.root, "fresh-mp") // the init container starts from an empty volume
			mc := claim(4, "echo hi", func(mc *v1alpha2.MiniCluster) {
				if tc.mutate != nil {
					tc.mutate(mc)
				}
				mc.Spec.Flux.Container.MountPath = mp
			})
			mustWrite(t, filepath.Join(sb.paths.Entrypoints, BrokerConfigKey), brokerToml, 0o644)
			mustWrite(t, filepath.Join(sb.paths.Entrypoints, HostlistKey), hostlist, 0o644)
			script := Init(mc, plan(t, mc, sb.paths))
			bashSyntax(t, tc.reason, script)
			r := sb.run(t, script, leadHost, nil)
			if (r.exit == 0) != (tc.wantExit == 0) {
				t.Fatalf("%s\nexit = %d, want %d\nstderr:\n%s", tc.reason, r.exit, tc.wantExit, r.stderr)
			}
			if got := exists(filepath.Join(mp, "flux-operator-done.txt")); got != tc.wantDone {
				t.Errorf("%s\nflux-operator-done.txt exists = %v, want %v", tc.reason, got, tc.wantDone)
			}
			if tc.stdout != nil {
				if diff := cmp.Diff(*tc.stdout, r.stdout); diff != "" {
					t.Errorf("%s\nstdout: -want, +got:\n%s", tc.reason, diff)
				}
			}
			noCanary(t, tc.reason, sb)
			if tc.wantExit != 0 {
				return
			}
			for file, want := range map[string]string{
				"config/etc/flux/config/broker.toml": brokerToml,
				"config/etc/flux/system/hostlist":    hostlist,
			} {
				if diff := cmp.Diff(want, readFile(t, filepath.Join(mp, file))); diff != "" {
					t.Errorf("%s\n%s must be a verbatim copy: -want, +got:\n%s", tc.reason, file, diff)
				}
			}
			for _, d := range []string{"config/etc/flux/system/cron.d", "config/etc/flux/config", "view", "software"} {
				if st, err := os.Stat(filepath.Join(mp, d)); err != nil || !st.IsDir() {
					t.Errorf("%s\n%s was not created: %v", tc.reason, d, err)
				}
			}
			// The runner, maybe another user, writes R and its certificate
			// and creates the rundir and statedir Flux needs it to own.
			for _, d := range []string{"config/etc/flux/system", "config/run", "config/var/lib", "config/curve"} {
				st, err := os.Stat(filepath.Join(mp, d))
				if err != nil {
					t.Errorf("%s\n%s was not created: %v", tc.reason, d, err)
					continue
				}
				if want := os.ModeDir | os.ModeSticky | 0o777; st.Mode() != want {
					t.Errorf("%s\n%s has mode %v, want %v: anyone may write, no one replace another's files", tc.reason, d, st.Mode(), want)
				}
			}
			for _, d := range []string{"config/run/flux", "config/var/lib/flux"} {
				if exists(filepath.Join(mp, d)) {
					t.Errorf("%s\n%s must be left to the runner, which must own it", tc.reason, d)
				}
			}
			if len(r.calls) != 0 {
				t.Errorf("%s\nthe init script must not call flux (R is encoded by the runner): %q", tc.reason, r.calls)
			}
		})
	}
}
