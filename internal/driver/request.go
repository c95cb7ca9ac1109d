package driver

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
