package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadObjects reads every object of a (multi-document) YAML file.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeObjects(b)
}

// DecodeObjects decodes every object of (multi-document) YAML or JSON.
func DecodeObjects(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// Apply server-side applies objects (with ownership forced), as
// `kubectl apply --server-side --force-conflicts` would.
func (cp *ControlPlane) Apply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := cp.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("cannot apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// ApplyFile applies every object of a YAML file (a path relative to the
// repository root, or absolute).
func (cp *ControlPlane) ApplyFile(ctx context.Context, path string) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cp.opts.RepoRoot, path)
	}
	objs, err := ReadObjects(path)
	if err != nil {
		return err
	}
	return cp.Apply(ctx, objs...)
}

// Condition returns the status and message of a status condition of an
// object ("" if it has none of that type).
func Condition(u *unstructured.Unstructured, typ string) (status, message string) {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		msg, _ := m["message"].(string)
		if r, _ := m["reason"].(string); r != "" && msg == "" {
			msg = "reason " + r
		}
		return s, msg
	}
	return "", ""
}
