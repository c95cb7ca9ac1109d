package harness

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetPolicy applies the Composition again with policy as its function
// input's policy (nil: the shipped one) and Install's defaults, as a
// platform team changes its policy, and waits until Crossplane has a
// CompositionRevision of it with a valid pipeline: composites on the
// Automatic update policy (the default) move to it on their next
// reconcile. It returns that revision's name (SetPolicyAndDefaults).
func (cp *ControlPlane) SetPolicy(ctx context.Context, policy map[string]any) (string, error) {
	return cp.SetPolicyAndDefaults(ctx, policy, nil)
}

// SetPolicyAndDefaults is SetPolicy with platform defaults too: the
// Composition is applied again with policy as its function input's policy
// (nil: the shipped one) and each key of defaults set in the input's
// defaults, beside what Install sets there (the node's Flux view), as a
// platform team sets, say, defaults.imagePullSecrets. nil defaults are
// Install's (SetPolicy). It waits until the newest CompositionRevision
// carries both and has a valid pipeline, and returns its name.
func (cp *ControlPlane) SetPolicyAndDefaults(ctx context.Context, policy, defaults map[string]any) (string, error) {
	return cp.setInput(ctx, policy, defaults, nil)
}

// SetScheduling applies the Composition again with scheduling as its
// function input's scheduling (nil: the shipped one, gang Auto), the
// shipped policy and Install's defaults, as a platform team turns gang
// scheduling off (scheduling.gang: Disabled), and waits for its
// CompositionRevision as SetPolicyAndDefaults does.
func (cp *ControlPlane) SetScheduling(ctx context.Context, scheduling map[string]any) (string, error) {
	return cp.setInput(ctx, nil, nil, scheduling)
}

func (cp *ControlPlane) setInput(ctx context.Context, policy, defaults, scheduling map[string]any) (string, error) {
	_, composition, _, err := shapeFiles(cp.Shape())
	if err != nil {
		return "", err
	}
	objs, err := cp.compositionObjects(composition, policy)
	if err != nil {
		return "", err
	}
	extra, err := normalizeAny(defaults)
	if err != nil {
		return "", err
	}
	var wantPolicy, wantDefaults, wantScheduling any
	for _, o := range objs {
		if scheduling != nil {
			if err := setInput(o, "scheduling", scheduling); err != nil {
				return "", err
			}
		}
		if m, ok := extra.(map[string]any); ok {
			for k, v := range m {
				if err := setInputField(o, v, "defaults", k); err != nil {
					return "", err
				}
			}
		}
		wantPolicy, wantDefaults, wantScheduling = inputField(o, "policy"), inputField(o, "defaults"), inputField(o, "scheduling")
	}
	if wantScheduling, err = normalizeAny(wantScheduling); err != nil {
		return "", err
	}
	if wantPolicy, err = normalizeAny(wantPolicy); err != nil {
		return "", err
	}
	if wantDefaults, err = normalizeAny(wantDefaults); err != nil {
		return "", err
	}
	if err := cp.Apply(ctx, objs...); err != nil {
		return "", err
	}
	var revision string
	err = cp.waitFor(ctx, cp.crossplane, 2*time.Minute, "the newest CompositionRevision of "+CompositionName+" to carry the policy and defaults and be ValidPipeline=True", func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("apiextensions.crossplane.io/v1")
		l.SetKind("CompositionRevisionList")
		if err := cp.Client.List(ctx, l, client.MatchingLabels{"crossplane.io/composition-name": CompositionName}); err != nil {
			return false, err
		}
		var newest *unstructured.Unstructured
		var top int64 = -1
		for i := range l.Items {
			if n, _, _ := unstructured.NestedInt64(l.Items[i].Object, "spec", "revision"); n > top {
				top, newest = n, &l.Items[i]
			}
		}
		if newest == nil {
			return false, fmt.Errorf("no CompositionRevision yet")
		}
		for key, want := range map[string]any{"policy": wantPolicy, "defaults": wantDefaults, "scheduling": wantScheduling} {
			got, err := normalizeAny(inputField(newest, key))
			if err != nil {
				return false, err
			}
			if !reflect.DeepEqual(got, want) {
				return false, fmt.Errorf("revision %s (%d) has %s %v, want %v", newest.GetName(), top, key, got, want)
			}
		}
		if st, msg := Condition(newest, "ValidPipeline"); st != "True" {
			return false, fmt.Errorf("%s: ValidPipeline=%s %s", newest.GetName(), st, msg)
		}
		revision = newest.GetName()
		return true, nil
	})
	return revision, err
}

// inputField is a key of the function input in the (last) step of a
// Composition's or CompositionRevision's pipeline.
func inputField(comp *unstructured.Unstructured, key string) any {
	var v any
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	for _, st := range steps {
		if m, ok := st.(map[string]any); ok {
			v, _, _ = unstructured.NestedFieldCopy(m, "input", key)
		}
	}
	return v
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
