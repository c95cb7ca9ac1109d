package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// kueueQueues applies examples/kueue/kueue.yaml as a platform would, its
// ClusterQueue named cq and its LocalQueue in each of namespaces, and
// deletes the queues at the end (the ResourceFlavor stays for other
// tests).
func kueueQueues(t *testing.T, cp *harness.ControlPlane, cq string, namespaces ...string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := harness.ReadObjects(filepath.Join(root, "examples", "kueue", "kueue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	add := func(o *unstructured.Unstructured) {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), b...)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterQueue":
			o.SetName(cq)
			add(o)
		case "LocalQueue":
			for _, ns := range namespaces {
				lq := o.DeepCopy()
				lq.SetNamespace(ns)
				_ = unstructured.SetNestedField(lq.Object, cq, "spec", "clusterQueue")
				add(lq)
			}
		default:
			add(o)
		}
	}
	f := filepath.Join(t.TempDir(), "kueue.yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-f", f)
	t.Cleanup(func() {
		for _, ns := range namespaces {
			_, _ = kubectl(t, cp, "delete", "miniclusters", "--all", "-n", ns, "--timeout=2m")
			_, _ = kubectl(t, cp, "delete", "localqueues", "--all", "-n", ns, "--timeout=1m")
		}
		_, _ = kubectl(t, cp, "delete", "clusterqueue", cq, "--timeout=1m")
	})
}

// kueueClaim is examples/kueue's claim named name in ns, its job edited.
func kueueClaim(t *testing.T, ns, name, command string) string {
	t.Helper()
	return manifest(t, "kueue", ns, func(o map[string]any) {
		u := unstructured.Unstructured{Object: o}
		u.SetName(name)
		setContainer(o, "command", command)
	})
}

func getJob(t *testing.T, cp *harness.ControlPlane, ns, name string) (*batchv1.Job, error) {
	t.Helper()
	job := &batchv1.Job{}
	err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job)
	return job, err
}

// brokers is the reason and message of a MiniCluster's Brokers condition.
func brokers(t *testing.T, cp *harness.ControlPlane, ns, name string) (string, string, error) {
	out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="Brokers")].reason}{"\n"}{.status.conditions[?(@.type=="Brokers")].message}`)
	if err != nil {
		return "", "", err
	}
	r, m, _ := strings.Cut(out, "\n")
	return r, m, nil
}

// wantSuspended fails unless the Job is there, suspended, with no pods.
func wantSuspended(t *testing.T, cp *harness.ControlPlane, ns, name, when string) {
	t.Helper()
	job, err := getJob(t, cp, ns, name)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if !ptr.Deref(job.Spec.Suspend, false) || job.Status.Active != 0 {
		t.Fatalf("%s: Job %s suspend=%v active=%d, want suspended with no pods", when, name, ptr.Deref(job.Spec.Suspend, false), job.Status.Active)
	}
}

// suspendOwners names the field managers of the Job's spec.suspend.
func suspendOwners(job *batchv1.Job) []string {
	var owners []string
	for _, mf := range job.ManagedFields {
		if mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:suspend"`) {
			owners = append(owners, fmt.Sprintf("%s (%s)", mf.Manager, mf.Operation))
		}
	}
	sort.Strings(owners)
	return owners
}

// TestKueueQueuesMiniClusters runs Kueue as a platform does (batch/job,
// its webhooks called by the API server) with a ClusterQueue of four pods,
// and two MiniClusters of size 4 in it, each in a namespace of its own:
//   - the first is admitted whole and runs; the second's Job is created
//     suspended and stays so, with no pods, through a scale while queued,
//     a function restart and a Crossplane restart; its PHASE is Queued and
//     its Brokers condition names the LocalQueue, the ClusterQueue and
//     Kueue's reason, and its objects are not written while it waits;
//   - scaling the admitted first is refused (Scaled=False,
//     AdmittedByKueue), its Job keeps its four pods;
//   - spec.suspend is never Crossplane's: Kueue owns it;
//   - when the first ends, the second is admitted whole and Succeeds;
//   - a third, queued behind a fourth that stays up, is admitted when the
//     fourth is deleted (deleting a MiniCluster releases its quota).
//
// It counts what is written about the queued MiniCluster (its namespace's
// objects and its composite) while it waits (docs/performance.md).
func TestKueueQueuesMiniClusters(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	if cp.Kueue() == nil {
		t.Fatal("the node plane runs no Kueue")
	}
	ns1 := namespace(t, cp, "kueue-first")
	ns2 := namespace(t, cp, "kueue-second")
	kueueQueues(t, cp, "kueue-test", ns1, ns2)

	mustKubectl(t, cp, "apply", "-f", kueueClaim(t, ns1, "first", "sleep 45"))
	wantColumns(t, cp, ns1, "first", 3*time.Minute, map[string]string{"SIZE": "4", "BROKERS": "4", "PHASE": "Running"})
	if cp.ServesWorkloadAPI() {
		wantGangUnderKueue(t, cp, ns1, "first")
	}

	counter := countWrites(t, cp, ns2, "second")
	created := time.Now()
	mustKubectl(t, cp, "apply", "-f", kueueClaim(t, ns2, "second", "echo hello world"))
	wantColumns(t, cp, ns2, "second", 2*time.Minute, map[string]string{"SIZE": "4", "PHASE": "Queued"})
	wantSuspended(t, cp, ns2, "second", "queued")
	var msg string
	eventually(t, time.Minute, "the Brokers condition names the queues and Kueue's reason", func() error {
		r, m, err := brokers(t, cp, ns2, "second")
		if err != nil {
			return err
		}
		for _, w := range []string{"LocalQueue " + ns2 + "/user-queue", "ClusterQueue kueue-test", "4 pods", "pods"} {
			if !strings.Contains(m, w) {
				return fmt.Errorf("Brokers %s: %q, want %q in it", r, m, w)
			}
		}
		if r != "Queued" || !strings.Contains(m, "quota") {
			return fmt.Errorf("Brokers %s: %q, want reason Queued and Kueue's quota reason", r, m)
		}
		msg = m
		return nil
	})
	t.Logf("queued: %s", msg)
	settled := time.Now()
	waitWrites, waitKinds := counter.total(), counter.byKind()

	// Stable while the cause is: nothing about it is written for 15 s.
	rv := func() string {
		out := mustKubectl(t, cp, "get", "minicluster", "second", "-n", ns2, "-o", "jsonpath={.metadata.resourceVersion}")
		return out
	}
	before := rv()
	time.Sleep(15 * time.Second)
	if after := rv(); after != before {
		t.Errorf("the queued MiniCluster was written while its cause stayed (resourceVersion %s -> %s)", before, after)
	}
	during := counter.byKind()
	for k, v := range waitKinds {
		if during[k] -= v; during[k] == 0 {
			delete(during, k)
		}
	}
	if n := counter.total() - waitWrites - othersEvents(during); n != 0 {
		t.Errorf("%d writes about the queued MiniCluster in 15 s while it waited: %v", n, during)
	} else if len(during) > 0 {
		t.Logf("while it waited, only others' Events: %v", during)
	}
	t.Logf("writes about the queued MiniCluster from create until it said why it waits (%s): %d %v",
		settled.Sub(created).Round(100*time.Millisecond), waitWrites, counter.byKind())

	// Scaling while queued: Kueue queues the new size; still suspended.
	mustKubectl(t, cp, "scale", "minicluster/second", "-n", ns2, "--replicas=3")
	eventually(t, time.Minute, "the queued MiniCluster waits with 3 pods", func() error {
		_, m, err := brokers(t, cp, ns2, "second")
		if err != nil {
			return err
		}
		if !strings.Contains(m, "3 pods") {
			return fmt.Errorf("Brokers %q, want 3 pods", m)
		}
		return nil
	})
	wantSuspended(t, cp, ns2, "second", "scaled to 3 while queued")
	mustKubectl(t, cp, "scale", "minicluster/second", "-n", ns2, "--replicas=4")
	wantColumns(t, cp, ns2, "second", time.Minute, map[string]string{"SIZE": "4", "PHASE": "Queued"})

	// Restarts never unsuspend it.
	ctx := context.Background()
	if err := cp.RestartFunction(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cp.RestartCrossplane(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	wantSuspended(t, cp, ns2, "second", "after function and Crossplane restarts")

	// Scaling the admitted, running first is refused: Kueue would stop
	// all four pods and queue it again.
	mustKubectl(t, cp, "scale", "minicluster/first", "-n", ns1, "--replicas=2")
	eventually(t, time.Minute, "the admitted MiniCluster refuses another size", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "first", "-n", ns1, "-o",
			`jsonpath={.status.conditions[?(@.type=="Scaled")].reason}{"\n"}{.status.conditions[?(@.type=="Scaled")].message}`)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(out, "AdmittedByKueue\n") || !strings.Contains(out, "Kueue admitted this MiniCluster with 4 pods") {
			return fmt.Errorf("Scaled %q", out)
		}
		return nil
	})
	if job, err := getJob(t, cp, ns1, "first"); err != nil || ptr.Deref(job.Spec.Parallelism, 0) != 4 || ptr.Deref(job.Spec.Suspend, false) {
		t.Fatalf("the admitted Job after a refused scale: %v %v", job.Spec, err)
	}
	mustKubectl(t, cp, "scale", "minicluster/first", "-n", ns1, "--replicas=4")

	// Who owns spec.suspend: Kueue (its webhook at creation, its
	// controller on admission), never Crossplane's composed apply.
	job, err := getJob(t, cp, ns1, "first")
	if err != nil {
		t.Fatal(err)
	}
	owners := suspendOwners(job)
	t.Logf("spec.suspend of the admitted Job is owned by %v", owners)
	for _, o := range owners {
		if strings.HasPrefix(o, "apiextensions.crossplane.io/") {
			t.Errorf("Crossplane owns spec.suspend of the Job (%v): its applies would fight Kueue's", owners)
		}
	}

	// The first ends; the second is admitted whole and succeeds.
	wantColumns(t, cp, ns1, "first", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	wantColumns(t, cp, ns2, "second", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	job, err = getJob(t, cp, ns2, "second")
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.Succeeded+job.Status.Failed < 1 || ptr.Deref(job.Spec.Parallelism, 0) != 4 {
		t.Errorf("the second Job: parallelism %d, status %+v", ptr.Deref(job.Spec.Parallelism, 0), job.Status)
	}
	if r, m, _ := brokers(t, cp, ns2, "second"); r == "Queued" || strings.Contains(m, "Kueue") {
		t.Errorf("after admission the Brokers condition still says %s: %s", r, m)
	}
	t.Logf("writes about the queued MiniCluster from create until Succeeded: %d %v", counter.total(), counter.byKind())
	counter.stop()

	// Deleting a MiniCluster releases its quota: the fourth stays up and
	// holds the four pods; the third waits until the fourth is deleted.
	mustKubectl(t, cp, "apply", "-f", kueueClaim(t, ns1, "fourth", "sleep 600"))
	wantColumns(t, cp, ns1, "fourth", 3*time.Minute, map[string]string{"BROKERS": "4", "PHASE": "Running"})
	mustKubectl(t, cp, "apply", "-f", kueueClaim(t, ns2, "third", "echo hello world"))
	wantColumns(t, cp, ns2, "third", 2*time.Minute, map[string]string{"PHASE": "Queued"})
	mustKubectl(t, cp, "delete", "minicluster", "fourth", "-n", ns1, "--wait=false")
	wantColumns(t, cp, ns2, "third", 4*time.Minute, map[string]string{"PHASE": "Succeeded"})
}

// wantGangUnderKueue: Kueue admitted the Job whole and kube-scheduler
// placed it as one gang, each in its own way: the brokers Kueue unsuspended
// are the PodGroup's (Kueue kept the pod template's schedulingGroup), the
// PodGroup says the scheduler placed them, and Kueue made no gang of its
// own (its pod-group label is for plain Pods).
func wantGangUnderKueue(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	out := mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name="+name, "-o",
		`jsonpath={range .items[*]}{.spec.schedulingGroup.podGroupName}{"|"}{.metadata.labels.kueue\.x-k8s\.io/pod-group-name}{"\n"}{end}`)
	lines := strings.Fields(strings.TrimSpace(out))
	if len(lines) != 4 {
		t.Fatalf("pods of %s: %q, want 4", name, out)
	}
	for _, l := range lines {
		if l != name+"|" {
			t.Errorf("a pod of %s shows podGroupName|kueue pod group %q, want %q", name, l, name+"|")
		}
	}
	eventually(t, time.Minute, "the PodGroup says its gang was scheduled", func() error {
		st, err := kubectl(t, cp, "get", "podgroup", name, "-n", ns, "-o",
			`jsonpath={.spec.schedulingPolicy.gang.minCount} {.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].status}`)
		if err != nil {
			return err
		}
		if st != "4 True" {
			return fmt.Errorf("PodGroup %s: minCount and PodGroupInitiallyScheduled %q, want \"4 True\"", name, st)
		}
		return nil
	})
}

// writeCounter counts the changes (watch events: what reached etcd) of
// every object in a namespace and of one claim's composite, by kind.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
	cancel context.CancelFunc
}

func countWrites(t *testing.T, cp *harness.ControlPlane, ns, claim string) *writeCounter {
	t.Helper()
	dc, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &writeCounter{counts: map[string]int{}, cancel: cancel}
	t.Cleanup(c.stop)
	watchKind := func(gvr schema.GroupVersionResource, namespaced bool, opts metav1.ListOptions) {
		var ri dynamic.ResourceInterface = dc.Resource(gvr)
		if namespaced {
			ri = dc.Resource(gvr).Namespace(ns)
		}
		list, err := ri.List(ctx, opts)
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		opts.ResourceVersion = list.GetResourceVersion()
		w, err := ri.Watch(ctx, opts)
		if err != nil {
			t.Fatalf("watch %s: %v", gvr.Resource, err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
					key := gvr.Resource
					if u, ok := ev.Object.(*unstructured.Unstructured); ok && gvr.Resource == "events" {
						key = "events(" + eventReporter(u) + ")"
					}
					c.mu.Lock()
					c.counts[key]++
					c.mu.Unlock()
				}
			}
		}()
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "flux-framework.org", Version: "v1alpha2", Resource: "miniclusters"},
		{Group: "batch", Version: "v1", Resource: "jobs"},
		{Version: "v1", Resource: "pods"},
		{Version: "v1", Resource: "services"},
		{Version: "v1", Resource: "configmaps"},
		{Version: "v1", Resource: "secrets"},
		{Version: "v1", Resource: "events"},
		{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"},
	} {
		watchKind(gvr, true, metav1.ListOptions{})
	}
	watchKind(schema.GroupVersionResource{Group: "flux-framework.org", Version: "v1alpha2", Resource: "xminiclusters"}, false,
		metav1.ListOptions{LabelSelector: "crossplane.io/claim-namespace=" + ns + ",crossplane.io/claim-name=" + claim})
	return c
}

// eventReporter is who wrote an Event: its reporting controller, else its
// source's component.
func eventReporter(u *unstructured.Unstructured) string {
	if r, _, _ := unstructured.NestedString(u.Object, "reportingComponent"); r != "" {
		return r
	}
	r, _, _ := unstructured.NestedString(u.Object, "source", "component")
	return r
}

// othersEvents are the Events in counts that neither Crossplane nor the
// function wrote (Kueue's, the scheduler's): what they write while a
// MiniCluster waits is theirs.
func othersEvents(counts map[string]int) int {
	n := 0
	for k, v := range counts {
		if strings.HasPrefix(k, "events(") && !strings.Contains(k, "crossplane") && !strings.Contains(k, "composite") {
			n += v
		}
	}
	return n
}

func (c *writeCounter) stop() { c.cancel() }

func (c *writeCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

func (c *writeCounter) byKind() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// kueueExample is the setup of examples/kueue on the node: its kueue.yaml,
// the queues a platform makes, with the LocalQueue in the test's namespace.
func kueueExample(t *testing.T, cp *harness.ControlPlane, ns string) func(map[string]any) {
	kueueQueues(t, cp, "examples-kueue", ns)
	return nil
}
