package burst

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// crossplaneFields are the fields Crossplane writes into a MiniCluster's
// spec in each shape: a claim's at the top of spec, a v2 namespaced
// composite's under spec.crossplane.
var crossplaneFields = map[string]func(name string) (spec map[string]any, labels map[string]string){
	"claims": func(name string) (map[string]any, map[string]string) {
		return map[string]any{
			"compositionRef":          map[string]any{"name": "miniclusters.flux-framework.org"},
			"compositionRevisionRef":  map[string]any{"name": "miniclusters.flux-framework.org-5d2c9a1"},
			"compositionUpdatePolicy": "Automatic",
			"compositeDeletePolicy":   "Background",
			"resourceRef":             map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "XMiniCluster", "name": name + "-x7k2p"},
		}, nil
	},
	"v2": func(name string) (map[string]any, map[string]string) {
		return map[string]any{"crossplane": map[string]any{
			"compositionRef":          map[string]any{"name": "miniclusters.flux-framework.org"},
			"compositionRevisionRef":  map[string]any{"name": "miniclusters.flux-framework.org-5d2c9a1"},
			"compositionUpdatePolicy": "Automatic",
			"resourceRefs":            []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": name}},
		}}, map[string]string{"crossplane.io/composite": name}
	},
}

// reconciledByCrossplane is u after Crossplane and the function reconciled
// it in a cluster of the given shape: Crossplane's spec fields and labels,
// its finalizer, and a Ready status.
func reconciledByCrossplane(t *testing.T, shape string, u *unstructured.Unstructured) {
	t.Helper()
	fields, labels := crossplaneFields[shape](u.GetName())
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	for k, v := range fields {
		spec[k] = v
	}
	if err := unstructured.SetNestedMap(u.Object, spec, "spec"); err != nil {
		t.Fatal(err)
	}
	all := u.GetLabels()
	if all == nil {
		all = map[string]string{}
	}
	for k, v := range labels {
		all[k] = v
	}
	u.SetLabels(all)
	u.SetFinalizers([]string{"finalizer.apiextensions.crossplane.io"})
	u.Object["status"] = map[string]any{
		"conditions": []any{
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2024-01-01T00:00:00Z"},
			map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:00Z"},
		},
		"size": int64(4), "maximumSize": int64(4), "phase": "Running",
	}
}

// TestExternalTargetShapes runs a Burst against a root and a target of each
// shape, in every combination (a claims site bursting into a v2 cluster, and
// the other way round, as well as the same shape on both sides). Both serve flux-framework.org/v1alpha2 MiniCluster, namespaced;
// what differs is where Crossplane writes its own spec fields (at the top of
// a claim's spec, under a v2 composite's spec.crossplane) and the labels it
// adds to a v2 composite. The controller reads only the MiniCluster's own
// fields (the root's spec and status, the burst's size, lead broker and
// Ready condition) and patches only size and leadBroker, so it works the
// same with both and never touches Crossplane's fields.
func TestExternalTargetShapes(t *testing.T) {
	for rootShape := range crossplaneFields {
		for shape := range crossplaneFields {
			t.Run("root "+rootShape+", target "+shape, func(t *testing.T) {
				testExternalTargetShape(t, rootShape, shape)
			})
		}
	}
}

// testExternalTargetShape is one case of TestExternalTargetShapes: a root of
// rootShape, a target of shape.
func testExternalTargetShape(t *testing.T, rootShape, shape string) {
	t.Helper()
	ctx := context.Background()
	root := rootClaim(t)
	reconciledByCrossplane(t, rootShape, root)
	if err := unstructured.SetNestedField(root.Object, int64(2), "status", "size"); err != nil {
		t.Fatal(err)
	}
	b := newBurst()
	local := localClient(t, root, leadService(30093), rootSecret(),
		node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0)), b)
	target := localClient(t)
	e := newExternal(local, target)

	if _, err := e.Create(ctx, b); err != nil {
		t.Fatalf("Create: %v", err)
	}
	burst := getClaim(t, target)
	if burst.GroupVersionKind() != v1alpha2.ClaimGVK() || burst.GetNamespace() != "cloud" {
		t.Fatalf("created %s %s/%s, want a MiniCluster in cloud", burst.GroupVersionKind(), burst.GetNamespace(), burst.GetName())
	}
	// Nothing of the root's shape leaks into the burst: Crossplane's
	// fields of either shape are for the target's Crossplane to write.
	for s, fields := range crossplaneFields {
		spec, _ := fields(burst.GetName())
		for k := range spec {
			if v, ok := burst.Object["spec"].(map[string]any)[k]; ok {
				t.Errorf("the created burst MiniCluster has the %s shape's spec.%s = %v", s, k, v)
			}
		}
	}
	reconciledByCrossplane(t, shape, burst)
	if err := target.Update(ctx, burst); err != nil {
		t.Fatal(err)
	}
	wantFields, _ := crossplaneFields[shape](burst.GetName())

	obs, err := e.Observe(ctx, b)
	if err != nil || !obs.ResourceExists || !obs.ResourceUpToDate {
		t.Fatalf("once Crossplane reconciled the burst MiniCluster: %+v, %v; want existing and up to date", obs, err)
	}
	if !b.Status.AtProvider.ClaimReady || b.GetCondition(xpv2.TypeReady).Reason != xpv2.ReasonAvailable {
		t.Errorf("Ready burst MiniCluster: claimReady %t, Ready %v; want true and Available", b.Status.AtProvider.ClaimReady, b.GetCondition(xpv2.TypeReady))
	}

	// The lead broker moves: Update patches the lead broker and
	// leaves Crossplane's fields as they were.
	if err := local.Create(ctx, node("node-b", "10.0.0.2", "35.2.2.2")); err != nil {
		t.Fatal(err)
	}
	if err := local.Create(ctx, leadPod("flux-sample-0-fghij", "node-b", time.Unix(500, 0))); err != nil {
		t.Fatal(err)
	}
	if obs, err := e.Observe(ctx, b); err != nil || obs.ResourceUpToDate {
		t.Fatalf("after the lead moved: %+v, %v; want out of date", obs, err)
	}
	if _, err := e.Update(ctx, b); err != nil {
		t.Fatalf("Update: %v", err)
	}
	burst = getClaim(t, target)
	if addr, _, _ := unstructured.NestedString(burst.Object, "spec", "flux", "bursting", "leadBroker", "address"); addr != "35.2.2.2" {
		t.Errorf("after Update the burst points at %q, want 35.2.2.2", addr)
	}
	for k, want := range wantFields {
		if diff := cmp.Diff(want, burst.Object["spec"].(map[string]any)[k]); diff != "" {
			t.Errorf("Update changed Crossplane's spec.%s (-want, +got):\n%s", k, diff)
		}
	}
	if obs, err := e.Observe(ctx, b); err != nil || !obs.ResourceUpToDate {
		t.Errorf("after Update: %+v, %v; want up to date", obs, err)
	}

	// Deleting asks the API server to delete the burst MiniCluster;
	// Crossplane's finalizer keeps it until its objects are gone.
	b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	if _, err := e.Delete(ctx, b); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	left := getClaim(t, target)
	if left.GetDeletionTimestamp() == nil {
		t.Errorf("Delete did not delete the burst MiniCluster")
	}
	left.SetFinalizers(nil)
	if err := target.Update(ctx, left); err != nil {
		t.Fatal(err)
	}
	if obs, err := e.Observe(ctx, b); err != nil || obs.ResourceExists {
		t.Errorf("once Crossplane let it go: %+v, %v; want gone", obs, err)
	}
	if err := target.Get(ctx, client.ObjectKeyFromObject(left), left.DeepCopy()); err == nil {
		t.Errorf("the burst MiniCluster is still there")
	}
}
