package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// setPlatformDefault sets one of the function input's platform defaults
// in a Composition's pipeline.
func setPlatformDefault(comp *unstructured.Unstructured, key, value string) error {
	return setInputField(comp, value, "defaults", key)
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
