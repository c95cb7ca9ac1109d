package node_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// TestFluxSeesThePodsCores runs an interactive MiniCluster of two brokers
// whose runner is limited to 1 CPU (docs/minicluster.md, "What Flux
// sees"): Flux's own resource list shows one core on each broker, a job
// that asks for more cores than the instance has is refused by Flux, and
// one that fits runs. With flux.resources: node the brokers offer the
// node's cores, as hwloc counts them in the pod. GPUs are not on this
// node: internal/entrypoint's TestRunnerEncodesResources holds their R.
//
// Only real Flux says what it schedules on, so this runs with
// MC_FLUX_PREFIX (the stand-in reads the same R, but proves nothing of
// Flux).
func TestFluxSeesThePodsCores(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	if !realFlux() {
		t.Skip("what Flux schedules on is Flux's to show: set MC_FLUX_PREFIX (and MC_FLUX_RUNTIME_PACKAGES) to a flux-core install to run this with real Flux")
	}
	cases := map[string]struct {
		resources string // spec.flux.resources
		// nodeCores: each broker offers the node's cores rather than one.
		nodeCores bool
	}{
		"Pod":  {},
		"Node": {resources: "node", nodeCores: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := namespace(t, cp, "resources-"+strings.ToLower(name))
			mustKubectl(t, cp, "apply", "-f", manifest(t, "interactive", ns, func(o map[string]any) {
				_ = unstructured.SetNestedField(o, int64(2), "spec", "size")
				_ = unstructured.SetNestedField(o, int64(2), "spec", "minSize")
				if tc.resources != "" {
					_ = unstructured.SetNestedField(o, tc.resources, "spec", "flux", "resources")
				}
				// A limit of 1 CPU, a small request: the pods fit beside
				// the other tests' on a node of two.
				setContainer(o, "resources", map[string]any{
					"limits":   map[string]any{"cpu": "1"},
					"requests": map[string]any{"cpu": "100m"},
				})
			}))
			wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"BROKERS": "2", "PHASE": "Running"})
			lead := leadPod(t, cp, ns)
			inPod := func(cmd string) (string, error) {
				return kubectl(t, cp, "exec", "-n", ns, lead, "--", "bash", "-c", ". /mnt/flux/flux-view.sh && "+cmd)
			}
			// The instance's commands, as flux proxy "$fluxsocket" would
			// run them: the broker's socket as FLUX_URI.
			inFlux := func(cmd string) (string, error) {
				return inPod(`export FLUX_URI="$fluxsocket" && ` + cmd)
			}
			perBroker := 1
			if tc.nodeCores {
				out, err := inPod("flux R encode --local | flux R decode --count=core")
				if err != nil {
					t.Fatal(err)
				}
				if perBroker, err = strconv.Atoi(strings.TrimSpace(out)); err != nil || perBroker < 1 {
					t.Fatalf("hwloc's cores in the pod: %q (%v)", out, err)
				}
				t.Logf("hwloc counts %d cores in the pod", perBroker)
			}
			total := 2 * perBroker

			// Flux's view: every broker offers perBroker cores, no GPUs.
			var info string
			eventually(t, time.Minute, "both brokers' resources up", func() error {
				out, err := inFlux("flux resource info")
				info = strings.TrimSpace(out)
				if err != nil {
					return err
				}
				if want := fmt.Sprintf("2 Nodes, %d Cores, 0 GPUs", total); info != want {
					return fmt.Errorf("flux resource info: %q, want %q", info, want)
				}
				return nil
			})
			list, err := inFlux("flux resource list")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("flux resource info: %s\nflux resource list:\n%s", info, list)
			if want := regexp.MustCompile(fmt.Sprintf(`(?m)^\s*free\s+2\s+%d\s+0\s+flux-sample-\[0-1\]\s*$`, total)); !want.MatchString(list) {
				t.Errorf("flux resource list: want 2 nodes, %d cores, 0 GPUs free on flux-sample-[0-1] in\n%s", total, list)
			}
			short, err := inFlux("flux resource R | flux R decode --short")
			if err != nil {
				t.Fatal(err)
			}
			wantShort := "rank[0-1]/core0"
			if perBroker > 1 {
				wantShort = fmt.Sprintf("rank[0-1]/core[0-%d]", perBroker-1)
			}
			if got := strings.TrimSpace(short); got != wantShort {
				t.Errorf("flux resource R | flux R decode --short: %q, want %q: every broker offers %d cores", got, wantShort, perBroker)
			}

			// A job that fits runs; one that asks for more cores than
			// the instance has is refused by Flux, not oversubscribed.
			fits := fmt.Sprintf("flux run -N2 -n%d hostname", total)
			if out, err := inFlux(fits); err != nil {
				t.Errorf("%s: %v", fits, err)
			} else if !strings.Contains(out, "flux-sample-0") || !strings.Contains(out, "flux-sample-1") {
				t.Errorf("%s: want both brokers in\n%s", fits, out)
			}
			tooMany := fmt.Sprintf("flux run -n%d hostname", total+1)
			out, err := inFlux(tooMany + " 2>&1")
			t.Logf("%s:\n%s", tooMany, out)
			if err == nil {
				t.Errorf("%s ran on an instance of %d cores: Flux must refuse it", tooMany, total)
			}
			if !strings.Contains(out, "unsatisfiable") {
				t.Errorf("%s: want Flux's unsatisfiable request in\n%s", tooMany, out)
			}
		})
	}
}
