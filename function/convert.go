package function

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// toComposed converts a typed object for the response. It uses the API
// machinery's converter, which follows the types' JSON tags exactly: zero
// numbers are omitted where the API omits them, and an empty emptyDir stays
// {} (a volume must keep its source). Fields the API server owns — an empty
// status, null creation timestamps — are dropped so that server-side apply
// never claims them.
func toComposed(o runtime.Object) (*composed.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, errors.Wrap(err, "cannot convert object")
	}
	dropNullTimestamp(m)
	if spec, ok := m["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			dropNullTimestamp(tmpl)
		}
	}
	if st, ok := m["status"].(map[string]any); ok && len(st) == 0 {
		delete(m, "status")
	}
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}, nil
}

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
