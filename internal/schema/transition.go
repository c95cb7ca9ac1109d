package schema

import (
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/parser"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/utils/ptr"
)

// celCreate is a CEL validator of what the API server evaluates on create,
// and the schema it walks. A transition rule (one that reads oldSelf and is
// not optionalOldSelf) is skipped when there is no old object, but the API
// server's validator compiles it all the same. The XRD has 64 of them
// (immutability, one for each field), a third of its rules, so leaving them
// out of the schema before compiling keeps a third fewer programs in memory
// for what Validate, the function's only check, never evaluates.
type celCreate struct {
	structural *structuralschema.Structural
	validator  *cel.Validator
}

// newCELCreate compiles the create-time rules of s (s is not changed).
func newCELCreate(s *structuralschema.Structural, perCallLimit uint64) *celCreate {
	c := withoutTransitionRules(s.DeepCopy())
	return &celCreate{structural: c, validator: cel.NewValidator(c, true, perCallLimit)}
}

// withoutTransitionRules removes, in place, the rules of s and every schema
// under it that the API server evaluates only on update, and returns s.
func withoutTransitionRules(s *structuralschema.Structural) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	kept := s.XValidations[:0]
	for _, r := range s.XValidations {
		if !transition(r) {
			kept = append(kept, r)
		}
	}
	s.XValidations = kept
	if s.ValueValidation != nil {
		for i := range s.ValueValidation.AllOf {
			a := &s.ValueValidation.AllOf[i]
			keptAllOf := a.XValidations[:0]
			for _, r := range a.XValidations {
				if !transition(r) {
					keptAllOf = append(keptAllOf, r)
				}
			}
			a.XValidations = keptAllOf
		}
	}
	for k, p := range s.Properties {
		s.Properties[k] = *withoutTransitionRules(&p)
	}
	withoutTransitionRules(s.Items)
	if s.AdditionalProperties != nil {
		withoutTransitionRules(s.AdditionalProperties.Structural)
	}
	return s
}

// transition reports whether the API server evaluates r only on update: r
// reads oldSelf (as the compiler finds it, an identifier, not text in a
// string) and is not optionalOldSelf. A rule that does not parse is kept,
// so that its error is the API server's.
func transition(r extv1.ValidationRule) bool {
	if ptr.Deref(r.OptionalOldSelf, false) {
		return false
	}
	p, err := parser.NewParser(parser.Macros(parser.AllMacros...), parser.EnableOptionalSyntax(true))
	if err != nil {
		return false
	}
	tree, errs := p.Parse(common.NewTextSource(r.Rule))
	if len(errs.GetErrors()) > 0 {
		return false
	}
	reads := false
	ast.PreOrderVisit(tree.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.IdentKind && e.AsIdent() == cel.OldScopedVarName {
			reads = true
		}
	}))
	return reads
}
