package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Install applies the repository's compositions/ the way the README tells
// a platform team to: RBAC, then the XRD, then the Composition, and waits
// until the XRD is established and the Composition's pipeline is valid.
// Start does it unless Options.SkipInstall; a test that wants the
// MiniCluster API to appear later calls it itself.
func (cp *ControlPlane) Install(ctx context.Context) error {
	// Options.Shape picks the XRD and Composition (compositions/v2/ for
	// the v2 shape).
	definition, composition, xrdName, err := shapeFiles(cp.Shape())
	if err != nil {
		return err
	}
	if err := cp.ApplyFile(ctx, "compositions/rbac.yaml"); err != nil {
		return err
	}
	if err := cp.ApplyFile(ctx, definition); err != nil {
		return err
	}
	if err := cp.WaitXRD(ctx, xrdName, 2*time.Minute); err != nil {
		return err
	}
	objs, err := cp.compositionObjects(composition, cp.opts.Policy)
	if err != nil {
		return err
	}
	if err := cp.Apply(ctx, objs...); err != nil {
		return err
	}
	return cp.waitFor(ctx, cp.crossplane, 2*time.Minute, "a CompositionRevision of "+CompositionName+" with ValidPipeline=True", func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("apiextensions.crossplane.io/v1")
		l.SetKind("CompositionRevisionList")
		if err := cp.Client.List(ctx, l, client.MatchingLabels{"crossplane.io/composition-name": CompositionName}); err != nil {
			return false, err
		}
		last := fmt.Errorf("no CompositionRevision yet")
		for _, r := range l.Items {
			st, msg := Condition(&r, "ValidPipeline")
			if st == "True" {
				return true, nil
			}
			last = fmt.Errorf("%s: ValidPipeline=%s %s", r.GetName(), st, msg)
		}
		return false, last
	})
}

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

// setPlatformDefault sets one of the function input's platform defaults
// in a Composition's pipeline.
func setPlatformDefault(comp *unstructured.Unstructured, key, value string) error {
	return setInputField(comp, value, "defaults", key)
}

// setInput sets a key of the function input in a Composition's pipeline.
func setInput(comp *unstructured.Unstructured, key string, value map[string]any) error {
	v, err := normalize(value)
	if err != nil {
		return err
	}
	return setInputField(comp, v, key)
}

// setInputField sets a field of the function input, at path below input,
// in every step of a Composition's pipeline.
func setInputField(comp *unstructured.Unstructured, value any, path ...string) error {
	steps, _, err := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	if err != nil {
		return err
	}
	for _, st := range steps {
		m, ok := st.(map[string]any)
		if !ok {
			continue
		}
		if err := unstructured.SetNestedField(m, value, append([]string{"input"}, path...)...); err != nil {
			return err
		}
	}
	return unstructured.SetNestedSlice(comp.Object, steps, "spec", "pipeline")
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

// WaitXRD waits until an XRD is Established and, if it has a claim,
// Offered, and the MiniCluster CRD (the claim's, or a v2 XRD's composite's)
// is established. When it is not, the error carries the XRD's conditions,
// which is where a CRD the API server refused (a CEL rule that does not
// compile, or costs too much) shows up.
func (cp *ControlPlane) WaitXRD(ctx context.Context, name string, timeout time.Duration) error {
	return cp.waitFor(ctx, cp.crossplane, timeout, "XRD "+name+" to be Established and Offered", func(ctx context.Context) (bool, error) {
		xrd := &unstructured.Unstructured{}
		xrd.SetAPIVersion("apiextensions.crossplane.io/v1")
		xrd.SetKind("CompositeResourceDefinition")
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: name}, xrd); err != nil {
			return false, err
		}
		var problems []string
		want := []string{"Established"}
		if _, claims, _ := unstructured.NestedMap(xrd.Object, "spec", "claimNames"); claims {
			want = append(want, "Offered")
		}
		for _, t := range want {
			if st, msg := Condition(xrd, t); st != "True" {
				problems = append(problems, fmt.Sprintf("%s=%s: %s", t, st, msg))
			}
		}
		if len(problems) > 0 {
			return false, errors.New(strings.Join(problems, "; "))
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: ClaimCRDName}, crd); err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, fmt.Errorf("CRD %s is not established", ClaimCRDName)
	})
}
