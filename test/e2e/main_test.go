// Package e2e_test checks MiniClusters against a real control plane: etcd,
// kube-apiserver, kube-controller-manager, Crossplane core and the function
// as local processes (see the harness package). Run them with `make e2e`;
// `go test ./...` skips them unless MC_E2E=1 is set, and with MC_E2E=1 a
// missing tool is a failure, not a skip.
//
// All tests share one control plane, started on first use and stopped when
// the package's tests end; the tests of the Crossplane v2 shape (…V2) share
// another, which serves MiniClusters as namespaced composites. When a test fails the control plane's logs are
// kept and their last lines printed.
package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// EnvE2E must be set (to anything but "" or "0") for these tests to run.
const EnvE2E = "MC_E2E"

// sharedPlane is a control plane the tests share, started on first use.
type sharedPlane struct {
	once sync.Once
	cp   *harness.ControlPlane
	err  error
}

// shared serves the claim shape, sharedV2 the Crossplane v2 shape.
var shared, sharedV2 sharedPlane

func TestMain(m *testing.M) {
	code := m.Run()
	for _, cp := range []*harness.ControlPlane{shared.cp, sharedV2.cp} {
		if cp == nil {
			continue
		}
		if code != 0 {
			cp.KeepDir()
			fmt.Fprintf(os.Stderr, "\ne2e: tests failed; control-plane logs are kept in %s\n", cp.LogDir)
			cp.DumpLogs(os.Stderr, 40)
		}
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}
	os.Exit(code)
}

// controlPlane returns the shared control plane, starting it on first use.
func controlPlane(t *testing.T) *harness.ControlPlane {
	t.Helper()
	return shared.get(t, "e2e", driver.ShapeClaims)
}

// controlPlaneV2 returns the shared control plane of the Crossplane v2
// shape (compositions/v2/ installed), starting it on first use.
func controlPlaneV2(t *testing.T) *harness.ControlPlane {
	t.Helper()
	return sharedV2.get(t, "e2e-v2", driver.ShapeV2)
}

func (s *sharedPlane) get(t *testing.T, name string, shape driver.Shape) *harness.ControlPlane {
	t.Helper()
	if v := os.Getenv(EnvE2E); v == "" || v == "0" {
		t.Skipf("end-to-end tests run a real control plane: set %s=1 (make e2e does, after installing the tools)", EnvE2E)
	}
	s.once.Do(func() {
		start := time.Now()
		s.cp, s.err = harness.Start(context.Background(), harness.Options{
			Name:  name,
			Shape: shape,
			Debug: os.Getenv("MC_E2E_DEBUG") != "",
			Logf: func(format string, args ...any) {
				fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
			},
		})
		if s.err == nil {
			fmt.Fprintf(os.Stderr, "e2e: control plane %s up in %s\n", name, time.Since(start).Round(100*time.Millisecond))
		}
	})
	if s.err != nil {
		if errors.Is(s.err, harness.ErrToolsMissing) {
			t.Fatalf("%s is set but %v", EnvE2E, s.err)
		}
		t.Fatal(s.err)
	}
	return s.cp
}

// ---------------------------------------------------------------- waits

// eventually polls f every 500ms until it returns nil, failing the test with
// f's last error after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			t.Logf("%s (after %s)", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s: %v", timeout, what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// consistently checks f every 500ms for d and fails on the first error.
func consistently(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := f(); err != nil {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%s held for %s", what, d)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// ---------------------------------------------------------------- objects

var (
	claimGVK     = harness.ClaimGVK
	compositeGVK = harness.CompositeGVK
)

// exampleClaim reads a claim from the repository's examples, unchanged but
// for its namespace (and name, when given), and applies in that namespace
// what the platform provides for the example (applyPlatform), which must
// exist.
func exampleClaim(t *testing.T, cp *harness.ControlPlane, path, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	objs, err := harness.ReadObjects(filepath.Join(cp.Options().RepoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GroupVersionKind() != claimGVK {
		t.Fatalf("%s: want one %s, got %d objects", path, claimGVK.Kind, len(objs))
	}
	applyPlatform(t, cp, filepath.Join(cp.Options().RepoRoot, filepath.Dir(path)), namespace)
	c := objs[0]
	c.SetNamespace(namespace)
	if name != "" {
		c.SetName(name)
	}
	return c
}

// applyPlatform applies what the docs tell a platform to provide for the
// example in dir, its cluster.yaml (driver.ExampleFixtures), in namespace:
// a Namespace's labels go on namespace, every other object is made in it.
func applyPlatform(t *testing.T, cp *harness.ControlPlane, dir, namespace string) {
	t.Helper()
	cluster, _, err := driver.ExampleFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cluster {
		o = o.DeepCopy()
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
			ns := &unstructured.Unstructured{}
			ns.SetAPIVersion("v1")
			ns.SetKind("Namespace")
			ns.SetName(namespace)
			ns.SetLabels(o.GetLabels())
			o = ns
		} else {
			o.SetNamespace(namespace)
		}
		if err := cp.Apply(ctx(t), o); err != nil {
			t.Fatal(err)
		}
	}
}

func createNamespace(t *testing.T, cp *harness.ControlPlane, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cp.Client.Create(ctx(t), ns); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount, which the
	// serviceaccount controller creates.
	eventually(t, time.Minute, "namespace "+name+" has its default ServiceAccount", func() error {
		return cp.Client.Get(ctx(t), client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
	})
}

// createClaim creates a claim and deletes it when the test ends.
func createClaim(t *testing.T, cp *harness.ControlPlane, c *unstructured.Unstructured) {
	t.Helper()
	if err := cp.Client.Create(ctx(t), c.DeepCopy()); err != nil {
		t.Fatalf("cannot create MiniCluster %s/%s: %v", c.GetNamespace(), c.GetName(), err)
	}
	t.Cleanup(func() {
		_ = cp.Client.Delete(context.Background(), newClaim(c.GetNamespace(), c.GetName()))
	})
}

func newClaim(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(claimGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func getClaim(t *testing.T, cp *harness.ControlPlane, namespace, name string) (*unstructured.Unstructured, error) {
	u := newClaim(namespace, name)
	err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(u), u)
	return u, err
}

// compositeOf returns the composite resource a claim is bound to; in the v2
// shape, the MiniCluster itself, read again.
func compositeOf(t *testing.T, cp *harness.ControlPlane, claim *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if cp.Shape() == driver.ShapeV2 {
		return getClaim(t, cp, claim.GetNamespace(), claim.GetName())
	}
	name, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
	if name == "" {
		return nil, fmt.Errorf("claim %s/%s has no spec.resourceRef yet", claim.GetNamespace(), claim.GetName())
	}
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(compositeGVK)
	err := cp.Client.Get(ctx(t), client.ObjectKey{Name: name}, xr)
	return xr, err
}

// mergePatch applies a JSON merge patch to a claim, as kubectl patch
// --type=merge would, and returns the API server's error.
func mergePatch(t *testing.T, cp *harness.ControlPlane, namespace, name, patch string) error {
	return cp.Client.Patch(ctx(t), newClaim(namespace, name), client.RawPatch("application/merge-patch+json", []byte(patch)))
}

// condition returns a status condition of an object as "Status: message".
// typ is a string, or a condition type of the MiniCluster's
// (v1alpha2.ConditionType) or Crossplane's.
func condition[T ~string](u *unstructured.Unstructured, typ T) (string, string) {
	return harness.Condition(u, string(typ))
}

func wantCondition[T ~string](u *unstructured.Unstructured, typ T, status string) error {
	st, msg := condition(u, typ)
	if st != status {
		return fmt.Errorf("%s %s/%s: condition %s is %q (%s), want %q", u.GetKind(), u.GetNamespace(), u.GetName(), typ, st, msg, status)
	}
	return nil
}

// wantConditionReason is wantCondition, with the condition's reason too.
// The reason is a string, or a reason of the MiniCluster's
// (v1alpha2.ConditionReason) or Crossplane's.
func wantConditionReason[T, R ~string](u *unstructured.Unstructured, typ T, status string, reason R) error {
	if err := wantCondition(u, typ, status); err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == string(typ) {
			if m["reason"] != string(reason) {
				return fmt.Errorf("%s %s/%s: condition %s has reason %v (%v), want %s", u.GetKind(), u.GetNamespace(), u.GetName(), typ, m["reason"], m["message"], reason)
			}
		}
	}
	return nil
}

// composed are the objects the function composes for the hello-world claim.
type composed struct {
	Job       *batchv1.Job
	Service   *corev1.Service
	ConfigMap *corev1.ConfigMap
	Secret    *corev1.Secret
}

func getComposed(t *testing.T, cp *harness.ControlPlane, namespace, name string) (*composed, error) {
	c := &composed{Job: &batchv1.Job{}, Service: &corev1.Service{}, ConfigMap: &corev1.ConfigMap{}, Secret: &corev1.Secret{}}
	for _, o := range []struct {
		name string
		obj  client.Object
	}{
		{name, c.Job}, {name, c.Service}, {name + "-entrypoint", c.ConfigMap}, {name + "-curve-cert", c.Secret},
	} {
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: namespace, Name: o.name}, o.obj); err != nil {
			return nil, fmt.Errorf("%T %s/%s: %w", o.obj, namespace, o.name, err)
		}
	}
	return c, nil
}

func (c *composed) objects() []client.Object {
	return []client.Object{c.Job, c.Service, c.ConfigMap, c.Secret}
}

// ownedBy checks that obj's controller is the composite xr.
func ownedBy(obj client.Object, xr *unstructured.Unstructured) error {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			if r.UID != xr.GetUID() || r.Kind != xr.GetKind() || r.Name != xr.GetName() {
				return fmt.Errorf("%s is controlled by %s %s (%s), want %s %s (%s)", obj.GetName(), r.Kind, r.Name, r.UID, xr.GetKind(), xr.GetName(), xr.GetUID())
			}
			return nil
		}
	}
	return fmt.Errorf("%s has no controller owner reference (want the composite %s)", obj.GetName(), xr.GetName())
}

func errorsJoin(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}
