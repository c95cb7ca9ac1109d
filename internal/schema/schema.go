// Package schema evaluates the MiniCluster XRD's schema in-process, with the
// API server's own libraries (k8s.io/apiextensions-apiserver): pruning of
// unknown fields, defaulting, OpenAPI validation and CEL rules
// (x-kubernetes-validations), exactly as kube-apiserver does for the claim
// and composite resource CRDs Crossplane generates from the XRD.
//
// The CRDs are derived from the embedded XRDs with Crossplane's own
// generator (crossplane-runtime's xcrd, the code Crossplane core runs), so
// the fields Crossplane adds are known and validated as on a cluster. Claims
// is the claim shape's schema
// (compositions/definition.yaml: spec.compositionRef, spec.claimRef,
// spec.resourceRefs, status.conditions, ...); V2 is the Crossplane v2
// shape's (compositions/v2/definition.yaml: one kind, the namespaced
// composite MiniCluster, with Crossplane's fields under spec.crossplane).
//
// Objects are JSON-shaped maps as the API server decodes them: integers are
// int64, other numbers float64 (see Int64s for objects that went through
// protobuf Structs, where every number is a float64).
//
// Messages and paths are the API server's. One difference: the OpenAPI and
// the CEL validators walk maps, so the server lists their errors in a random
// order; here each validator's errors are sorted by path.
//
// The validators are built once, on first use, and are safe for concurrent
// use.
package schema

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/compositions"
)

// blockedMessage is the API server's error when CEL rules were skipped.
const blockedMessage = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// crd is what the API server builds to serve one kind (its
// customResourceStrategy): the OpenAPI validator, the structural schema with
// defaults pruned, the CEL validator and the scale subresource.
type crd struct {
	kind       string
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
	scale      *apiextensions.CustomResourceSubresourceScale
	hasStatus  bool
}

type crds struct {
	apiVersion string
	kinds      []string // claim kind first, if any
	byKind     map[string]*crd
}

// Schema is the schema of one MiniCluster XRD's kinds. Its validators are
// built once, on first use.
type Schema struct {
	load func() (*crds, error)
}

func newSchema(definition []byte) *Schema {
	return &Schema{load: sync.OnceValues(func() (*crds, error) { return build(definition) })}
}

var (
	// Claims is the schema of the claim shape's XRD
	// (compositions/definition.yaml): the namespaced claim MiniCluster and
	// the cluster-scoped composite XMiniCluster.
	Claims = newSchema(compositions.Definition)
	// V2 is the schema of the Crossplane v2 shape's XRD
	// (compositions/v2/definition.yaml): the namespaced composite
	// MiniCluster, whose spec.crossplane holds Crossplane's fields
	// (compositionRef, resourceRefs, ...) where a claim has them at the top
	// of spec. Its one kind has the claim's name, which is why it is a
	// Schema of its own.
	V2 = newSchema(compositions.DefinitionV2)
)

// Load builds the validators (once) and returns an error if the embedded XRD
// cannot be turned into CRDs. Every other method panics in that case,
// which a test of this package rules out.
func (s *Schema) Load() error {
	_, err := s.load()
	return err
}

func (s *Schema) mustLoad() *crds {
	c, err := s.load()
	if err != nil {
		panic(fmt.Sprintf("the embedded MiniCluster XRD cannot be evaluated: %v", err))
	}
	return c
}

// build derives the claim and composite CRDs from an XRD, as Crossplane
// does, and the validators the API server would build for them.
func build(definition []byte) (*crds, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := yaml.Unmarshal(definition, &tm); err != nil {
		return nil, fmt.Errorf("cannot parse the XRD: %w", err)
	}
	// Crossplane serves v2 XRDs through the same (v1) type; they differ in
	// what scope means when it is not set.
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(definition, xrd); err != nil {
		return nil, fmt.Errorf("cannot parse the XRD: %w", err)
	}
	if tm.APIVersion == "apiextensions.crossplane.io/v2" && xrd.Spec.Scope == nil {
		ns := xpv1.CompositeResourceScopeNamespaced
		xrd.Spec.Scope = &ns
	}
	var version string
	for _, v := range xrd.Spec.Versions {
		if v.Referenceable {
			version = v.Name
		}
	}
	if version == "" {
		return nil, fmt.Errorf("the XRD has no referenceable version")
	}
	out := &crds{apiVersion: xrd.Spec.Group + "/" + version, byKind: map[string]*crd{}}
	var defs []*extv1.CustomResourceDefinition
	if xrd.Spec.ClaimNames != nil {
		claim, err := xcrd.ForCompositeResourceClaim(xrd)
		if err != nil {
			return nil, fmt.Errorf("cannot derive the claim CRD: %w", err)
		}
		defs = append(defs, claim)
	}
	xr, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		return nil, fmt.Errorf("cannot derive the composite resource CRD: %w", err)
	}
	defs = append(defs, xr)
	for _, d := range defs {
		c, err := serve(d, version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Spec.Names.Kind, err)
		}
		out.kinds = append(out.kinds, c.kind)
		out.byKind[c.kind] = c
	}
	return out, nil
}

// serve does what the API server's CRD handler does for a served version
// (crdHandler.getOrCreateServingInfoFor and NewStrategy).
func serve(c *extv1.CustomResourceDefinition, version string) (*crd, error) {
	var v *extv1.CustomResourceDefinitionVersion
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Name == version {
			v = &c.Spec.Versions[i]
		}
	}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no schema for version %s", version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := extv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("cannot convert the schema: %w", err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("cannot prune defaults: %w", err)
	}
	validator, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("cannot build the schema validator: %w", err)
	}
	out := &crd{
		kind:       c.Spec.Names.Kind,
		structural: s,
		validator:  validator,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}
	if sr := v.Subresources; sr != nil {
		out.hasStatus = sr.Status != nil
		if sr.Scale != nil {
			out.scale = &apiextensions.CustomResourceSubresourceScale{}
			if err := extv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sr.Scale, out.scale, nil); err != nil {
				return nil, fmt.Errorf("cannot convert the scale subresource: %w", err)
			}
		}
	}
	return out, nil
}

// APIVersion is the group/version the XRD's kinds are served at
// (flux-framework.org/v1alpha2).
func (s *Schema) APIVersion() string { return s.mustLoad().apiVersion }

// Kinds are the kinds whose schema s knows: for Claims the claim's
// (MiniCluster) and the composite resource's (XMiniCluster), for V2 the
// composite's (MiniCluster).
func (s *Schema) Kinds() []string { return append([]string(nil), s.mustLoad().kinds...) }

// forKind returns the CRD serving obj's kind, or nil.
func (s *Schema) forKind(obj map[string]any) *crd {
	k, _ := obj["kind"].(string)
	return s.mustLoad().byKind[k]
}

// kindError is the error for an object of a kind s does not know.
func (s *Schema) kindError(obj map[string]any) field.ErrorList {
	return field.ErrorList{field.NotSupported(field.NewPath("kind"), obj["kind"], s.Kinds())}
}

// Default applies the schema's defaults to obj (a MiniCluster claim or an
// XMiniCluster) in place, as the API server does after decoding: nulls the
// schema does not allow are dropped first, then defaults are set. Objects of
// other kinds are left alone. It does not drop unknown fields (see Prune).
func (s *Schema) Default(obj map[string]any) {
	c := s.forKind(obj)
	if c == nil {
		return
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	structuraldefaulting.Default(obj, c.structural)
}

// Unknown returns the paths of the fields of obj the schema does not know,
// sorted: what the API server's pruning would drop, and what it reports as
// `unknown field "<path>"` with kubectl's default --validate=strict
// (metadata fields included). obj is not changed. Objects of other kinds
// have no unknown fields.
func (s *Schema) Unknown(obj map[string]any) []string {
	c := s.forKind(obj)
	if c == nil {
		return nil
	}
	return prune(runtime.DeepCopyJSON(obj), c)
}

// Prune drops the fields Unknown reports from obj, in place, and returns
// their paths.
func (s *Schema) Prune(obj map[string]any) []string {
	c := s.forKind(obj)
	if c == nil {
		return nil
	}
	return prune(obj, c)
}

func prune(obj map[string]any, c *crd) []string {
	var paths []string
	// ObjectMeta is decoded strictly and separately, as the API server's
	// unstructuredSchemaCoercer does (which then writes the typed ObjectMeta
	// back, without the unknown fields).
	if _, _, meta, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true}); err == nil {
		for _, p := range meta {
			remove(obj, p)
		}
		paths = append(paths, meta...)
	}
	paths = append(paths, pruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	sort.Strings(paths)
	return paths
}

// remove deletes the field at path (a.b[0].c) from obj, if it is there.
func remove(obj map[string]any, path string) {
	var cur any = obj
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name, rest, _ := strings.Cut(part, "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if i == len(parts)-1 && rest == "" {
			delete(m, name)
			return
		}
		cur = m[name]
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			n, err := strconv.Atoi(idx)
			l, ok := cur.([]any)
			if err != nil || !ok || n < 0 || n >= len(l) {
				return
			}
			cur = l[n]
		}
	}
}

// Validate returns every schema and CEL error of obj, as the API server's
// create validation does (transition rules are not evaluated), with field
// paths rooted at the object ("spec.size"). As on create, status is not
// validated: the API server drops it. Call Default first, as the API server
// defaults before it validates. metadata (beyond the schema's maxLength of
// metadata.name), apiVersion and kind are not validated here.
func (s *Schema) Validate(ctx context.Context, obj map[string]any) field.ErrorList {
	c := s.forKind(obj)
	if c == nil {
		return s.kindError(obj)
	}
	obj = withStatus(obj, nil, c)
	var errs field.ErrorList
	errs = append(errs, sorted(validation.ValidateCustomResource(nil, obj, c.validator))...)
	errs = append(errs, c.validateScale(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, c.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	if blocked(errs) {
		return append(errs, field.Invalid(nil, nil, blockedMessage))
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, sorted(celErrs)...)
}

// ValidateUpdate returns every schema and CEL error of an update of old to
// obj, transition rules (oldSelf) included, as the API server does: with
// validation ratcheting (errors of fields the update leaves unchanged are
// not reported) and with old's status in place of obj's (an update of the
// main resource cannot change status). Both must be of the same kind.
//
// As on the server, a failed rule on a string field quotes the new value:
// the immutability rule of spec.flux.curveCert repeats the certificate.
func (s *Schema) ValidateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	c := s.forKind(obj)
	if c == nil {
		return s.kindError(obj)
	}
	if old["kind"] != obj["kind"] {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), obj["kind"], fmt.Sprintf("field is immutable: the object is a %v", old["kind"]))}
	}
	obj = withStatus(obj, old, c)
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: c.structural})
	var errs field.ErrorList
	errs = append(errs, sorted(validation.ValidateCustomResourceUpdate(nil, obj, old, c.validator, validation.WithRatcheting(correlated)))...)
	errs = append(errs, c.validateScale(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, c.structural, false)...)
	if oldErrs := listtype.ValidateListSetsAndMaps(nil, c.structural, old); len(oldErrs) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	}
	if blocked(errs) {
		return append(errs, field.Invalid(nil, nil, blockedMessage))
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj, old, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
	return append(errs, sorted(celErrs)...)
}

// sorted orders errs by field path, then message. The validators walk maps,
// so the API server reports the same errors in a random order; a fixed one
// makes the CLI's output reproducible.
func sorted(errs field.ErrorList) field.ErrorList {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Field != errs[j].Field {
			return errs[i].Field < errs[j].Field
		}
		return errs[i].ErrorBody() < errs[j].ErrorBody()
	})
	return errs
}

// withStatus returns obj with the status the API server would validate: on
// create (old == nil) none, on update old's. obj itself is not changed.
func withStatus(obj, old map[string]any, c *crd) map[string]any {
	if !c.hasStatus {
		return obj
	}
	st, ok := old["status"]
	if _, has := obj["status"]; !has && !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	if ok {
		out["status"] = st
	}
	return out
}

// blocked is the API server's hasBlockingErr: CEL rules are not evaluated
// when the object has errors of these types.
func blocked(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// validateScale is the API server's customResourceValidator.ValidateScaleSpec
// and ValidateScaleStatus, with their messages and paths.
func (c *crd) validateScale(obj map[string]any) field.ErrorList {
	if c.scale == nil {
		return nil
	}
	var errs field.ErrorList
	replicas := func(path string) {
		p := strings.TrimPrefix(path, ".")
		n, _, err := unstructured.NestedInt64(obj, strings.Split(p, ".")...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	replicas(c.scale.SpecReplicasPath)
	replicas(c.scale.StatusReplicasPath)
	if c.scale.LabelSelectorPath != nil {
		p := strings.TrimPrefix(*c.scale.LabelSelectorPath, ".")
		s, _, err := unstructured.NestedString(obj, strings.Split(p, ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*c.scale.LabelSelectorPath), s, err.Error()))
		}
	}
	return errs
}

// Int64s turns every float64 of obj that holds an integer into an int64, in
// place, and returns obj. Use it on objects that went through a protobuf
// Struct (a RunFunctionRequest), where every number is a float64: the API
// server decodes JSON integers as int64, and its CEL rules treat a float64
// in an integer field as an error.
func Int64s(obj map[string]any) map[string]any {
	for k, v := range obj {
		obj[k] = int64s(v)
	}
	return obj
}

func int64s(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return Int64s(t)
	case []any:
		for i := range t {
			t[i] = int64s(t[i])
		}
	case float64:
		if t == math.Trunc(t) && t >= -(1<<63) && t < 1<<63 {
			return int64(t)
		}
	}
	return v
}
