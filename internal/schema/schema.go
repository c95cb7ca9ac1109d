// Package schema evaluates the MiniCluster XRD's schema in-process, with the
// API server's own libraries (k8s.io/apiextensions-apiserver): pruning of
// unknown fields, defaulting, OpenAPI validation and CEL rules
// (x-kubernetes-validations), exactly as kube-apiserver does for the claim
// and composite resource CRDs Crossplane generates from the XRD.
//
// The CRDs are those Crossplane derives from the XRDs, with its own
// generator (crossplane-runtime's xcrd, the code Crossplane core runs), so
// the fields Crossplane adds are known and validated as on a cluster; make
// generate writes them to crds/ (see package derive). Claims
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
// The validators are built once, on first use (the CEL rules of a kind on
// the first use of that kind), and are safe for concurrent use.
package schema

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// crd is what the API server builds to serve one kind (its
// customResourceStrategy): the OpenAPI validator, the structural schema with
// defaults pruned, the CEL validator and the scale subresource.
type crd struct {
	kind       string
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	// cel is built on first use of the kind: compiling the XRD's rules
	// keeps megabytes of programs per kind, and allocates four times as
	// much on the way, while a function on a control plane of one shape
	// only ever validates one of the XRD's kinds (the composite). It holds
	// the create-time rules only (see celCreate); celUpdate, all of them,
	// for the tests' ValidateUpdate.
	cel       func() *celCreate
	celUpdate func() *cel.Validator
	scale     *apiextensions.CustomResourceSubresourceScale
	hasStatus bool
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

func newSchema(crdFile []byte) *Schema {
	return &Schema{load: sync.OnceValues(func() (*crds, error) { return build(crdFile) })}
}

var (
	// Claims is the schema of the claim shape's XRD
	// (compositions/definition.yaml): the namespaced claim MiniCluster and
	// the cluster-scoped composite XMiniCluster.
	Claims = newSchema(claimsCRDs)
	// V2 is the schema of the Crossplane v2 shape's XRD
	// (compositions/v2/definition.yaml): the namespaced composite
	// MiniCluster, whose spec.crossplane holds Crossplane's fields
	// (compositionRef, resourceRefs, ...) where a claim has them at the top
	// of spec. Its one kind has the claim's name, which is why it is a
	// Schema of its own.
	V2 = newSchema(v2CRDs)
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
