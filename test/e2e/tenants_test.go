package e2e_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

const helloWorld = "examples/hello-world/claim.yaml"

// step runs a subtest and stops the test when it fails: every step builds
// on the state the previous ones left.
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

// TestTenants runs the Flux Operator's hello-world MiniCluster, unchanged,
// in two tenant namespaces, and takes one of them through its life: ready
// brokers, scaling past its maximum, a bad update, function and Crossplane
// restarts, and deletion, checking that the other tenant never notices.
func TestTenants(t *testing.T) { testTenants(t, controlPlane(t)) }

// TestTenantsV2 is TestTenants in the Crossplane v2 shape: the tenant's
// MiniCluster is the namespaced composite itself.
func TestTenantsV2(t *testing.T) { testTenants(t, controlPlaneV2(t)) }

func testTenants(t *testing.T, cp *harness.ControlPlane) {
	const name = "flux-sample"
	tenantA, tenantB := "tenant-a", "tenant-b"

	// Created by the test, not a step: a step's cleanups run when it ends.
	for _, ns := range []string{tenantA, tenantB} {
		createNamespace(t, cp, ns)
		createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
	}

	step(t, "claims compose a cluster in each tenant namespace", func(t *testing.T) {
		for _, ns := range []string{tenantA, tenantB} {
			eventually(t, 2*time.Minute, ns+" claim is Synced and its objects exist", func() error {
				c, err := getClaim(t, cp, ns, name)
				if err != nil {
					return err
				}
				if err := wantCondition(c, "Synced", "True"); err != nil {
					return err
				}
				_, err = getComposed(t, cp, ns, name)
				return err
			})
			checkHelloWorld(t, cp, ns, name)
		}
	})

	step(t, "claim is Ready once the brokers are up", func(t *testing.T) {
		// The job controller makes the pods; play the kubelet for them.
		eventually(t, 2*time.Minute, "the job controller reports 4 ready and 4 active pods", func() error {
			if _, err := cp.MarkPodsReady(ctx(t), tenantA, map[string]string{batchv1.JobNameLabel: name}); err != nil {
				return err
			}
			job := &batchv1.Job{}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: tenantA, Name: name}, job); err != nil {
				return err
			}
			if job.Status.Ready == nil || *job.Status.Ready != 4 || job.Status.Active != 4 {
				return fmt.Errorf("job status: ready=%v active=%d, want 4 and 4", deref(job.Status.Ready), job.Status.Active)
			}
			return nil
		})
		eventually(t, 2*time.Minute, "the claim is Ready with status size 4, maximumSize 4, phase Running", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			if err := wantCondition(c, "Ready", "True"); err != nil {
				return err
			}
			return wantStatus(c, map[string]any{
				"size": int64(4), "maximumSize": int64(4), "selector": "hpa-selector=" + name, "phase": "Running",
			})
		})
		c, err := getClaim(t, cp, tenantA, name)
		if err != nil {
			t.Fatal(err)
		}
		if ready, _, _ := unstructured.NestedInt64(c.Object, "status", "job", "ready"); ready != 4 {
			t.Errorf("claim status.job.ready = %d, want 4", ready)
		}
		// No broker of the other tenant is up: its cluster is not ready.
		b, err := getClaim(t, cp, tenantB, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := wantCondition(b, "Ready", "False"); err != nil {
			t.Error(err)
		}
		if phase, _, _ := unstructured.NestedString(b.Object, "status", "phase"); phase != "Pending" {
			t.Errorf("%s claim phase = %q, want Pending", tenantB, phase)
		}
	})

	step(t, "a size above the maximum is clamped with Scaled=False", func(t *testing.T) {
		// hello-world has no maxSize: its maximum is its size at creation.
		if err := mergePatch(t, cp, tenantA, name, `{"spec":{"size":5}}`); err != nil {
			t.Fatalf("size 5 was rejected, want it accepted and clamped: %v", err)
		}
		eventually(t, time.Minute, "the claim says Scaled=False", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			st, msg := condition(c, v1alpha2.ConditionScaled)
			if st != "False" || !strings.Contains(msg, "exceeds the maximum size 4") {
				return fmt.Errorf("Scaled=%s %q, want False and a message about the maximum size 4", st, msg)
			}
			t.Logf("Scaled=False: %s", msg)
			return nil
		})
		job := getJob(t, cp, tenantA, name)
		if p, c := deref(job.Spec.Parallelism), deref(job.Spec.Completions); p != 4 || c != 4 {
			t.Errorf("job parallelism/completions = %d/%d, want 4/4 (clamped)", p, c)
		}
		if err := mergePatch(t, cp, tenantA, name, `{"spec":{"size":4}}`); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the claim says Scaled=True again", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			return wantCondition(c, v1alpha2.ConditionScaled, "True")
		})
	})

	step(t, "a bad update only the function catches keeps the running cluster", func(t *testing.T) {
		before := snapshot(t, cp, tenantA, name)
		// leadBroker may change after creation (the burst controller moves
		// it), and the schema checks only lengths: the function finds that
		// the name is not a DNS label.
		err := mergePatch(t, cp, tenantA, name, `{"spec":{"flux":{"bursting":{"leadBroker":{"address":"10.0.0.9","name":"Not_A_Name","size":4}}}}}`)
		if err != nil {
			t.Fatalf("the API server rejected the update, want the function to: %v", err)
		}
		eventually(t, time.Minute, "the claim says Valid=False naming the field", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			st, msg := condition(c, v1alpha2.ConditionValid)
			if st != "False" || !strings.Contains(msg, "spec.flux.bursting.leadBroker.name") {
				return fmt.Errorf("Valid=%s %q, want False and a message naming spec.flux.bursting.leadBroker.name", st, msg)
			}
			t.Logf("Valid=False: %s", msg)
			return nil
		})
		eventually(t, 30*time.Second, "the composite is not Synced (fatal result)", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			xr, err := compositeOf(t, cp, c)
			if err != nil {
				return err
			}
			return wantCondition(xr, "Synced", "False")
		})
		// Crossplane keeps composed resources as they are on a fatal result.
		consistently(t, 5*time.Second, "the Job, Service, ConfigMap and Secret are unchanged", func() error {
			return before.unchanged(t, cp, true)
		})
		if err := mergePatch(t, cp, tenantA, name, `{"spec":{"flux":{"bursting":{"leadBroker":null}}}}`); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the claim is Valid and Ready again", func() error {
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			if err := wantCondition(c, v1alpha2.ConditionValid, "True"); err != nil {
				return err
			}
			return wantCondition(c, "Ready", "True")
		})
		if err := before.unchanged(t, cp, false); err != nil {
			t.Error(err)
		}
	})

	step(t, "the CURVE key survives a function restart", func(t *testing.T) {
		before := snapshot(t, cp, tenantA, name)
		if err := cp.RestartFunction(ctx(t)); err != nil {
			t.Fatal(err)
		}
		// A scale-down needs the function to run again, so it proves the
		// restarted function composed this cluster.
		if err := mergePatch(t, cp, tenantA, name, `{"spec":{"size":3}}`); err != nil {
			t.Fatal(err)
		}
		waitJobSize(t, cp, tenantA, name, 3)
		if err := before.sameKey(t, cp); err != nil {
			t.Error(err)
		}
	})

	step(t, "the CURVE key survives a Crossplane restart", func(t *testing.T) {
		before := snapshot(t, cp, tenantA, name)
		if err := cp.RestartCrossplane(ctx(t)); err != nil {
			t.Fatal(err)
		}
		if err := mergePatch(t, cp, tenantA, name, `{"spec":{"size":4}}`); err != nil {
			t.Fatal(err)
		}
		waitJobSize(t, cp, tenantA, name, 4)
		if err := before.sameKey(t, cp); err != nil {
			t.Error(err)
		}
		eventually(t, 2*time.Minute, "the claim is Ready with 4 brokers again", func() error {
			if _, err := cp.MarkPodsReady(ctx(t), tenantA, map[string]string{batchv1.JobNameLabel: name}); err != nil {
				return err
			}
			c, err := getClaim(t, cp, tenantA, name)
			if err != nil {
				return err
			}
			if err := wantCondition(c, "Ready", "True"); err != nil {
				return err
			}
			return wantStatus(c, map[string]any{"size": int64(4), "phase": "Running"})
		})
	})

	step(t, "deleting a claim deletes its cluster and nothing else", func(t *testing.T) {
		keep := snapshot(t, cp, tenantA, name)
		c, err := getClaim(t, cp, tenantB, name)
		if err != nil {
			t.Fatal(err)
		}
		xr, err := compositeOf(t, cp, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Client.Delete(ctx(t), c); err != nil {
			t.Fatal(err)
		}
		// The composite goes first; the garbage collector then deletes what
		// it owned (~15 s for a kind it has just discovered), and the Job's
		// pods with it.
		eventually(t, 3*time.Minute, "the claim, the composite and every composed object of "+tenantB+" are gone", func() error {
			var left []string
			if _, err := getClaim(t, cp, tenantB, name); !kerrors.IsNotFound(err) {
				left = append(left, "claim")
			}
			if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(xr), xr.DeepCopy()); !kerrors.IsNotFound(err) {
				left = append(left, "composite "+xr.GetName())
			}
			for _, o := range []client.Object{&batchv1.Job{}, &corev1.Service{}} {
				if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: tenantB, Name: name}, o); !kerrors.IsNotFound(err) {
					left = append(left, fmt.Sprintf("%T", o))
				}
			}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: tenantB, Name: name + "-entrypoint"}, &corev1.ConfigMap{}); !kerrors.IsNotFound(err) {
				left = append(left, "ConfigMap")
			}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: tenantB, Name: name + "-curve-cert"}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				left = append(left, "Secret")
			}
			pods := &corev1.PodList{}
			if err := cp.Client.List(ctx(t), pods, client.InNamespace(tenantB)); err != nil {
				return err
			} else if len(pods.Items) > 0 {
				left = append(left, fmt.Sprintf("%d pods", len(pods.Items)))
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		if err := keep.unchanged(t, cp, false); err != nil {
			t.Errorf("%s was touched: %v", tenantA, err)
		}
		a, err := getClaim(t, cp, tenantA, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := wantCondition(a, "Ready", "True"); err != nil {
			t.Error(err)
		}
	})
}

// checkHelloWorld checks the objects composed for the hello-world claim.
func checkHelloWorld(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	c, err := getClaim(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	xr, err := compositeOf(t, cp, c)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := getComposed(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs.objects() {
		if err := ownedBy(o, xr); err != nil {
			t.Error(err)
		}
	}

	job := objs.Job
	if p, c := deref(job.Spec.Parallelism), deref(job.Spec.Completions); p != 4 || c != 4 {
		t.Errorf("job parallelism/completions = %d/%d, want 4/4", p, c)
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job completionMode = %v, want Indexed", job.Spec.CompletionMode)
	}
	if sd := job.Spec.Template.Spec.Subdomain; sd != name {
		t.Errorf("pod subdomain = %q, want %q", sd, name)
	}

	svc := objs.Service
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("service clusterIP = %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("service publishNotReadyAddresses = false, want true")
	}

	cm := objs.ConfigMap
	var broker struct {
		Bootstrap struct {
			Hosts          []map[string]any `toml:"hosts"`
			DefaultConnect string           `toml:"default_connect"`
		} `toml:"bootstrap"`
	}
	if err := toml.NewDecoder(bytes.NewReader([]byte(cm.Data["broker.toml"]))).Decode(&broker); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, cm.Data["broker.toml"])
	}
	if len(broker.Bootstrap.Hosts) != 1 || broker.Bootstrap.Hosts[0]["host"] != name+"-[0-3]" {
		t.Errorf("broker.toml hosts = %v, want [{host = %q}]", broker.Bootstrap.Hosts, name+"-[0-3]")
	}
	if want := "." + name + "." + ns + ".svc"; !strings.Contains(broker.Bootstrap.DefaultConnect, want) {
		t.Errorf("broker.toml default_connect = %q, want it to reach the pods through %q", broker.Bootstrap.DefaultConnect, want)
	}
	if h := cm.Data["hostlist"]; h != name+"-[0-3]" {
		t.Errorf("hostlist = %q, want %q", h, name+"-[0-3]")
	}

	if _, err := curve.Parse(objs.Secret.Data["curve.cert"]); err != nil {
		t.Errorf("secret %s curve.cert is not a certificate Flux accepts: %v", objs.Secret.Name, err)
	}
}

// cluster is what a running cluster looked like, to compare later.
type cluster struct {
	ns, name string
	objs     *composed
}

func snapshot(t *testing.T, cp *harness.ControlPlane, ns, name string) *cluster {
	t.Helper()
	objs, err := getComposed(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{ns: ns, name: name, objs: objs}
}

// unchanged checks that the composed objects are the same objects (UIDs)
// with the same content. strict also wants the same resourceVersion of the
// ConfigMap, Secret and Service and the same generation of the Job (whose
// status the job controller keeps changing).
func (c *cluster) unchanged(t *testing.T, cp *harness.ControlPlane, strict bool) error {
	now, err := getComposed(t, cp, c.ns, c.name)
	if err != nil {
		return err
	}
	var errs []string
	for i, o := range now.objects() {
		was := c.objs.objects()[i]
		if o.GetUID() != was.GetUID() {
			errs = append(errs, fmt.Sprintf("%T %s was re-created (uid %s, was %s)", o, o.GetName(), o.GetUID(), was.GetUID()))
			continue
		}
		if !strict {
			continue
		}
		if _, isJob := o.(*batchv1.Job); isJob {
			if o.GetGeneration() != was.GetGeneration() {
				errs = append(errs, fmt.Sprintf("Job %s spec changed (generation %d, was %d)", o.GetName(), o.GetGeneration(), was.GetGeneration()))
			}
		} else if o.GetResourceVersion() != was.GetResourceVersion() {
			errs = append(errs, fmt.Sprintf("%T %s changed (resourceVersion %s, was %s)", o, o.GetName(), o.GetResourceVersion(), was.GetResourceVersion()))
		}
	}
	if !bytes.Equal(now.Secret.Data["curve.cert"], c.objs.Secret.Data["curve.cert"]) {
		errs = append(errs, "the CURVE certificate changed")
	}
	if now.ConfigMap.Data["broker.toml"] != c.objs.ConfigMap.Data["broker.toml"] {
		errs = append(errs, "broker.toml changed")
	}
	return errorsJoin(errs)
}

// sameKey checks that the CURVE Secret is the same object with the same
// certificate.
func (c *cluster) sameKey(t *testing.T, cp *harness.ControlPlane) error {
	s := &corev1.Secret{}
	if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(c.objs.Secret), s); err != nil {
		return err
	}
	if s.UID != c.objs.Secret.UID {
		return fmt.Errorf("secret %s was re-created", s.Name)
	}
	if !bytes.Equal(s.Data["curve.cert"], c.objs.Secret.Data["curve.cert"]) {
		return fmt.Errorf("secret %s: the CURVE certificate changed", s.Name)
	}
	if _, err := curve.Parse(s.Data["curve.cert"]); err != nil {
		return fmt.Errorf("secret %s: %w", s.Name, err)
	}
	return nil
}

func getJob(t *testing.T, cp *harness.ControlPlane, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	if err := cp.Client.Get(ctx(t), types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// waitJobSize waits until the Job runs size pods (parallelism and
// completions) and the claim reports that size.
func waitJobSize(t *testing.T, cp *harness.ControlPlane, ns, name string, size int32) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("job %s/%s has parallelism = completions = %d", ns, name, size), func() error {
		job := &batchv1.Job{}
		if err := cp.Client.Get(ctx(t), types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		if p, c := deref(job.Spec.Parallelism), deref(job.Spec.Completions); p != size || c != size {
			return fmt.Errorf("parallelism/completions = %d/%d", p, c)
		}
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		return wantStatus(c, map[string]any{"size": int64(size)})
	})
}

// wantStatus compares fields of a claim's status.
func wantStatus(c *unstructured.Unstructured, want map[string]any) error {
	var errs []string
	for k, v := range want {
		got, _, _ := unstructured.NestedFieldNoCopy(c.Object, "status", k)
		if fmt.Sprint(got) != fmt.Sprint(v) {
			errs = append(errs, fmt.Sprintf("status.%s = %v, want %v", k, got, v))
		}
	}
	return errorsJoin(errs)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
