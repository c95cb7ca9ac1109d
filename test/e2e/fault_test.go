package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestFaults breaks a control plane with running MiniClusters the ways
// production breaks, each right after a scale change so the fault hits
// while Crossplane and the function work on it: the function is killed
// (SIGKILL) and restarted, Crossplane is restarted, and kube-apiserver is
// stopped for 10 s and started again on the same port and data. After
// each, every claim converges again (Synced and Ready, the new size
// applied), and nothing was lost: no composite or composed object was
// re-created (same UIDs), no CURVE key or broker configuration changed.
// It runs on a control plane of its own so a fault cannot leak into other
// tests.
func TestFaults(t *testing.T) { testFaults(t, driver.ShapeClaims) }

// TestFaultsV2 is TestFaults in the Crossplane v2 shape, where the
// MiniCluster is the composite Crossplane reconciles.
func TestFaultsV2(t *testing.T) { testFaults(t, driver.ShapeV2) }

func testFaults(t *testing.T, shape driver.Shape) {
	requireE2E(t)
	cp := startOwnControlPlane(t, harness.Options{Name: "faults-" + string(shape), Shape: shape})
	const ns = "tenant-faults"
	names := []string{"fault-a", "fault-b", "fault-c"}
	createNamespace(t, cp, ns)
	for _, n := range names {
		c := exampleClaim(t, cp, helloWorld, ns, n)
		// Room to scale up to 6 without re-creating the Job.
		if err := unstructured.SetNestedField(c.Object, int64(6), "spec", "maxSize"); err != nil {
			t.Fatal(err)
		}
		createClaim(t, cp, c)
	}

	var before *faultBaseline
	step(t, "claims run with their CURVE keys", func(t *testing.T) {
		waitConverged(t, cp, ns, names, 4)
		before = baseline(t, cp, ns, names)
	})

	step(t, "the function is killed mid-run and restarted", func(t *testing.T) {
		scaleAll(t, cp, ns, names, 5)
		if err := cp.KillFunction(); err != nil {
			t.Fatal(err)
		}
		t.Logf("killed the function right after the scale change; %d of %d Jobs already had 5 pods", jobsAtSize(t, cp, ns, names, 5), len(names))
		// Crossplane cannot reach the function: it keeps what exists.
		consistently(t, 5*time.Second, "every composite and composed object stays", func() error {
			return before.intact(t, cp)
		})
		if c, err := getClaim(t, cp, ns, names[0]); err == nil {
			if xr, err := compositeOf(t, cp, c); err == nil {
				st, msg := condition(xr, "Synced")
				// Observed: still Synced=True. Crossplane's RunFunction call
				// does not fail while the function is down; gRPC waits to
				// reconnect, within the composite reconcile's 2-minute
				// timeout, and the call goes through once it is back.
				t.Logf("while the function is down, composite %s: Synced=%s %s", xr.GetName(), st, msg)
			}
		}
		if err := cp.StartFunction(ctx(t)); err != nil {
			t.Fatal(err)
		}
		waitConverged(t, cp, ns, names, 5)
		if err := before.intact(t, cp); err != nil {
			t.Error(err)
		}
	})

	step(t, "Crossplane is restarted", func(t *testing.T) {
		scaleAll(t, cp, ns, names, 6)
		c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := cp.RestartCrossplane(c); err != nil {
			t.Fatal(err)
		}
		waitConverged(t, cp, ns, names, 6)
		if err := before.intact(t, cp); err != nil {
			t.Error(err)
		}
	})

	step(t, "the API server is unavailable for 10s", func(t *testing.T) {
		scaleAll(t, cp, ns, names, 4)
		c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := cp.RestartAPIServer(c, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		waitConverged(t, cp, ns, names, 4)
		if err := before.intact(t, cp); err != nil {
			t.Error(err)
		}
		for _, p := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "crossplane", "function"} {
			if _, ok := cp.Pids()[p]; !ok {
				t.Errorf("%s is not running after the API server came back", p)
			}
		}
	})
}

// faultBaseline is what the running clusters looked like before the
// faults.
type faultBaseline struct {
	clusters []*cluster
	xrUIDs   map[string]types.UID // claim name -> composite UID
}

func baseline(t *testing.T, cp *harness.ControlPlane, ns string, names []string) *faultBaseline {
	t.Helper()
	b := &faultBaseline{xrUIDs: map[string]types.UID{}}
	for _, n := range names {
		b.clusters = append(b.clusters, snapshot(t, cp, ns, n))
		c, err := getClaim(t, cp, ns, n)
		if err != nil {
			t.Fatal(err)
		}
		xr, err := compositeOf(t, cp, c)
		if err != nil {
			t.Fatal(err)
		}
		b.xrUIDs[n] = xr.GetUID()
	}
	return b
}

// intact checks every cluster is made of the same objects (composite,
// Job, Service, ConfigMap, Secret: UIDs) with the same CURVE certificate
// and broker configuration.
func (b *faultBaseline) intact(t *testing.T, cp *harness.ControlPlane) error {
	var errs []string
	for _, c := range b.clusters {
		if err := c.unchanged(t, cp, false); err != nil {
			errs = append(errs, c.name+": "+err.Error())
		}
		claim, err := getClaim(t, cp, c.ns, c.name)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		xr, err := compositeOf(t, cp, claim)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if xr.GetUID() != b.xrUIDs[c.name] {
			errs = append(errs, fmt.Sprintf("%s: the composite %s was re-created", c.name, xr.GetName()))
		}
	}
	return errorsJoin(errs)
}

func scaleAll(t *testing.T, cp *harness.ControlPlane, ns string, names []string, size int) {
	t.Helper()
	for _, n := range names {
		if err := mergePatch(t, cp, ns, n, fmt.Sprintf(`{"spec":{"size":%d}}`, size)); err != nil {
			t.Fatal(err)
		}
	}
}

func jobsAtSize(t *testing.T, cp *harness.ControlPlane, ns string, names []string, size int32) int {
	n := 0
	for _, name := range names {
		job := &batchv1.Job{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, job); err == nil && deref(job.Spec.Parallelism) == size {
			n++
		}
	}
	return n
}

// waitConverged waits until every claim runs size brokers: the Job's
// parallelism and completions are size and the job controller reports size
// ready pods (the test plays the kubelet), and the claim is Synced and
// Ready with status.size = size.
func waitConverged(t *testing.T, cp *harness.ControlPlane, ns string, names []string, size int32) {
	t.Helper()
	eventually(t, 3*time.Minute, fmt.Sprintf("%d claims are Synced and Ready with %d ready brokers", len(names), size), func() error {
		var errs []string
		for _, n := range names {
			if _, err := cp.MarkPodsReady(ctx(t), ns, map[string]string{batchv1.JobNameLabel: n}); err != nil {
				return err
			}
			job := &batchv1.Job{}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: n}, job); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if p, c, r := deref(job.Spec.Parallelism), deref(job.Spec.Completions), deref(job.Status.Ready); p != size || c != size || r != size {
				errs = append(errs, fmt.Sprintf("%s: job parallelism/completions/ready = %d/%d/%d", n, p, c, r))
				continue
			}
			c, err := getClaim(t, cp, ns, n)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			for _, typ := range []string{"Synced", "Ready"} {
				if err := wantCondition(c, typ, "True"); err != nil {
					errs = append(errs, err.Error())
				}
			}
			if err := wantStatus(c, map[string]any{"size": int64(size), "phase": "Running"}); err != nil {
				errs = append(errs, n+": "+err.Error())
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	})
}
