package driver

import (
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// AnnotationResourceName names the composed resource an object is, as
// Crossplane does; rendered objects carry it so they can be fed back as
// observed state.
const AnnotationResourceName = "crossplane.io/composition-resource-name"

// Request is the RunFunctionRequest Crossplane sends for the composite xr
// when the objects in observed exist: each one that carries
// AnnotationResourceName is the composed resource of that name; an observed
// MiniCluster or XMiniCluster named as xr lends xr its status (e.g. the
// maximum size the function wrote before). xr is a claim's XMiniCluster or
// a v2 shape's namespaced MiniCluster. Objects are not modified. input
// is the function's input from the Composition; nil for none.
func Request(xr *unstructured.Unstructured, observed []*unstructured.Unstructured, input map[string]any) (*fnv1.RunFunctionRequest, error) {
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "minicluster-driver"},
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{},
	}
	oxr := xr.UnstructuredContent()
	if xr.GetUID() == "" {
		oxr = withUID(oxr, CompositeUID(xr))
	}
	for _, obs := range observed {
		if k := obs.GetKind(); (k == v1alpha2.ClaimKind || k == v1alpha2.CompositeKind) && obs.GetName() == xr.GetName() {
			if st, ok := obs.Object["status"]; ok {
				oxr = shallowCopy(oxr)
				oxr["status"] = st
			}
			continue
		}
		name := obs.GetAnnotations()[AnnotationResourceName]
		if name == "" {
			continue
		}
		s, err := structpb.NewStruct(obs.Object)
		if err != nil {
			return nil, fmt.Errorf("cannot convert observed %s: %w", name, err)
		}
		req.Observed.Resources[name] = &fnv1.Resource{Resource: s}
	}
	s, err := structpb.NewStruct(oxr)
	if err != nil {
		return nil, fmt.Errorf("cannot convert composite resource: %w", err)
	}
	req.Observed.Composite = &fnv1.Resource{Resource: s}
	// Crossplane starts the pipeline with a desired composite that only
	// names it; functions add status to it.
	meta := map[string]any{"name": xr.GetName()}
	if ns := xr.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	dxr, err := structpb.NewStruct(map[string]any{"apiVersion": xr.GetAPIVersion(), "kind": xr.GetKind(), "metadata": meta})
	if err != nil {
		return nil, fmt.Errorf("cannot convert composite resource: %w", err)
	}
	req.Desired.Composite = &fnv1.Resource{Resource: dxr}
	if input != nil {
		if req.Input, err = structpb.NewStruct(input); err != nil {
			return nil, fmt.Errorf("cannot convert input: %w", err)
		}
	}
	return req, nil
}

// CompositeUID is the uid of xr, or, for a composite that never met an
// API server, the uid `crossplane composition render` gives it (a name-based
// UUID of its kind, namespace and name): the function trusts an observed
// object only when this composite controls it, so a render fed its own
// output back must name the same composite every time.
func CompositeUID(xr *unstructured.Unstructured) string {
	if uid := xr.GetUID(); uid != "" {
		return string(uid)
	}
	gvk := xr.GroupVersionKind()
	return uuid.NewSHA1(uuid.Nil, []byte(gvk.String()+"\x00"+xr.GetNamespace()+"\x00"+xr.GetName())).String()
}

// ControllerOf is the controller reference Crossplane puts on every
// object it composes for xr.
func ControllerOf(xr *unstructured.Unstructured) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: xr.GetAPIVersion(), Kind: xr.GetKind(), Name: xr.GetName(), UID: types.UID(CompositeUID(xr)),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

func withUID(xr map[string]any, uid string) map[string]any {
	out := shallowCopy(xr)
	md, _ := xr["metadata"].(map[string]any)
	md = shallowCopy(md)
	md["uid"] = uid
	out["metadata"] = md
	return out
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ComposedFor is objs as Crossplane keeps the objects it composed for xr:
// copies controlled by xr. A test that feeds one shape's output to another
// shape's composite makes each the composite's own.
func ComposedFor(objs []*unstructured.Unstructured, xr *unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		c := o.DeepCopy()
		c.SetOwnerReferences([]metav1.OwnerReference{ControllerOf(xr)})
		out = append(out, c)
	}
	return out
}
