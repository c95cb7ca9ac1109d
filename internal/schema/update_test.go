package schema

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// ValidateUpdate returns every schema and CEL error of an update of old to
// obj, transition rules (oldSelf) included, as the API server does: with
// validation ratcheting (errors of fields the update leaves unchanged are
// not reported) and with old's status in place of obj's (an update of the
// main resource cannot change status). Both must be of the same kind.
//
// As on the server, a failed rule on a string field quotes the new value:
// the immutability rule of spec.flux.curveCert repeats the certificate.
//
// It is for the tests: nothing in the module validates an update (the API
// server does, on a cluster). The tests use it to hold the XRD's transition
// rules (immutability, oldSelf) and ratcheting to their messages.
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
