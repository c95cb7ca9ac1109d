package e2e_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestLifecycle takes MiniClusters to their end with the real job
// controller, playing the kubelet: it reports pods Running, then their
// runner container terminated with an exit code and the pod Failed or
// Succeeded, as a kubelet would, and checks what the Job's policies make of
// it:
//
//   - the job fails on the lead (the runner exits with
//     entrypoint.JobFailedExitCode): the Job fails and so does the claim;
//   - the lead succeeds while its followers still run: the Job completes
//     and the claim succeeds;
//   - a follower crashes: the job controller replaces it and the Job goes
//     on;
//   - with spec.pod.restartPolicy Never, a follower that crashes is not
//     replaced: the Job fails.
func TestLifecycle(t *testing.T) {
	cp := controlPlane(t)
	const ns = "tenant-lifecycle"
	const (
		leadFails    = "lc-lead-fails"
		leadSucceeds = "lc-lead-succeeds"
		brokerCrash  = "lc-broker-crash"
		neverRestart = "lc-never"
	)
	createNamespace(t, cp, ns)
	// Created together so that Crossplane composes them while the first
	// case runs; two brokers each are enough for a lead and a follower.
	for _, name := range []string{leadFails, leadSucceeds, brokerCrash, neverRestart} {
		c := exampleClaim(t, cp, helloWorld, ns, name)
		if err := unstructured.SetNestedField(c.Object, int64(2), "spec", "size"); err != nil {
			t.Fatal(err)
		}
		if name == neverRestart {
			if err := unstructured.SetNestedField(c.Object, "Never", "spec", "pod", "restartPolicy"); err != nil {
				t.Fatal(err)
			}
		}
		createClaim(t, cp, c)
	}

	t.Run("the job fails on the lead", func(t *testing.T) {
		runningCluster(t, cp, ns, leadFails)
		lead := indexPod(t, cp, ns, leadFails, 0)
		terminatePod(t, cp, lead, entrypoint.JobFailedExitCode)

		cond := waitJobCondition(t, cp, ns, leadFails, batchv1.JobFailed)
		if cond.Reason != batchv1.JobReasonPodFailurePolicy {
			t.Errorf("Job failed with reason %q (%s), want %s", cond.Reason, cond.Message, batchv1.JobReasonPodFailurePolicy)
		}
		eventually(t, 2*time.Minute, "the claim is Failed and says the job failed on the lead", func() error {
			c, err := getClaim(t, cp, ns, leadFails)
			if err != nil {
				return err
			}
			if err := wantStatus(c, map[string]any{"phase": "Failed"}); err != nil {
				return err
			}
			st, msg := condition(c, v1alpha2.ConditionFinished)
			if st != "True" || !strings.Contains(msg, "the job on the lead broker failed") || !strings.Contains(msg, "exit code "+strconv.Itoa(entrypoint.JobFailedExitCode)) {
				return fmt.Errorf("condition Finished=%s %q, want True naming the lead's job and exit code %d", st, msg, entrypoint.JobFailedExitCode)
			}
			t.Logf("Finished=True: %s", msg)
			return wantCondition(c, "Ready", "False")
		})
		eventually(t, time.Minute, "the follower was stopped", func() error {
			return noLivePods(t, cp, ns, leadFails)
		})
	})

	t.Run("the lead succeeds while its follower still runs", func(t *testing.T) {
		runningCluster(t, cp, ns, leadSucceeds)
		lead := indexPod(t, cp, ns, leadSucceeds, 0)
		terminatePod(t, cp, lead, 0)

		cond := waitJobCondition(t, cp, ns, leadSucceeds, batchv1.JobComplete)
		if cond.Reason != batchv1.JobReasonSuccessPolicy {
			t.Errorf("Job completed with reason %q (%s), want %s", cond.Reason, cond.Message, batchv1.JobReasonSuccessPolicy)
		}
		if job := getJob(t, cp, ns, leadSucceeds); job.Status.Succeeded != 1 {
			t.Errorf("Job status.succeeded = %d, want 1: only the lead finished, the follower was still running", job.Status.Succeeded)
		}
		eventually(t, 2*time.Minute, "the claim is Succeeded and Ready", func() error {
			c, err := getClaim(t, cp, ns, leadSucceeds)
			if err != nil {
				return err
			}
			if err := wantStatus(c, map[string]any{"phase": "Succeeded"}); err != nil {
				return err
			}
			if err := wantCondition(c, v1alpha2.ConditionFinished, "True"); err != nil {
				return err
			}
			return wantCondition(c, "Ready", "True")
		})
		eventually(t, time.Minute, "the follower was stopped", func() error {
			return noLivePods(t, cp, ns, leadSucceeds)
		})
	})

	t.Run("a crashed follower is replaced", func(t *testing.T) {
		runningCluster(t, cp, ns, brokerCrash)
		follower := indexPod(t, cp, ns, brokerCrash, 1)
		terminatePod(t, cp, follower, 1)

		// The job controller waits (10 s, its first backoff) before it
		// replaces the pod.
		eventually(t, 2*time.Minute, "the job controller made a new pod for index 1", func() error {
			p, err := liveIndexPod(t, cp, ns, brokerCrash, 1)
			if err != nil {
				return err
			}
			if p.UID == follower.UID {
				return fmt.Errorf("index 1 still has the failed pod %s", p.Name)
			}
			if n := p.Annotations[batchv1.JobIndexFailureCountAnnotation]; n != "1" {
				return fmt.Errorf("new pod %s has %s=%q, want 1", p.Name, batchv1.JobIndexFailureCountAnnotation, n)
			}
			return nil
		})
		job := getJob(t, cp, ns, brokerCrash)
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobFailed || c.Type == batchv1.JobFailureTarget) {
				t.Fatalf("Job has %s (%s: %s), want it to go on", c.Type, c.Reason, c.Message)
			}
		}
		// Not MarkPodsReady: it would report the failed pod, which is still
		// there, Running again.
		reportRunning(t, cp, indexPod(t, cp, ns, brokerCrash, 1))
		eventually(t, 2*time.Minute, "the cluster is Running again with the new follower", func() error {
			c, err := getClaim(t, cp, ns, brokerCrash)
			if err != nil {
				return err
			}
			if err := wantStatus(c, map[string]any{"phase": "Running"}); err != nil {
				return err
			}
			if failed, _, _ := unstructured.NestedInt64(c.Object, "status", "job", "failed"); failed != 1 {
				return fmt.Errorf("status.job.failed = %d, want 1", failed)
			}
			return wantCondition(c, v1alpha2.ConditionFinished, "False")
		})
	})

	t.Run("restartPolicy Never does not replace a crashed follower", func(t *testing.T) {
		runningCluster(t, cp, ns, neverRestart)
		job := getJob(t, cp, ns, neverRestart)
		if got := deref(job.Spec.BackoffLimitPerIndex); got != 0 {
			t.Errorf("Job backoffLimitPerIndex = %d, want 0 with restartPolicy Never", got)
		}
		follower := indexPod(t, cp, ns, neverRestart, 1)
		terminatePod(t, cp, follower, 1)

		cond := waitJobCondition(t, cp, ns, neverRestart, batchv1.JobFailed)
		if cond.Reason != batchv1.JobReasonMaxFailedIndexesExceeded {
			t.Errorf("Job failed with reason %q (%s), want %s", cond.Reason, cond.Message, batchv1.JobReasonMaxFailedIndexesExceeded)
		}
		eventually(t, 2*time.Minute, "the claim is Failed, naming spec.backoffLimit", func() error {
			c, err := getClaim(t, cp, ns, neverRestart)
			if err != nil {
				return err
			}
			if err := wantStatus(c, map[string]any{"phase": "Failed"}); err != nil {
				return err
			}
			st, msg := condition(c, v1alpha2.ConditionFinished)
			if st != "True" || !strings.Contains(msg, "spec.backoffLimit") {
				return fmt.Errorf("condition Finished=%s %q, want True naming spec.backoffLimit", st, msg)
			}
			return nil
		})
	})
}

// runningCluster waits until a claim's Job runs its pods, reports them all
// Running and ready, and waits until the claim says Running.
func runningCluster(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	eventually(t, 3*time.Minute, "claim "+name+" is Running with its brokers ready", func() error {
		if _, err := cp.MarkPodsReady(ctx(t), ns, map[string]string{batchv1.JobNameLabel: name}); err != nil {
			return err
		}
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if err := wantStatus(c, map[string]any{"phase": "Running"}); err != nil {
			return err
		}
		return wantCondition(c, "Ready", "True")
	})
}

// liveIndexPod is the pod of a Job's completion index that is not being
// deleted and has not terminated.
func liveIndexPod(t *testing.T, cp *harness.ControlPlane, ns, job string, index int) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{
		batchv1.JobNameLabel: job, batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index),
	}); err != nil {
		return nil, err
	}
	var live []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			live = append(live, p)
		}
	}
	if len(live) != 1 {
		return nil, fmt.Errorf("job %s/%s has %d live pods for index %d, want 1", ns, job, len(live), index)
	}
	return live[0], nil
}

// noLivePods checks that no pod of a Job runs any more: each has
// terminated or is gone.
func noLivePods(t *testing.T, cp *harness.ControlPlane, ns, job string) error {
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
		return err
	}
	var live []string
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			live = append(live, p.Name)
		}
	}
	if len(live) > 0 {
		return fmt.Errorf("pods still running: %s", strings.Join(live, ", "))
	}
	return nil
}

// reportRunning reports one pod Running with its containers ready.
func reportRunning(t *testing.T, cp *harness.ControlPlane, p *corev1.Pod) {
	t.Helper()
	if err := cp.ReportPodRunning(ctx(t), p); err != nil {
		t.Fatal(err)
	}
}

func indexPod(t *testing.T, cp *harness.ControlPlane, ns, job string, index int) *corev1.Pod {
	t.Helper()
	p, err := liveIndexPod(t, cp, ns, job, index)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// terminatePod reports, as the kubelet would with restartPolicy Never, that
// the pod's containers exited (the Flux runner with exitCode, the others
// with 0) and the pod Succeeded (exitCode 0) or Failed.
func terminatePod(t *testing.T, cp *harness.ControlPlane, p *corev1.Pod, exitCode int32) {
	t.Helper()
	terminatePodWith(t, cp, p, exitCode)
}

// evictPod ends a pod as the kubelet ends an eviction or a node drain: the
// pod gets the DisruptionTarget condition, its containers are killed (137)
// and it fails. The Job's pod failure policy does not count it.
func evictPod(t *testing.T, cp *harness.ControlPlane, p *corev1.Pod) {
	t.Helper()
	terminatePodWith(t, cp, p, 137, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", LastTransitionTime: metav1.Now(),
	})
}

func terminatePodWith(t *testing.T, cp *harness.ControlPlane, p *corev1.Pod, exitCode int32, extra ...corev1.PodCondition) {
	t.Helper()
	// The runner container is named after the MiniCluster.
	if err := cp.ReportPodTerminated(ctx(t), p, p.Labels[batchv1.JobNameLabel], exitCode, extra...); err != nil {
		t.Fatal(err)
	}
	t.Logf("pod %s (index %s): %s, runner exit code %d", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], p.Status.Phase, exitCode)
}

// waitJobCondition waits until the Job has condition typ true and returns it.
func waitJobCondition(t *testing.T, cp *harness.ControlPlane, ns, name string, typ batchv1.JobConditionType) batchv1.JobCondition {
	t.Helper()
	var found batchv1.JobCondition
	eventually(t, 2*time.Minute, fmt.Sprintf("job %s/%s is %s", ns, name, typ), func() error {
		job := &batchv1.Job{}
		if err := cp.Client.Get(ctx(t), types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		var have []string
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				if c.Type == typ {
					found = c
					return nil
				}
				have = append(have, string(c.Type))
			}
		}
		return fmt.Errorf("conditions %v, active %d, failed %d, succeeded %d", have, job.Status.Active, job.Status.Failed, job.Status.Succeeded)
	})
	t.Logf("job %s: %s (%s: %s)", name, typ, found.Reason, found.Message)
	return found
}

// TestBrokersGoUnready: every broker of a running MiniCluster stops being
// ready (they restart, or exit before the Job has counted them): the
// MiniCluster follows, Pending with job.ready 0 and Brokers False, and
// Crossplane applies that status. With the counts left out when they were
// 0, the server-side apply of the status made status.job null, the API
// server refused the whole status, and the MiniCluster kept saying Running,
// all brokers up, with only a warning event (found with real Flux on the
// real node, make bench-node).
func TestBrokersGoUnready(t *testing.T) {
	cp := controlPlane(t)
	const ns, name = "tenant-unready", "unready"
	createNamespace(t, cp, ns)
	c := exampleClaim(t, cp, helloWorld, ns, name)
	if err := unstructured.SetNestedField(c.Object, int64(2), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	createClaim(t, cp, c)
	runningCluster(t, cp, ns, name)

	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: name}); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		before := p.DeepCopy()
		for j := range p.Status.Conditions {
			if t := p.Status.Conditions[j].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				p.Status.Conditions[j].Status = corev1.ConditionFalse
			}
		}
		for j := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[j].Ready = false
		}
		if err := cp.Client.Status().Patch(ctx(t), p, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "the MiniCluster says its brokers are down", func() error {
		got, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if err := wantStatus(got, map[string]any{"phase": "Pending"}); err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedInt64(got.Object, "status", "job", "ready"); ready != 0 {
			return fmt.Errorf("status.job.ready %d, want 0", ready)
		}
		return wantCondition(got, v1alpha2.ConditionBrokers, "False")
	})
	evs := &corev1.EventList{}
	if err := cp.Client.List(ctx(t), evs); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "cannot apply composite resource status") {
			t.Errorf("Crossplane could not apply the status of %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
}
