package node_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// EnvNodeTimings turns on TestHelloWorldTimings (make e2e-node-timings):
// it takes a few minutes and measures rather than checks.
const EnvNodeTimings = "MC_NODE_TIMINGS"

// TestHelloWorldTimings measures hello-world on the real node at sizes 4
// and 8, three runs each: apply -> PHASE Succeeded, and the first runner
// start -> the lead's runner done (the figure flux-pods reports as
// start->index0-done). It prints the medians, and a JSON line for
// docs/performance.md.
func TestHelloWorldTimings(t *testing.T) {
	if os.Getenv(EnvNodeTimings) == "" {
		t.Skipf("set %s=1 to measure hello-world on the real node (make e2e-node-timings)", EnvNodeTimings)
	}
	cp := nodePlane(t, driver.ShapeClaims)
	type result struct {
		Size                    int     `json:"size"`
		ApplyToSucceededSeconds float64 `json:"applyToSucceededSeconds"`
		PodStartToLeadDone      float64 `json:"podStartToLeadDoneSeconds"`
	}
	var all []result
	for _, size := range []int{4, 8} {
		var runs []result
		for i := range 3 {
			ns := namespace(t, cp, fmt.Sprintf("timing-%d-%d", size, i))
			f := manifest(t, "hello-world", ns, func(o map[string]any) { o["spec"].(map[string]any)["size"] = int64(size) })
			start := time.Now()
			mustKubectl(t, cp, "apply", "-f", f)
			var done time.Duration
			eventually(t, 3*time.Minute, fmt.Sprintf("size %d run %d Succeeded", size, i), func() error {
				phase, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", "jsonpath={.status.phase}")
				if err != nil {
					return err
				}
				if phase != "Succeeded" {
					return fmt.Errorf("phase %q", phase)
				}
				done = time.Since(start)
				return nil
			})
			r := result{Size: size, ApplyToSucceededSeconds: done.Seconds(), PodStartToLeadDone: podStartToLeadDone(t, cp, ns)}
			runs = append(runs, r)
			t.Logf("size %d run %d: apply -> Succeeded %.1f s, first runner start -> lead done %.1f s", size, i, r.ApplyToSucceededSeconds, r.PodStartToLeadDone)
			deleteAndWaitGone(t, cp, ns, "flux-sample")
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i].ApplyToSucceededSeconds < runs[j].ApplyToSucceededSeconds })
		med := runs[1]
		starts := []float64{runs[0].PodStartToLeadDone, runs[1].PodStartToLeadDone, runs[2].PodStartToLeadDone}
		sort.Float64s(starts)
		med.PodStartToLeadDone = starts[1]
		all = append(all, med)
	}
	b, _ := json.Marshal(map[string]any{"realFlux": realFlux(), "medians": all})
	t.Logf("timings: %s", b)
	fmt.Fprintf(os.Stderr, "e2e-node timings: %s\n", b)
}

// podStartToLeadDone is the time from the first runner container's start
// to the lead's runner finishing, from the pods' statuses as the kubelet
// reported them.
func podStartToLeadDone(t *testing.T, cp *harness.ControlPlane, ns string) float64 {
	t.Helper()
	out := mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", podsSelector, "-o", "json")
	var pods corev1.PodList
	if err := json.Unmarshal([]byte(out), &pods); err != nil {
		t.Fatal(err)
	}
	var first, leadDone time.Time
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name != "flux-sample" || c.State.Terminated == nil {
				continue
			}
			if s := c.State.Terminated.StartedAt.Time; first.IsZero() || s.Before(first) {
				first = s
			}
			if p.Labels["batch.kubernetes.io/job-completion-index"] == "0" {
				leadDone = c.State.Terminated.FinishedAt.Time
			}
		}
	}
	if first.IsZero() || leadDone.IsZero() {
		t.Fatalf("no runner start or lead end in the pods' statuses:\n%s", out)
	}
	return leadDone.Sub(first).Seconds()
}
