package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// home is v1alpha2.SchemaDefaults as SchemaDefaultsIn reports defaults.
func home(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range v1alpha2.SchemaDefaults() {
		b, err := json.Marshal(d.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[d.Path] = string(b)
	}
	return out
}

// specSchema is a schema with every field SchemaDefaults names and nothing
// else, decoded from JSON as the generators see it.
func specSchema(t *testing.T) map[string]any {
	t.Helper()
	root := map[string]any{"type": "object"}
	for _, d := range v1alpha2.SchemaDefaults() {
		node := root
		for _, step := range strings.Split(d.Path, ".") {
			name, items := strings.CutSuffix(step, "[]")
			props, ok := node["properties"].(map[string]any)
			if !ok {
				props = map[string]any{}
				node["properties"] = props
			}
			next, ok := props[name].(map[string]any)
			if !ok {
				next = map[string]any{"type": "object"}
				props[name] = next
			}
			if items {
				next["type"] = "array"
				if next["items"] == nil {
					next["items"] = map[string]any{"type": "object"}
				}
				next = next["items"].(map[string]any)
			}
			node = next
		}
	}
	return root
}

func TestSetSchemaDefaults(t *testing.T) {
	cases := map[string]struct {
		reason  string
		edit    func(spec map[string]any)
		wantErr string // substring; "" for none
	}{
		"WritesTheHome": {
			reason: "Every default of v1alpha2.SchemaDefaults lands at its path, and no other.",
			edit:   func(map[string]any) {},
		},
		"RefusesAMarker": {
			reason:  "A default already in the schema comes from a +kubebuilder:default marker, a second home for the value.",
			edit:    func(spec map[string]any) { spec["properties"].(map[string]any)["size"].(map[string]any)["default"] = 2 },
			wantErr: "the types give size a default (a +kubebuilder:default marker): state it in v1alpha2.SchemaDefaults",
		},
		"RefusesAMarkerInAList": {
			reason: "Defaults of list items are found too.",
			edit: func(spec map[string]any) {
				items := spec["properties"].(map[string]any)["containers"].(map[string]any)["items"].(map[string]any)
				items["properties"] = map[string]any{"name": map[string]any{"type": "string", "default": "x"}}
			},
			wantErr: "containers[].name",
		},
		"MissingField": {
			reason:  "A path the types do not have (a renamed field) is an error, not a silently lost default.",
			edit:    func(spec map[string]any) { delete(spec["properties"].(map[string]any), "tasks") },
			wantErr: "tasks names a field the schema does not have",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := specSchema(t)
			tc.edit(spec)
			err := SetSchemaDefaults(spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nSetSchemaDefaults: got error %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nSetSchemaDefaults: %v", tc.reason, err)
			}
			if diff := cmp.Diff(home(t), SchemaDefaultsIn(spec)); diff != "" {
				t.Errorf("%s\nschema defaults: -v1alpha2.SchemaDefaults, +written:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCommittedSchemaDefaultsAreTheHome holds the committed generated
// files to v1alpha2.SchemaDefaults without controller-gen: every default of
// the MiniCluster spec, in both XRDs and in the template of the Burst CRD,
// is the home's value at the home's path, and there is no other. What the
// API server applies is then what SetDefaults applies (internal/schema's
// TestDefaultAgreesWithSetDefaults compares the two directly).
func TestCommittedSchemaDefaultsAreTheHome(t *testing.T) {
	root := filepath.Join("..", "..")
	xrdSpecs := func(path string) func(t *testing.T) []map[string]any {
		return func(t *testing.T) []map[string]any {
			b, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Fatal(err)
			}
			var xrd struct {
				Spec struct {
					Versions []struct {
						Schema struct {
							OpenAPIV3Schema struct {
								Properties map[string]map[string]any `json:"properties"`
							} `json:"openAPIV3Schema"`
						} `json:"schema"`
					} `json:"versions"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(b, &xrd); err != nil {
				t.Fatal(err)
			}
			var out []map[string]any
			for _, v := range xrd.Spec.Versions {
				out = append(out, v.Schema.OpenAPIV3Schema.Properties["spec"])
			}
			return out
		}
	}
	cases := map[string]struct {
		reason string
		specs  func(t *testing.T) []map[string]any
	}{
		"Claims": {
			reason: "compositions/definition.yaml, the claim shape's XRD.",
			specs:  xrdSpecs("compositions/definition.yaml"),
		},
		"V2": {
			reason: "compositions/v2/definition.yaml, the Crossplane v2 shape's XRD.",
			specs:  xrdSpecs("compositions/v2/definition.yaml"),
		},
		"BurstTemplate": {
			reason: "The MiniCluster spec the Burst CRD embeds as spec.forProvider.template.",
			specs: func(t *testing.T) []map[string]any {
				b, err := os.ReadFile(filepath.Join(root, "package", "provider", "crds", burstCRD))
				if err != nil {
					t.Fatal(err)
				}
				var out []map[string]any
				if _, err := editTemplates(b, func(template map[string]any) error {
					out = append(out, template)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return out
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			specs := tc.specs(t)
			if len(specs) == 0 {
				t.Fatalf("%s\nfound no MiniCluster spec schema", tc.reason)
			}
			for _, spec := range specs {
				if diff := cmp.Diff(home(t), SchemaDefaultsIn(spec)); diff != "" {
					t.Errorf("%s\nschema defaults: -v1alpha2.SchemaDefaults, +committed (run make generate):\n%s", tc.reason, diff)
				}
			}
		})
	}
}
