package driver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/compositions"
	mcschema "github.com/flux-framework/minicluster-crossplane/internal/schema"
)

// ConvertDocs is where a Flux Operator v1alpha1 user reads about v1alpha2.
const ConvertDocs = "https://flux-framework.org/flux-operator/getting_started/custom-resource-definition.html"

// convertHint tells a v1alpha1 user how to convert: minicluster convert maps
// every field with a v1alpha2 meaning and names the others
// (docs/v1alpha1.md lists every field's fate).
const convertHint = "convert it with `minicluster convert -f <file> > claim.yaml` (it maps every v1alpha1 field with a v1alpha2 meaning and prints a line for each one it cannot map: users, fluxRestful, cores, diagnostics, fluxUser, runFluxAsRoot, preCommand, top-level volumes, ...), then render the result"

// kinds says which objects the CLI reads.
func kinds() string {
	return fmt.Sprintf("a %s (%s, kind %s: a claim or an upstream Flux Operator MiniCluster) or its composite resource (kind %s)",
		v1alpha2.ClaimKind, v1alpha2.SchemeGroupVersion, v1alpha2.ClaimKind, v1alpha2.CompositeKind)
}

// describe names an object for a message: `apps/v1 Deployment "x"`.
func describe(u *unstructured.Unstructured) string {
	s := strings.TrimSpace(u.GetAPIVersion() + " " + u.GetKind())
	if s == "" {
		s = "an object without apiVersion and kind"
	}
	if n, ok := u.Object["metadata"].(map[string]any); ok {
		if name, ok := n["name"].(string); ok && name != "" {
			s += fmt.Sprintf(" %q", name)
		}
	}
	return s
}

// FindMiniCluster returns the first MiniCluster claim or XMiniCluster of
// objs. It refuses one of another API version (saying how to convert a
// Flux Operator v1alpha1 MiniCluster) and one without metadata.name (with
// the *InvalidError of Check when it also has unknown fields), and says
// which kinds it reads when there is none. Other objects are ignored.
func FindMiniCluster(objs []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var others []string
	for _, obj := range objs {
		gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
		kind := obj.GetKind()
		isOurs := kind == v1alpha2.ClaimKind || kind == v1alpha2.CompositeKind
		switch {
		case isOurs && err == nil && gv == v1alpha2.SchemeGroupVersion:
		case isOurs && gv.Group == v1alpha2.Group && gv.Version == "v1alpha1":
			return nil, fmt.Errorf("%s: this is a v1alpha1 MiniCluster of the Flux Operator, and only %s is served: %s",
				describe(obj), v1alpha2.SchemeGroupVersion, convertHint)
		case isOurs && gv.Group == v1alpha2.Group:
			return nil, fmt.Errorf("%s: version %q of the MiniCluster API is not served: only %s is (apiVersion: %s)",
				describe(obj), gv.Version, v1alpha2.Version, v1alpha2.SchemeGroupVersion)
		case isOurs:
			return nil, fmt.Errorf("%s: apiVersion must be %s: this command reads %s", describe(obj), v1alpha2.SchemeGroupVersion, kinds())
		default:
			others = append(others, describe(obj))
			continue
		}
		if obj.GetName() == "" {
			// The API server decodes strictly before it looks at the name:
			// an unknown field is reported first, as kubectl would show it.
			// FindMiniCluster knows no shape: the claim shape's schema.
			if inv := strictDecode(obj, mcschema.Claims); inv != nil {
				return nil, inv
			}
			return nil, fmt.Errorf("a %s needs metadata.name: it names the composite resource and every object composed for it (the Job, its pods, Services, ConfigMaps and the Secret)", kind)
		}
		return obj, nil
	}
	if len(others) == 0 {
		return nil, fmt.Errorf("no object in the file: this command reads %s", kinds())
	}
	return nil, fmt.Errorf("no MiniCluster in the file (found %s): this command reads %s", strings.Join(others, ", "), kinds())
}

// Composite turns a claim (or upstream MiniCluster) into the composite
// resource Crossplane v2.4's claim controller makes for it in a cluster of
// the claim shape (compositions/definition.yaml). An XMiniCluster passes
// unchanged.
//
// As the controller does (with its client-side and its server-side
// syncer alike), the composite gets the claim's labels and annotations
// except those of a kubernetes.io or k8s.io domain; the claim labels; the
// claim's spec without the claim's own fields (resourceRef,
// writeConnectionSecretToRef, compositeDeletePolicy), without Crossplane's
// composite machinery (claimRef, resourceRefs, and compositionRevisionRef
// unless the update policy is Manual) and without compositionRef, which
// the XRD enforces; and spec.claimRef, the claim's apiVersion, kind, name
// and namespace. A claim's writeConnectionSecretToRef is the claim's
// alone: the composite's own is set later by the composite controller, and
// only from a Composition's writeConnectionSecretsToNamespace, which ours
// has not.
//
// Two things differ, so that the output is the same on every run and
// usable offline. Crossplane names a new composite <claim>-<five random
// characters>; it is named after the claim here (the function names what it
// composes after the claim label, never after the composite), or, as by
// Crossplane, after the composite the claim's spec.resourceRef names. And the
// claim's status, which Crossplane copies the other way, from the
// composite, is kept: a claim read back from a cluster renders with its
// maximum size and phase.
func Composite(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	switch obj.GetKind() {
	case v1alpha2.CompositeKind:
		return obj, nil
	case v1alpha2.ClaimKind:
	default:
		return nil, fmt.Errorf("expected kind %s or %s, got %q", v1alpha2.ClaimKind, v1alpha2.CompositeKind, obj.GetKind())
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	xrd, err := claimDefinition()
	if err != nil {
		return nil, err
	}
	xr := &unstructured.Unstructured{Object: map[string]any{}}
	xr.SetAPIVersion(v1alpha2.SchemeGroupVersion.String())
	xr.SetKind(v1alpha2.CompositeKind)
	// A claim bound to a composite (spec.resourceRef) syncs into that one.
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "resourceRef", "name")
	if name == "" {
		name = obj.GetName()
	}
	xr.SetName(name)
	if a := withoutReserved(obj.GetAnnotations()); len(a) > 0 {
		xr.SetAnnotations(a)
	}
	labels := withoutReserved(obj.GetLabels())
	labels[v1alpha2.LabelClaimName] = obj.GetName()
	labels[v1alpha2.LabelClaimNamespace] = ns
	xr.SetLabels(labels)
	spec := map[string]any{}
	if claimSpec, ok := obj.Object["spec"].(map[string]any); ok {
		strip := notPropagated(claimSpec, xrd)
		for k, v := range claimSpec {
			if !strip[k] {
				spec[k] = v
			}
		}
	}
	spec["claimRef"] = map[string]any{
		"apiVersion": obj.GetAPIVersion(),
		"kind":       obj.GetKind(),
		"name":       obj.GetName(),
		"namespace":  ns,
	}
	xr.Object["spec"] = spec
	if status, ok := obj.Object["status"]; ok {
		xr.Object["status"] = status
	}
	return xr, nil
}

// notPropagated are the fields of a claim's spec that Crossplane's claim
// controller does not copy into the composite: the claim's own and the
// composite's machinery (as Crossplane's schemas for claims and legacy
// composites name them), but for the composition fields it propagates;
// of those, compositionRef only when the XRD enforces none, and
// compositionRevisionRef only when the composite's update policy (the
// claim's, else the XRD's default) is Manual.
func notPropagated(claimSpec map[string]any, xrd *xpv1.CompositeResourceDefinition) map[string]bool {
	strip := map[string]bool{}
	for k := range xcrd.CompositeResourceClaimSpecProps(nil) {
		strip[k] = true
	}
	for k := range xcrd.CompositeResourceSpecProps(xpv1.CompositeResourceScopeLegacyCluster, nil) {
		strip[k] = true
	}
	for _, k := range xcrd.PropagateSpecProps {
		if k == "compositionRef" && xrd.Spec.EnforcedCompositionRef != nil {
			continue
		}
		delete(strip, k)
	}
	policy, _ := claimSpec["compositionUpdatePolicy"].(string)
	if policy == "" && xrd.Spec.DefaultCompositionUpdatePolicy != nil {
		policy = string(*xrd.Spec.DefaultCompositionUpdatePolicy)
	}
	if policy == string(xpv2.UpdateManual) {
		delete(strip, xcrd.CompositionRevisionRef)
	}
	return strip
}

// withoutReserved is a copy of m without the keys Crossplane keeps off a
// claim's composite: those whose domain (the part before the first '/')
// ends in kubernetes.io or k8s.io, such as
// kubectl.kubernetes.io/last-applied-configuration.
func withoutReserved(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		domain, _, _ := strings.Cut(k, "/")
		if strings.HasSuffix(domain, "kubernetes.io") || strings.HasSuffix(domain, "k8s.io") {
			continue
		}
		out[k] = v
	}
	return out
}

// claimDefinition is the claim shape's XRD, compositions/definition.yaml:
// whether it enforces a Composition and its default update policy decide
// what a claim's composite gets.
var claimDefinition = sync.OnceValues(func() (*xpv1.CompositeResourceDefinition, error) {
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.Unmarshal(compositions.Definition, xrd); err != nil {
		return nil, fmt.Errorf("cannot parse compositions/definition.yaml: %w", err)
	}
	return xrd, nil
})

// Shape is how a cluster serves MiniClusters: the XRD and Composition
// installed (compositions/ or compositions/v2/).
type Shape string

// Shapes.
const (
	// ShapeClaims: a namespaced MiniCluster claim and its cluster-scoped
	// XMiniCluster composite (apiextensions.crossplane.io/v1 XRD). The
	// default.
	ShapeClaims Shape = "claims"
	// ShapeV2: the namespaced MiniCluster is the composite itself
	// (apiextensions.crossplane.io/v2 XRD, no claim).
	ShapeV2 Shape = "v2"
)

// Shapes are the valid shapes, the default first.
var Shapes = []Shape{ShapeClaims, ShapeV2}

// ParseShape returns the shape named s; "" is the default, ShapeClaims.
func ParseShape(s string) (Shape, error) {
	if s == "" {
		return ShapeClaims, nil
	}
	for _, sh := range Shapes {
		if string(sh) == s {
			return sh, nil
		}
	}
	return "", fmt.Errorf("unknown shape %q: want %s (claims, the default) or %s (Crossplane v2 namespaced composites)", s, ShapeClaims, ShapeV2)
}

// CompositeOf is the composite resource Crossplane composes for obj in a
// cluster of the given shape ("" is ShapeClaims): Composite for claims,
// CompositeV2 for the v2 shape.
func CompositeOf(obj *unstructured.Unstructured, shape Shape) (*unstructured.Unstructured, error) {
	switch shape {
	case "", ShapeClaims:
		return Composite(obj)
	case ShapeV2:
		return CompositeV2(obj)
	default:
		_, err := ParseShape(string(shape))
		return nil, err
	}
}

// CompositeV2 is the composite resource of the v2 shape for a MiniCluster:
// the MiniCluster itself, in its namespace ("default" when it names none,
// as kubectl would), with its spec, status and metadata as written.
func CompositeV2(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	switch obj.GetKind() {
	case v1alpha2.ClaimKind:
	case v1alpha2.CompositeKind:
		return nil, fmt.Errorf("%s: an %s is the claim shape's composite resource; in the v2 shape the %s is the composite itself: render the %s", describe(obj), v1alpha2.CompositeKind, v1alpha2.ClaimKind, v1alpha2.ClaimKind)
	default:
		return nil, fmt.Errorf("expected kind %s, got %q", v1alpha2.ClaimKind, obj.GetKind())
	}
	xr := obj.DeepCopy()
	if xr.GetNamespace() == "" {
		xr.SetNamespace("default")
	}
	return xr, nil
}

// CheckedComposite returns the composite resource of the MiniCluster in b
// after the checks Run makes (see Check), or the error Run would return or
// report. The composite carries the claim's spec as written, less what
// Crossplane does not copy (see Composite): the API server's defaults are
// left for `crossplane composition render --xrd` (or the cluster) to apply.
func CheckedComposite(ctx context.Context, b []byte) (*unstructured.Unstructured, error) {
	mc, err := ReadMiniCluster(b)
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, mc.DeepCopy(), ShapeClaims); err != nil {
		return nil, err
	}
	return Composite(mc)
}

// ReadMiniCluster returns the MiniCluster of the YAML or JSON stream b (see
// FindMiniCluster), unchecked.
func ReadMiniCluster(b []byte) (*unstructured.Unstructured, error) {
	objs, err := ParseObjects(b)
	if err != nil {
		return nil, err
	}
	return FindMiniCluster(objs)
}
