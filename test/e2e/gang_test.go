package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestGang: where the cluster serves the Workload API (Kubernetes 1.37
// with GenericWorkload, as make e2e runs it), a tenant's hello-world gets a
// Workload and a PodGroup of minCount 4 beside its Job, its pods name the
// PodGroup, and both go with the MiniCluster. Where it does not (make
// e2e-oldest), nothing changes, and a Composition that requires gang
// scheduling refuses new MiniClusters, saying what to turn on.
func TestGang(t *testing.T) { testGang(t, controlPlane(t)) }

// TestGangV2 is TestGang in the Crossplane v2 shape.
func TestGangV2(t *testing.T) { testGang(t, controlPlaneV2(t)) }

func testGang(t *testing.T, cp *harness.ControlPlane) {
	const ns, name = "gang", "flux-sample"
	createNamespace(t, cp, ns)
	createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
	waitComposed(t, cp, ns, name)
	job := &unstructured.Unstructured{}
	job.SetAPIVersion("batch/v1")
	job.SetKind("Job")
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	podGroupName, _, _ := unstructured.NestedString(job.Object, "spec", "template", "spec", "schedulingGroup", "podGroupName")

	if !cp.ServesWorkloadAPI() {
		t.Logf("Kubernetes 1.%d serves no Workload API: nothing changes", cp.KubernetesMinor())
		if podGroupName != "" {
			t.Errorf("the Job's pods name PodGroup %q on a cluster without the Workload API", podGroupName)
		}
		required(t, cp, ns)
		return
	}

	if podGroupName != name {
		t.Errorf("the Job's pods name PodGroup %q, want %q", podGroupName, name)
	}
	c, err := getClaim(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	xr, err := compositeOf(t, cp, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Workload", "PodGroup"} {
		o := gangObject(kind)
		eventually(t, time.Minute, "the "+kind+" exists", func() error {
			return cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, o)
		})
		if err := ownedBy(o, xr); err != nil {
			t.Error(err)
		}
		path := []string{"spec", "schedulingPolicy", "gang", "minCount"}
		if kind == "Workload" {
			tmpl, _, _ := unstructured.NestedSlice(o.Object, "spec", "podGroupTemplates")
			if len(tmpl) != 1 {
				t.Fatalf("Workload templates %v, want one", tmpl)
			}
			o = &unstructured.Unstructured{Object: tmpl[0].(map[string]any)}
			path = path[1:]
		}
		if n, _, _ := unstructured.NestedInt64(o.Object, path...); n != 4 {
			t.Errorf("%s minCount %d, want 4 (hello-world's size)", kind, n)
		}
	}
	eventually(t, time.Minute, "the job controller's pods are in the PodGroup", func() error {
		pods := &unstructured.UnstructuredList{}
		pods.SetAPIVersion("v1")
		pods.SetKind("PodList")
		if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{"job-name": name}); err != nil {
			return err
		}
		if len(pods.Items) != 4 {
			return fmt.Errorf("%d pods, want 4", len(pods.Items))
		}
		for _, p := range pods.Items {
			if g, _, _ := unstructured.NestedString(p.Object, "spec", "schedulingGroup", "podGroupName"); g != name {
				return fmt.Errorf("pod %s names PodGroup %q, want %q", p.GetName(), g, name)
			}
		}
		return nil
	})

	squattedGang(t, cp, ns)

	if err := cp.Client.Delete(ctx(t), newClaim(ns, name)); err != nil {
		t.Fatal(err)
	}
	// The API server puts a finalizer on every PodGroup, which the
	// controller manager's podgroup-protection-controller removes once no
	// pod names it: deleting the MiniCluster deletes all of it.
	eventually(t, 2*time.Minute, "the Workload, the PodGroup and the pods are gone", func() error {
		for _, kind := range []string{"Workload", "PodGroup"} {
			err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, gangObject(kind))
			if !kerrors.IsNotFound(err) {
				return fmt.Errorf("%s: %v", kind, err)
			}
		}
		pods := &corev1.PodList{}
		if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
}

func gangObject(kind string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("scheduling.k8s.io/v1beta1")
	o.SetKind(kind)
	return o
}

// required: with scheduling.gang: Required, a new MiniCluster on a cluster
// without the Workload API is refused, naming the gate and the docs, and
// nothing of it is composed.
func required(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	if _, err := cp.SetScheduling(ctx(t), map[string]any{"gang": "Required"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cp.SetScheduling(context.Background(), nil); err != nil {
			t.Error(err)
		}
	})
	const name = "needs-gang"
	createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, name))
	eventually(t, 2*time.Minute, "the MiniCluster is refused: Valid=False, "+admission.ReasonGangUnavailable, func() error {
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if err := wantConditionReason(c, "Valid", "False", admission.ReasonGangUnavailable); err != nil {
			return err
		}
		_, msg := condition(c, "Valid")
		for _, w := range []string{"GenericWorkload", admission.GangDocs, "scheduling.gang"} {
			if !strings.Contains(msg, w) {
				return fmt.Errorf("Valid message %q does not name %q", msg, w)
			}
		}
		t.Logf("refused: %s", msg)
		return nil
	})
	consistently(t, 10*time.Second, "nothing of it is composed", func() error {
		err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})
		if !kerrors.IsNotFound(err) {
			return fmt.Errorf("Service %s: %v, want none", name, err)
		}
		return nil
	})
}

// squattedGang: a tenant who may also write PodGroups (Kubernetes' edit
// role grants them once the Workload API is on) makes one of the name its
// next MiniCluster takes, with a gang of 1, so that its brokers would start
// one by one. The MiniCluster is refused (NameTaken), and Crossplane
// neither adopts nor changes the tenant's PodGroup.
func squattedGang(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	const name = "squatted"
	tenant, err := cp.AsTenant(ctx(t), ns, "gang-tenant", harness.TenantRules, []rbacv1.PolicyRule{{
		APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"podgroups", "workloads"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	pg := gangObject("PodGroup")
	pg.SetNamespace(ns)
	pg.SetName(name)
	_ = unstructured.SetNestedField(pg.Object, int64(1), "spec", "schedulingPolicy", "gang", "minCount")
	if err := tenant.Create(ctx(t), pg); err != nil {
		t.Fatal(err)
	}
	mc := exampleClaim(t, cp, helloWorld, ns, name)
	if err := tenant.Create(ctx(t), mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), newClaim(ns, name)) })
	eventually(t, 2*time.Minute, "the tenant's MiniCluster is refused: Valid=False, NameTaken", func() error {
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		return wantConditionReason(c, "Valid", "False", admission.ReasonNameTaken)
	})
	consistently(t, 10*time.Second, "the tenant's PodGroup is unowned and unchanged, and no Job exists", func() error {
		got := gangObject("PodGroup")
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			return err
		}
		if refs := got.GetOwnerReferences(); len(refs) > 0 {
			return fmt.Errorf("the tenant's PodGroup has owners %v", refs)
		}
		if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "schedulingPolicy", "gang", "minCount"); n != 1 {
			return fmt.Errorf("the tenant's PodGroup has minCount %d, want its own 1", n)
		}
		err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, &batchv1.Job{})
		if !kerrors.IsNotFound(err) {
			return fmt.Errorf("Job %s: %v, want none", name, err)
		}
		return nil
	})
}
