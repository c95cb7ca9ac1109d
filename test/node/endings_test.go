package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// How a MiniCluster ends and how its brokers stop, on the node (issue 20,
// item 4): every ending of the lead ends the MiniCluster within a minute,
// with the reason in the lead's termination message, and a stopped broker
// leaves the instance at once, as Flux means it to.

// stopsWithin is how long a broker pod may take to stop: far less than the
// 30 s grace period after which the kubelet kills a runner that ignores
// SIGTERM.
const stopsWithin = 15 * time.Second

// leadMessage is the termination message of the lead's runner once it has
// ended.
func leadMessage(t *testing.T, cp *harness.ControlPlane, ns string) string {
	t.Helper()
	var msg string
	eventually(t, 3*time.Minute, "the lead's runner ended", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "-o",
			`jsonpath={range .items[*]}{.status.containerStatuses[?(@.name=="flux-sample")].state.terminated.exitCode}{"\n"}{end}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) == "" {
			return fmt.Errorf("not yet")
		}
		msg = mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "-o",
			`jsonpath={.items[0].status.containerStatuses[?(@.name=="flux-sample")].state.terminated.message}`)
		return nil
	})
	return msg
}

// TestStrictPostFailingOnLeadEnds: under logging.strict a commands.post that
// fails only on the lead (results only it would have) ends the MiniCluster
// Failed within a minute, saying why; the Job does not replace the lead,
// which would wait for followers that have left.
func TestStrictPostFailingOnLeadEnds(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "strict-post")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, true, "spec", "logging", "strict")
		setContainer(o, "commands", map[string]any{
			"post": `if [ "$(hostname)" = flux-sample-0 ]; then echo "copying results"; cp /results/out.txt /tmp/; fi`,
		})
	}))
	msg := leadMessage(t, cp, ns)
	wantColumns(t, cp, ns, "flux-sample", time.Minute, map[string]string{"PHASE": "Failed"})
	first, words, _ := strings.Cut(msg, "\n")
	if want := "flux job on flux-sample-0 exited with 0; commands.post then failed with 1 (logging.strict)"; first != want {
		t.Errorf("the lead's termination message starts %q, want %q\n%s", first, want, msg)
	}
	// The last words are the job's own output (hello world); the hook's
	// output and error are in the lead's log, one kubectl logs away.
	if !strings.Contains(words, "hello world") || strings.Contains(words, "copying results") {
		t.Errorf("the lead's termination message must end with the job's own output, not the hook's:\n%s", msg)
	}
	if logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1"); !strings.Contains(logs, "copying results") || !strings.Contains(logs, "/results/out.txt") {
		t.Errorf("the lead's log must carry the hook's output and error:\n%s", logs)
	}
	if pods := mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "-o", "name"); strings.Count(strings.TrimSpace(pods), "\n") != 0 {
		t.Errorf("the lead was replaced: %s", pods)
	}
}

// TestBrokersStopAtOnce: a deleted broker pod, and a deleted MiniCluster's
// pods, are gone within seconds: the runner passes SIGTERM on to its broker.
func TestBrokersStopAtOnce(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stops")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "interactive", ns, nil))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"BROKERS": "4", "PHASE": "Running"})
	victim := strings.TrimSpace(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample,batch.kubernetes.io/job-completion-index=2", "-o", "name"))
	start := time.Now()
	mustKubectl(t, cp, "delete", "-n", ns, victim, "--wait=false")
	// The runner's own part: its container has ended (or the pod is gone).
	eventually(t, time.Minute, victim+"'s runner ended", func() error {
		out, err := kubectl(t, cp, "get", "-n", ns, victim, "--ignore-not-found", "-o",
			`jsonpath={.status.containerStatuses[?(@.name=="flux-sample")].state.terminated.exitCode}`)
		if err != nil {
			return err
		}
		if exists := strings.TrimSpace(mustKubectl(t, cp, "get", "-n", ns, victim, "--ignore-not-found", "-o", "name")); exists != "" && out == "" {
			return fmt.Errorf("still running")
		}
		return nil
	})
	if took := time.Since(start); took > stopsWithin {
		t.Errorf("%s's runner took %s to stop, want under %s", victim, took.Round(100*time.Millisecond), stopsWithin)
	}
	mustKubectl(t, cp, "wait", "-n", ns, victim, "--for=delete", "--timeout=1m")
	t.Logf("delete %s -> gone in %s", victim, time.Since(start).Round(100*time.Millisecond))
	wantColumns(t, cp, ns, "flux-sample", 2*time.Minute, map[string]string{"BROKERS": "4", "PHASE": "Running"})

	start = time.Now()
	mustKubectl(t, cp, "delete", "minicluster", "flux-sample", "-n", ns, "--wait=false")
	eventually(t, 2*time.Minute, "the MiniCluster's pods gone", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("still there: %q (%v)", out, err)
		}
		return nil
	})
	if took := time.Since(start); took > stopsWithin+5*time.Second {
		t.Errorf("the MiniCluster's pods took %s to go, want under %s", took.Round(100*time.Millisecond), stopsWithin+5*time.Second)
	}
}

// TestScaleDownLeavesOthersFull: the broker a scale-down removes says
// goodbye (offline), so the others stay full; none is lost.
func TestScaleDownLeavesOthersFull(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "scale-down")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "elastic", ns, nil))
	mustKubectl(t, cp, "scale", "minicluster/flux-sample", "-n", ns, "--replicas=3")
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"SIZE": "3", "BROKERS": "3", "PHASE": "Running"})
	lead := leadPod(t, cp, ns)
	overlay := func() string {
		return mustKubectl(t, cp, "exec", "-n", ns, lead, "--", "bash", "-c", `. /mnt/flux/flux-view.sh && flux proxy "$fluxsocket" flux overlay status --no-pretty`)
	}
	eventually(t, time.Minute, "rank 2 full", func() error {
		if o := overlay(); !strings.Contains(o, "2 flux-sample-2: full") {
			return fmt.Errorf("flux overlay status:\n%s", o)
		}
		return nil
	})
	start := time.Now()
	mustKubectl(t, cp, "scale", "minicluster/flux-sample", "-n", ns, "--replicas=2")
	eventually(t, 2*time.Minute, "index 2's pod gone", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample,batch.kubernetes.io/job-completion-index=2", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("still there: %q (%v)", out, err)
		}
		return nil
	})
	if took := time.Since(start); took > stopsWithin+5*time.Second {
		t.Errorf("scaling down took %s to remove index 2's pod, want under %s", took.Round(100*time.Millisecond), stopsWithin+5*time.Second)
	}
	o := overlay()
	t.Logf("flux overlay status after the scale-down:\n%s", o)
	for _, want := range []string{"1 flux-sample-1: full", "2 flux-sample-2: offline"} {
		if !strings.Contains(o, want) {
			t.Errorf("flux overlay status: want %q in\n%s", want, o)
		}
	}
	for _, bad := range []string{"lost", "degraded"} {
		if strings.Contains(o, bad) {
			t.Errorf("flux overlay status: the removed broker must leave, not be %s:\n%s", bad, o)
		}
	}
	wantColumns(t, cp, ns, "flux-sample", time.Minute, map[string]string{"SIZE": "2", "BROKERS": "2", "PHASE": "Running"})
}
