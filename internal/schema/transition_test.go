package schema

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/ptr"
)

func TestTransition(t *testing.T) {
	cases := map[string]struct {
		reason string
		rule   extv1.ValidationRule
		want   bool
	}{
		"Immutable": {
			reason: "A rule comparing self with oldSelf is evaluated only on update.",
			rule:   extv1.ValidationRule{Rule: "self == oldSelf"},
			want:   true,
		},
		"Field": {
			reason: "Reading a field of oldSelf is reading oldSelf.",
			rule:   extv1.ValidationRule{Rule: "!has(oldSelf.size) || self.size >= oldSelf.size"},
			want:   true,
		},
		"Optional": {
			reason: "An optionalOldSelf rule is evaluated on create too, with oldSelf unset.",
			rule:   extv1.ValidationRule{Rule: "!oldSelf.hasValue() || self == oldSelf.value()", OptionalOldSelf: ptr.To(true)},
		},
		"InAString": {
			reason: "oldSelf in a string literal is text, not the variable.",
			rule:   extv1.ValidationRule{Rule: "self != 'oldSelf'"},
		},
		"Self": {
			reason: "A rule of self alone is evaluated on create.",
			rule:   extv1.ValidationRule{Rule: "self.size >= 1"},
		},
		"DoesNotParse": {
			reason: "A rule that does not parse is kept, so the API server's compile error stays.",
			rule:   extv1.ValidationRule{Rule: "oldSelf ==="},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := transition(tc.rule); got != tc.want {
				t.Errorf("%s\ntransition(%q) = %v, want %v", tc.reason, tc.rule.Rule, got, tc.want)
			}
		})
	}
}

// TestTransitionIsTheCompilers holds transition to the API server's own
// compiler: for every rule of every kind of both XRDs, it reads oldSelf
// exactly when the compiler marks the rule UsesOldSelf. And the create-time
// schema keeps every other rule.
func TestTransitionIsTheCompilers(t *testing.T) {
	for name, s := range map[string]*Schema{"Claims": Claims, "V2": V2} {
		for _, kind := range s.Kinds() {
			t.Run(name+"/"+kind, func(t *testing.T) {
				c := s.mustLoad().byKind[kind]
				var uses, reads []string
				all := 0
				walk(c.structural, "", true, func(path string, node *structuralschema.Structural, root bool) {
					results, err := cel.Compile(node, model.SchemaDeclType(node, root), celconfig.PerCallLimit,
						environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					for i, r := range node.XValidations {
						all++
						if results[i].Error != nil {
							t.Errorf("%s: rule %q does not compile: %v", path, r.Rule, results[i].Error)
						}
						id := fmt.Sprintf("%s: %s", path, r.Rule)
						if results[i].UsesOldSelf && !ptr.Deref(r.OptionalOldSelf, false) {
							uses = append(uses, id)
						}
						if transition(r) {
							reads = append(reads, id)
						}
					}
				})
				if diff := cmp.Diff(uses, reads); diff != "" {
					t.Errorf("rules the compiler evaluates only on update (-) and those transition finds (+):\n%s", diff)
				}
				if len(uses) == 0 {
					t.Errorf("no transition rules found: the XRD's immutability rules are gone, or the walk is")
				}
				kept := 0
				walk(c.cel().structural, "", true, func(_ string, node *structuralschema.Structural, _ bool) {
					kept += len(node.XValidations)
				})
				if kept != all-len(uses) {
					t.Errorf("the create-time schema keeps %d rules, want %d (all %d less %d transition rules)", kept, all-len(uses), all, len(uses))
				}
			})
		}
	}
}

// walk calls f for every schema at and under s that has rules, in path
// order.
func walk(s *structuralschema.Structural, path string, root bool, f func(string, *structuralschema.Structural, bool)) {
	if s == nil {
		return
	}
	if len(s.XValidations) > 0 {
		f(path, s, root)
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		walk(&p, path+"."+k, p.XEmbeddedResource, f)
	}
	walk(s.Items, path+"[]", s.Items != nil && s.Items.XEmbeddedResource, f)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		walk(s.AdditionalProperties.Structural, path+"{}", s.AdditionalProperties.Structural.XEmbeddedResource, f)
	}
}
