package function

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// toComposed converts a typed object into a desired composed resource with
// the API machinery's converter. Fields the API server owns — an empty
// status, a null creationTimestamp (in the object and in a pod template) —
// are dropped, so that server-side apply never claims them and the desired
// state equals what the server keeps.
func toComposed(o runtime.Object) (*composed.Unstructured, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	dropNullTimestamp(u)
	if spec, ok := u["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			dropNullTimestamp(tmpl)
		}
	}
	if st, ok := u["status"].(map[string]any); ok && len(st) == 0 {
		delete(u, "status")
	}
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: u}}, nil
}

// dropNullTimestamp deletes a null metadata.creationTimestamp, then the
// metadata if nothing is left.
func dropNullTimestamp(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	if v, ok := md["creationTimestamp"]; ok && v == nil {
		delete(md, "creationTimestamp")
	}
	if len(md) == 0 {
		delete(obj, "metadata")
	}
}
