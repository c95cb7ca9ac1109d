package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// wantColumns waits until `kubectl get minicluster` shows want (column name
// to value).
func wantColumns(t *testing.T, cp *harness.ControlPlane, ns, name string, timeout time.Duration, want map[string]string) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%s shows %v", name, want), func() error {
		c, err := columns(t, cp, ns, name)
		if err != nil {
			return err
		}
		for k, v := range want {
			if c[k] != v {
				return fmt.Errorf("%s %q, want %q (row %v)", k, c[k], v, c)
			}
		}
		return nil
	})
}

// TestScaleWithRealPods scales a running MiniCluster 2 -> 4 -> 3 with
// kubectl scale, as the README shows: the added brokers join the running
// instance and BROKERS follows; the removed one leaves.
func TestScaleWithRealPods(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "scale")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "elastic", ns, nil))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"SIZE": "2", "BROKERS": "2", "PHASE": "Running"})
	for _, size := range []string{"4", "3"} {
		mustKubectl(t, cp, "scale", "minicluster/flux-sample", "-n", ns, "--replicas="+size)
		wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"SIZE": size, "BROKERS": size, "PHASE": "Running"})
	}
	// As a user would, wait until index 3's pod is gone: while it stops,
	// its broker is still part of the instance.
	eventually(t, 2*time.Minute, "index 3's pod gone", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample,batch.kubernetes.io/job-completion-index=3", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("still there: %q (%v)", out, err)
		}
		return nil
	})
	lead := leadPod(t, cp, ns)
	out := mustKubectl(t, cp, "exec", "-n", ns, lead, "--", "bash", "-c", `. /mnt/flux/flux-view.sh && flux proxy "$fluxsocket" flux submit -N3 --watch hostname`)
	for i := range 3 {
		if want := fmt.Sprintf("flux-sample-%d", i); !strings.Contains(out, want) {
			t.Errorf("after scaling to 3, flux submit -N3: want %s in\n%s", want, out)
		}
	}
}

// TestFailingJobEndsFailed runs hello-world with a job that exits 3: the
// MiniCluster ends Failed, with Finished=True reason Failed, and says why:
// the lead's termination message has the job's code first, then its last
// words, and the Finished message (kubectl describe) carries it.
func TestFailingJobEndsFailed(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "failing")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, func(o map[string]any) {
		setContainer(o, "command", `bash -c "echo failing on purpose; exit 3"`)
	}))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Failed"})
	mustKubectl(t, cp, "wait", "minicluster/flux-sample", "-n", ns, "--for=condition=Finished", "--timeout=1m")
	reason := mustKubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionFinished, "", "reason"))
	if reason != string(v1alpha2.ReasonFailed) {
		t.Errorf("Finished reason %q, want Failed", reason)
	}
	logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
	if !strings.Contains(logs, "failing on purpose") {
		t.Errorf("the lead's log: want the job's output in\n%s", logs)
	}

	msg := leadMessage(t, cp, ns)
	first, words, _ := strings.Cut(msg, "\n")
	if want := "flux job on flux-sample-0 exited with 3"; first != want {
		t.Errorf("the lead's termination message starts %q, want %q\n%s", first, want, msg)
	}
	if !strings.Contains(words, "failing on purpose") {
		t.Errorf("the lead's termination message must carry the job's last words:\n%s", msg)
	}
	eventually(t, sayWithin, "Finished carries the job's exit code", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionFinished, "", "message"))
		if err != nil {
			return err
		}
		if !strings.Contains(out, "the job on the lead broker failed: ") || !strings.Contains(out, "exited with 3") {
			return fmt.Errorf("Finished message %q, want the job's exit code 3 in it", out)
		}
		return nil
	})
	if describe := mustKubectl(t, cp, "describe", "minicluster", "flux-sample", "-n", ns); !strings.Contains(describe, "exited with 3") {
		t.Errorf("kubectl describe minicluster does not show the exit code:\n%s", describe)
	}
}

// TestDeletedBrokerIsReplaced deletes a follower's pod of a running
// interactive MiniCluster: the Job replaces it, the new broker rejoins, and
// the instance keeps running on the same lead.
func TestDeletedBrokerIsReplaced(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "replace")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "interactive", ns, nil))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"BROKERS": "4", "PHASE": "Running"})
	lead := leadPod(t, cp, ns)
	victim := strings.TrimSpace(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample,batch.kubernetes.io/job-completion-index=2", "-o", "name"))
	mustKubectl(t, cp, "delete", "-n", ns, victim, "--wait=false")
	eventually(t, 3*time.Minute, "index 2 replaced by a new ready pod", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample,batch.kubernetes.io/job-completion-index=2",
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			if len(f) == 2 && "pod/"+f[0] != victim && f[1] == "True" {
				return nil
			}
		}
		return fmt.Errorf("pods of index 2: %q", out)
	})
	wantColumns(t, cp, ns, "flux-sample", time.Minute, map[string]string{"BROKERS": "4", "PHASE": "Running"})
	if now := leadPod(t, cp, ns); now != lead {
		t.Errorf("the lead changed from %s to %s", lead, now)
	}
	out := mustKubectl(t, cp, "exec", "-n", ns, lead, "--", "bash", "-c", `. /mnt/flux/flux-view.sh && flux proxy "$fluxsocket" flux submit -N4 --watch hostname`)
	if !strings.Contains(out, "flux-sample-2") {
		t.Errorf("after the replacement, flux submit -N4: want flux-sample-2 in\n%s", out)
	}
}

// TestNonRootRunner runs hello-world as uid 1000: Flux runs as that user,
// with its own copy of the certificate.
func TestNonRootRunner(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "nonroot")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, func(o map[string]any) {
		setContainer(o, "command", "id -u")
		setContainer(o, "securityContext", map[string]any{"runAsUser": int64(1000), "runAsGroup": int64(1000)})
	}))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
	if !strings.Contains(logs, "1000") {
		t.Errorf("the lead's log: want uid 1000 in\n%s", logs)
	}
}

// leadPod is the README's LEAD: the running pod of index 0.
func leadPod(t *testing.T, cp *harness.ControlPlane, ns string) string {
	t.Helper()
	var lead string
	eventually(t, time.Minute, "one running lead pod", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "--field-selector=status.phase=Running", "-o", "name")
		if err != nil {
			return err
		}
		lead = strings.TrimSpace(out)
		if lead == "" || strings.Contains(lead, "\n") {
			return fmt.Errorf("LEAD=%q", lead)
		}
		return nil
	})
	return lead
}

// setContainer sets a field of a claim's first container.
func setContainer(o map[string]any, field string, value any) {
	cs, _, _ := unstructured.NestedSlice(o, "spec", "containers")
	if len(cs) == 0 {
		return
	}
	cs[0].(map[string]any)[field] = value
	_ = unstructured.SetNestedSlice(o, cs, "spec", "containers")
}
