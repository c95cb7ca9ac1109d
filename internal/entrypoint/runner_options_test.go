package entrypoint

// What the runner gives every broker: its -S options (BrokerOptions) and its
// environment (flux.environment, the view, HOME).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerBrokerOptions: logging, logLevel, connectTimeout, topology,
// minSize and disableSocket as flux start options (reference §3.2).
func TestRunnerBrokerOptions(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
		"NotQuiet": {
			reason:   "Without quiet the runner prints its progress and R; log level 6.",
			command:  "echo hello world",
			contains: []string{"fake", "flux-sample-0", "FAKE-FLUX-OUTPUT"},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
		},
		"LogLevel": {
			reason:  "flux.logLevel sets -Slog-stderr-level.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.LogLevel = ptrTo(int32(3)) },
			want: func(mp string) [][]string {
				o := std()
				o.level = 3
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"LogLevelQuiet": {
			reason:  "quiet forces -Slog-stderr-level=0 whatever logLevel says.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.LogLevel = ptrTo(int32(7))
				mc.Spec.Logging.Quiet = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, submit(hello...)...)}
			},
		},
		"Zeromq": {
			reason:  "logging.zeromq adds -Stbon.zmqdebug=1.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Zeromq = true },
			want: func(mp string) [][]string {
				o := std()
				o.zmq = true
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"ConnectTimeoutEmpty": {
			reason:  `connectTimeout "" leaves Flux's default: no option.`,
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.ConnectTimeout = ptrTo("") },
			want: func(mp string) [][]string {
				o := std()
				o.timeout = ""
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"ConnectTimeout10s": {
			reason:  "connectTimeout is passed through.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.ConnectTimeout = ptrTo("10s") },
			want: func(mp string) [][]string {
				o := std()
				o.timeout = "10s"
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"TopologyMinSizeDisableSocket": {
			reason:  "topology, minSize (quorum) and disableSocket shape the options, on workers too.",
			command: "echo hello world",
			host:    workHost,
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Topology = "kary:2"
				mc.Spec.MinSize = 2
				mc.Spec.Flux.DisableSocket = true
			},
			want: func(mp string) [][]string {
				o := std()
				o.topo, o.quorum, o.noSocket = "kary:2", 2, true
				return [][]string{encode(), start(mp, o, nil)}
			},
		},
	})
}

// TestRunnerEnvironment: the environment Flux sees and flux-view.sh sets:
// flux.environment, pythonPath, the view (or none), the scheduler and HOME.
func TestRunnerEnvironment(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
		"EnvironmentAndPythonPath": {
			reason:  "flux.environment is exported to Flux and in flux-view.sh; pythonPath lands in PYTHONPATH of both.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Environment = map[string]string{"B_VAR": "two words", "A_VAR": "1"}
				mc.Spec.Flux.Container.PythonPath = "/opt/py/site-packages"
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				env := r.envs[1]
				for k, v := range map[string]string{"A_VAR": "1", "B_VAR": "two words"} {
					if env[k] != v {
						t.Errorf("flux saw %s=%q, want %q", k, env[k], v)
					}
				}
				if !strings.HasSuffix(env["PYTHONPATH"], ":/opt/py/site-packages") {
					t.Errorf("flux saw PYTHONPATH=%q", env["PYTHONPATH"])
				}
				got := sourceView(t, sb, "A_VAR", "B_VAR", "PYTHONPATH", "fluxsocket", "PATH", "LD_LIBRARY_PATH")
				want := map[string]string{
					"A_VAR": "1", "B_VAR": "two words", "PYTHONPATH": ":/opt/py/site-packages",
					"fluxsocket": "local://" + sb.mp + "/config/run/flux/local",
					"PATH":       sb.bin + ":/usr/bin:/bin:" + sb.mp + "/view/bin", "LD_LIBRARY_PATH": ":" + sb.mp + "/view/lib",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("after sourcing flux-view.sh: -want, +got:\n%s", diff)
				}
			},
		},
		"ViewPythonPath": {
			reason:  "Without pythonPath the view's site-packages is found and written to flux-view.sh.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				_ = os.MkdirAll(filepath.Join(sb.mp, "view/lib/python3.12/site-packages"), 0o755)
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				site := sb.mp + "/view/lib/python3.12/site-packages"
				if got := r.envs[1]["PYTHONPATH"]; got != ":"+site {
					t.Errorf("flux saw PYTHONPATH=%q, want %q", got, ":"+site)
				}
				if got := sourceView(t, sb, "PYTHONPATH")["PYTHONPATH"]; got != ":"+site {
					t.Errorf("flux-view.sh sets PYTHONPATH=%q, want %q", got, ":"+site)
				}
			},
		},
		"SchedulerSimple": {
			reason:  "scheduler.simple does not load fluxion.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Scheduler.Simple = true },
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if v, ok := r.envs[1]["FLUX_RC_EXTRA"]; ok {
					t.Errorf("FLUX_RC_EXTRA=%q with scheduler.simple", v)
				}
			},
		},
		"ContainerDisable": {
			reason:  "flux.container.disable: Flux comes from the image; no view on PATH, no software copy.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Container.Disable = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				env := r.envs[1]
				if strings.Contains(env["PATH"], "/view") || env["FLUX_RC_EXTRA"] != "" || strings.Contains(env["PYTHONPATH"], "view") {
					t.Errorf("disabled view leaked into the environment: PATH=%q FLUX_RC_EXTRA=%q PYTHONPATH=%q", env["PATH"], env["FLUX_RC_EXTRA"], env["PYTHONPATH"])
				}
				if exists(sb.paths.Software) {
					t.Errorf("the software tree must not be copied")
				}
				got := sourceView(t, sb, "fluxsocket", "PATH")
				if got["fluxsocket"] != "local://"+sb.mp+"/config/run/flux/local" || strings.Contains(got["PATH"], "/view") {
					t.Errorf("flux-view.sh: %v", got)
				}
			},
		},
		"HomeIsRoot": {
			reason:  "A user whose HOME is / gets HOME=/home/flux-operator (here relocated) and USER=flux-operator.",
			command: "echo hello world",
			env:     map[string]string{"HOME": "/"},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				if env := r.envs[1]; env["HOME"] != sb.paths.Home || env["USER"] != "flux-operator" {
					t.Errorf("flux saw HOME=%q USER=%q", env["HOME"], env["USER"])
				}
			},
		},
	})
}
