package schema

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// blockedMessage is the API server's error when CEL rules were skipped.
const blockedMessage = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

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
	create := c.cel()
	celErrs, _ := create.validator.Validate(ctx, nil, create.structural, obj, nil, celconfig.RuntimeCELCostBudget)
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
