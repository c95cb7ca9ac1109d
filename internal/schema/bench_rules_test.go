package schema

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// BenchmarkRuleKinds: what one rule of each kind the XRD uses costs the API
// server (and the function's in-process check) on one value, against the
// same value under no rule. docs/performance.md reports the figures.
func BenchmarkRuleKinds(b *testing.B) {
	str := func(extra apiextensions.JSONSchemaProps) apiextensions.JSONSchemaProps {
		extra.Type = "string"
		return extra
	}
	maxLen := int64(4096)
	kinds := map[string]struct {
		prop  apiextensions.JSONSchemaProps
		value any
	}{
		"none":            {prop: str(apiextensions.JSONSchemaProps{}), value: "/data/x"},
		"openapi-bound":   {prop: str(apiextensions.JSONSchemaProps{MaxLength: &maxLen}), value: "/data/x"},
		"openapi-enum":    {prop: str(apiextensions.JSONSchemaProps{Enum: []apiextensions.JSON{"ClusterFirst", "Default"}}), value: "Default"},
		"openapi-pattern": {prop: str(apiextensions.JSONSchemaProps{MaxLength: &maxLen, Pattern: `^/[A-Za-z0-9._/-]*$`}), value: "/data/x"},
		"cel-compare": {prop: str(apiextensions.JSONSchemaProps{MaxLength: &maxLen, XValidations: apiextensions.ValidationRules{
			{Rule: "self == '' || (self.startsWith('/') && self != '/' && !self.contains(':'))", Message: "m"}}}), value: "/data/x"},
		"cel-compare-x8": {prop: str(apiextensions.JSONSchemaProps{MaxLength: &maxLen, XValidations: eight(
			apiextensions.ValidationRule{Rule: "self == '' || (self.startsWith('/') && self != '/' && !self.contains(':'))", Message: "m"})}), value: "/data/x"},
		"cel-regex": {prop: str(apiextensions.JSONSchemaProps{MaxLength: &maxLen, XValidations: apiextensions.ValidationRules{
			{Rule: "!self.matches('(^|/)[.][.](/|$)')", Message: "m"}}}), value: "/data/x"},
	}
	for name, k := range kinds {
		b.Run(name, func(b *testing.B) {
			root := &apiextensions.JSONSchemaProps{Type: "object", Properties: map[string]apiextensions.JSONSchemaProps{"v": k.prop}}
			s, err := structuralschema.NewStructural(root)
			if err != nil {
				b.Fatal(err)
			}
			v, _, err := validation.NewSchemaValidator(root)
			if err != nil {
				b.Fatal(err)
			}
			c := cel.NewValidator(s, false, celconfig.PerCallLimit)
			obj := map[string]any{"v": k.value}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if errs := validation.ValidateCustomResource(nil, obj, v); len(errs) > 0 {
					b.Fatal(errs)
				}
				if c != nil {
					if errs, _ := c.Validate(ctx, nil, s, obj, nil, celconfig.RuntimeCELCostBudget); len(errs) > 0 {
						b.Fatal(errs)
					}
				}
			}
		})
	}
}

// eight is the rule r eight times: the cost of a rule beyond the first.
func eight(r apiextensions.ValidationRule) apiextensions.ValidationRules {
	out := make(apiextensions.ValidationRules, 8)
	for i := range out {
		out[i] = r
	}
	return out
}
