package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	xpv2 "github.com/crossplane/crossplane/apis/v2/apiextensions/v2"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// readXRDs reads the committed XRDs of both shapes.
func readXRDs(t *testing.T) (*xpv1.CompositeResourceDefinition, *xpv2.CompositeResourceDefinition) {
	t.Helper()
	v1, v2 := &xpv1.CompositeResourceDefinition{}, &xpv2.CompositeResourceDefinition{}
	for path, into := range map[string]any{"definition.yaml": v1, "v2/definition.yaml": v2} {
		b, err := os.ReadFile(filepath.Join("..", "..", "compositions", path))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, into); err != nil {
			t.Fatalf("compositions/%s: %v", path, err)
		}
	}
	return v1, v2
}

// TestV2XRD checks the Crossplane v2 shape's XRD against the claim shape's:
// a namespaced composite named as the upstream MiniCluster (the claim's
// names), no claim (an apiextensions.crossplane.io/v2 XRD with claimNames is
// refused), and the same version: schema, CEL rules, printer columns and
// scale subresource.
func TestV2XRD(t *testing.T) {
	v1, v2 := readXRDs(t)
	if got := v2.APIVersion; got != "apiextensions.crossplane.io/v2" {
		t.Errorf("apiVersion = %q, want apiextensions.crossplane.io/v2", got)
	}
	if v2.Spec.Scope != xpv2.CompositeResourceScopeNamespaced {
		t.Errorf("scope = %q, want Namespaced", v2.Spec.Scope)
	}
	// Read as YAML: the Go field is deprecated in the v2 API.
	raw, err := os.ReadFile(filepath.Join("..", "..", "compositions", "v2", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"claimNames", "defaultCompositeDeletePolicy", "connectionSecretKeys"} {
		if v, ok := doc.Spec[f]; ok {
			t.Errorf("spec.%s = %v: a v2 XRD has no claim (the API server refuses it)", f, v)
		}
	}
	if diff := cmp.Diff(*v1.Spec.ClaimNames, v2.Spec.Names); diff != "" {
		t.Errorf("v2 names differ from the claim's (-claim, +v2):\n%s", diff)
	}
	if want := v2.Spec.Names.Plural + "." + v2.Spec.Group; v2.Name != want || v2.Spec.Group != v1.Spec.Group {
		t.Errorf("name %q, group %q: want %q, group %q", v2.Name, v2.Spec.Group, want, v1.Spec.Group)
	}
	if diff := cmp.Diff(v1.Spec.DefaultCompositionRef.Name, v2.Spec.DefaultCompositionRef.Name); diff != "" {
		t.Errorf("default Composition differs (-claims, +v2):\n%s", diff)
	}
	// The versions are the same YAML, compared as JSON.
	a, err := json.Marshal(v1.Spec.Versions)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v2.Spec.Versions)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("versions differ (-claims, +v2):\n%s", diff)
	}
}

// compositeCRD derives the CRD Crossplane serves a v2 XRD's composite
// with: Crossplane core reads a v2 XRD into the v1 type.
func compositeCRD(t *testing.T, xrd *xpv2.CompositeResourceDefinition) *extv1.CustomResourceDefinition {
	t.Helper()
	b, err := json.Marshal(xrd)
	if err != nil {
		t.Fatal(err)
	}
	v1 := &xpv1.CompositeResourceDefinition{}
	if err := json.Unmarshal(b, v1); err != nil {
		t.Fatal(err)
	}
	crd, err := xcrd.ForCompositeResource(v1)
	if err != nil {
		t.Fatalf("Crossplane cannot derive the composite CRD: %v", err)
	}
	return crd
}

// TestV2RulesOnlyReadOurFields derives the composite CRD of the v2 XRD as
// Crossplane does, where Crossplane's own fields live under spec.crossplane,
// and evaluates its CEL rules as the API server would on updates of a
// running MiniCluster: Crossplane may write spec.crossplane (its composition
// references, update policy, resource references) freely, while the
// immutability rules still hold for the MiniCluster's own fields.
func TestV2RulesOnlyReadOurFields(t *testing.T) {
	_, v2 := readXRDs(t)
	crd := compositeCRD(t, v2)
	if crd.Spec.Scope != extv1.NamespaceScoped || crd.Name != "miniclusters.flux-framework.org" || crd.Spec.Names.Kind != "MiniCluster" {
		t.Fatalf("composite CRD %s: scope %s, kind %s; want the namespaced MiniCluster", crd.Name, crd.Spec.Scope, crd.Spec.Names.Kind)
	}
	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := schema.Properties["spec"]
	if _, ok := spec.Properties["crossplane"]; !ok {
		t.Fatal("the composite CRD has no spec.crossplane: the cases below would not exercise Crossplane's fields")
	}
	for _, r := range spec.XValidations {
		if strings.Contains(r.Rule, "crossplane") || strings.Contains(r.Rule, "self == oldSelf") {
			t.Errorf("rule on spec reads Crossplane's fields or all of spec: %s", r.Rule)
		}
	}

	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatalf("schema is not structural: %v", err)
	}
	validator := cel.NewValidator(s, true, celconfig.PerCallLimit)

	running := func() map[string]any {
		return map[string]any{
			"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster",
			"metadata": map[string]any{"name": "flux-sample", "namespace": "default"},
			"spec": map[string]any{
				"size":       int64(4),
				"logging":    map[string]any{"quiet": true},
				"containers": []any{map[string]any{"image": "rockylinux:9", "command": "echo hello world"}},
				"crossplane": map[string]any{
					"compositionRef":          map[string]any{"name": "miniclusters.flux-framework.org"},
					"compositionRevisionRef":  map[string]any{"name": "miniclusters.flux-framework.org-1a2b3c4"},
					"compositionUpdatePolicy": "Automatic",
				},
			},
		}
	}
	cases := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string // "" = allowed
	}{
		"composition revision": {
			reason: "Crossplane moves a composite to a new CompositionRevision",
			change: func(spec map[string]any) {
				spec["crossplane"].(map[string]any)["compositionRevisionRef"] = map[string]any{"name": "miniclusters.flux-framework.org-9f8e7d6"}
			},
		},
		"resource references": {
			reason: "Crossplane records what it composed",
			change: func(spec map[string]any) {
				spec["crossplane"].(map[string]any)["resourceRefs"] = []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "flux-sample"}}
			},
		},
		"spec.crossplane removed": {
			reason: "no rule depends on Crossplane's fields being there",
			change: func(spec map[string]any) { delete(spec, "crossplane") },
		},
		"size": {
			reason: "scaling stays allowed",
			change: func(spec map[string]any) { spec["size"] = int64(2) },
		},
		"containers": {
			reason: "the Job's pod template is immutable",
			change: func(spec map[string]any) {
				spec["containers"] = []any{map[string]any{"image": "rockylinux:9", "command": "echo goodbye"}}
			},
			want: "spec.containers is immutable",
		},
		"add pod": {
			reason: "a field absent at creation cannot be added",
			change: func(spec map[string]any) { spec["pod"] = map[string]any{"nodeSelector": map[string]any{"pool": "hpc"}} },
			want:   "spec.pod is immutable",
		},
		"containers and Crossplane's fields together": {
			reason: "Crossplane's fields do not hide a change of ours",
			change: func(spec map[string]any) {
				spec["crossplane"].(map[string]any)["compositionUpdatePolicy"] = "Manual"
				spec["logging"] = map[string]any{"quiet": false}
			},
			want: "spec.logging is immutable",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, obj := running(), running()
			tc.change(obj["spec"].(map[string]any))
			errs, _ := validator.Validate(context.Background(), nil, s, obj, old, celconfig.RuntimeCELCostBudget)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			msg := strings.Join(got, "; ")
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("%s: refused: %s", tc.reason, msg)
			case tc.want != "" && !strings.Contains(msg, tc.want):
				t.Errorf("%s: got %q, want an error containing %q", tc.reason, msg, tc.want)
			}
		})
	}
}

// TestV2Composition checks the committed v2 Composition, which make generate
// derives: the claim shape's Composition but for the composite kind it
// composes, so one pipeline and one set of platform defaults serve both.
func TestV2Composition(t *testing.T) {
	read := func(path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", "compositions", path))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("compositions/%s: %v", path, err)
		}
		return m
	}
	claims, v2 := read("composition.yaml"), read("v2/composition.yaml")
	ref := v2["spec"].(map[string]any)["compositeTypeRef"].(map[string]any)
	if ref["apiVersion"] != "flux-framework.org/v1alpha2" || ref["kind"] != "MiniCluster" {
		t.Errorf("v2 Composition composes %v, want flux-framework.org/v1alpha2 MiniCluster", ref)
	}
	ref["kind"] = "XMiniCluster"
	if diff := cmp.Diff(claims, v2); diff != "" {
		t.Errorf("the Compositions differ beyond the composite kind (-claims, +v2):\n%s", diff)
	}
}

func TestV2CompositionText(t *testing.T) {
	const ref = "spec:\n  compositeTypeRef:\n    apiVersion: flux-framework.org/v1alpha2\n"
	cases := map[string]struct {
		reason  string
		claims  string
		want    string
		wantErr string
	}{
		"Kind": {
			reason: "The composite kind is the one line that changes besides the header comment; other comments stay.",
			claims: "# The claim shape's.\n# Two lines.\n" + ref + "    kind: XMiniCluster\n  # defaults\n  mode: Pipeline\n",
			want:   compositionHeader + ref + "    kind: MiniCluster\n  # defaults\n  mode: Pipeline\n",
		},
		"NoKind": {
			reason:  "A Composition written another way is refused rather than copied unchanged.",
			claims:  ref + "    kind: \"XMiniCluster\"\n",
			wantErr: "found it 0 times",
		},
		"TwoKinds": {
			reason:  "A second line like it would make the replacement ambiguous.",
			claims:  ref + "    kind: XMiniCluster\n  other:\n    kind: XMiniCluster\n",
			wantErr: "found it 2 times",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := V2Composition([]byte(tc.claims))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nV2Composition(...): error %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nV2Composition(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\nV2Composition(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
