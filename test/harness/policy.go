package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// compositionObjects reads the shape's Composition as Install applies it:
// with the node's Flux view as the platform default when there is a node,
// and with policy as the function input's policy when it is not nil.
func (cp *ControlPlane) compositionObjects(path string, policy map[string]any) ([]*unstructured.Unstructured, error) {
	objs, err := ReadObjects(filepath.Join(cp.opts.RepoRoot, path))
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if cp.opts.Node != nil {
			// As a platform team whose registry holds its own Flux view:
			// the node's images come from no registry, so the view every
			// MiniCluster gets by default is the node's.
			if err := setPlatformDefault(o, "fluxViewImage", ViewImageRef); err != nil {
				return nil, err
			}
		}
		if policy != nil {
			if err := setInput(o, "policy", policy); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

// setInput sets a key of the function input in a Composition's pipeline.
func setInput(comp *unstructured.Unstructured, key string, value map[string]any) error {
	v, err := normalize(value)
	if err != nil {
		return err
	}
	return setInputField(comp, v, key)
}

// normalize is v as the API server gives it back (JSON numbers, []any):
// what a deep copy of an unstructured object and a comparison need.
func normalize(v map[string]any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the policy: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// SetPolicy applies the Composition again with policy as its function
// input's policy (nil: the shipped one) and Install's defaults, as a
// platform team changes its policy, and waits until Crossplane has a
// CompositionRevision of it with a valid pipeline: composites on the
// Automatic update policy (the default) move to it on their next
// reconcile. It returns that revision's name (SetPolicyAndDefaults).
func (cp *ControlPlane) SetPolicy(ctx context.Context, policy map[string]any) (string, error) {
	return cp.SetPolicyAndDefaults(ctx, policy, nil)
}

// normalizeAny is normalize for what a Composition holds; an empty policy
// ({} in the shipped Composition, which the API server may store as no
// policy at all) is none.
func normalizeAny(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, nil
	}
	return normalize(m)
}
