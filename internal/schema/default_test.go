package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// everyDefault is a claim with the parent of every field
// v1alpha2.SchemaDefaults names, and none of those fields.
const everyDefault = `  containers: [{name: a, command: hostname}, {name: b}]
  services: [{name: db}]
  flux:
    bursting:
      leadBroker: {address: 10.0.0.1, name: root, size: 4}
`

// TestDefaultAgreesWithSetDefaults holds the two ways a MiniCluster gets its
// defaults to one another: the schema's (the API server's, and the
// function's before it decodes), and SetDefaults' (for a MiniCluster that
// never met a schema). Both take their values from v1alpha2's constants;
// here SetDefaults gives the same MiniCluster whether or not the schema's
// defaults were applied first, so no default the schema applies is missing
// from SetDefaults or has another value there.
func TestDefaultAgreesWithSetDefaults(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string
	}{
		"EveryDefault": {
			reason: "Every field the schema defaults is absent.",
			spec:   everyDefault,
		},
		"HelloWorld": {
			reason: "The hello-world claim: no flux block.",
			spec:   "  size: 4\n  containers: [{image: rockylinux:9, command: echo hello world}]\n",
		},
		"EmptyObjects": {
			reason: "Empty flux and bursting blocks.",
			spec:   "  flux: {bursting: {}}\n  containers: [{command: hostname}]\n",
		},
		"ExplicitValues": {
			reason: "Explicit values, zeros and empty strings included, are kept by both.",
			spec: `  size: 3
  tasks: 0
  deadlineSeconds: 60
  containers: [{image: "", command: hostname}]
  services: [{name: db, image: postgres}]
  flux:
    connectTimeout: ""
    logLevel: 0
    bursting:
      leadBroker: {address: 10.0.0.1, name: root, size: 4, port: 30093}
`,
		},
	}
	for name, tc := range cases {
		for shape, s := range map[string]*Schema{"Claims": Claims, "V2": V2} {
			t.Run(name+"/"+shape, func(t *testing.T) {
				bare := decode(t, withSpec(tc.spec))
				schemaDefaulted := decode(t, withSpec(tc.spec))
				s.Default(schemaDefaulted)
				want, got := setDefaults(t, bare), setDefaults(t, schemaDefaulted)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s\nSetDefaults after the schema's defaults: -SetDefaults alone, +schema then SetDefaults:\n%s", tc.reason, diff)
				}
			})
		}
	}
}

// TestDefaultAppliesEverySchemaDefault checks that everyDefault is what
// TestDefaultAgreesWithSetDefaults needs: the schema defaults each field
// v1alpha2.SchemaDefaults names, to its value there.
func TestDefaultAppliesEverySchemaDefault(t *testing.T) {
	for shape, s := range map[string]*Schema{"Claims": Claims, "V2": V2} {
		t.Run(shape, func(t *testing.T) {
			obj := decode(t, withSpec(everyDefault))
			s.Default(obj)
			for _, d := range v1alpha2.SchemaDefaults() {
				got := valuesAt(obj["spec"], strings.Split(d.Path, "."))
				if len(got) == 0 {
					t.Errorf("spec.%s: the schema set no default: extend everyDefault with its parent", d.Path)
				}
				for _, v := range got {
					if _, object := d.Value.(map[string]any); object {
						if _, ok := v.(map[string]any); !ok {
							t.Errorf("spec.%s: the schema's default is %v, want an object", d.Path, v)
						}
						continue
					}
					if diff := cmp.Diff(jsonOf(t, d.Value), jsonOf(t, v)); diff != "" {
						t.Errorf("spec.%s: -v1alpha2.SchemaDefaults, +the schema's default:\n%s", d.Path, diff)
					}
				}
			}
		})
	}
}

// setDefaults decodes obj as a MiniCluster and applies SetDefaults.
func setDefaults(t *testing.T, obj map[string]any) *v1alpha2.MiniCluster {
	t.Helper()
	mc := &v1alpha2.MiniCluster{}
	if err := json.Unmarshal([]byte(jsonOf(t, obj)), mc); err != nil {
		t.Fatal(err)
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	return mc
}

// valuesAt is every value at path (SchemaDefault's notation) below v.
func valuesAt(v any, path []string) []any {
	if len(path) == 0 {
		return []any{v}
	}
	name, items := strings.CutSuffix(path[0], "[]")
	m, _ := v.(map[string]any)
	next, ok := m[name]
	if !ok {
		return nil
	}
	if !items {
		return valuesAt(next, path[1:])
	}
	list, _ := next.([]any)
	var out []any
	for _, item := range list {
		out = append(out, valuesAt(item, path[1:])...)
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDefault(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   string
	}{
		"HelloWorld": {
			reason: "The schema's defaults, as the API server sets them.",
			obj:    helloWorld,
			want: withSpec(`  size: 4
  tasks: 1
  deadlineSeconds: 31500000
  logging: {quiet: true}
  flux: {bursting: {}, logLevel: 6}
  containers:
    - image: rockylinux:9
      command: echo hello world
`),
		},
		"Nulls": {
			reason: "A null with a default gets the default; one without is dropped.",
			obj:    withSpec("  size: null\n  maxSize: null\n  containers: [{command: x}]\n"),
			want: withSpec(`  size: 1
  tasks: 1
  deadlineSeconds: 31500000
  flux: {bursting: {}, logLevel: 6}
  containers: [{command: x, image: ghcr.io/rse-ops/accounting:app-latest}]
`),
		},
		"OtherKind": {
			reason: "Other kinds are left alone.",
			obj:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: null}\n",
			want:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: null}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.obj)
			Claims.Default(obj)
			if diff := cmp.Diff(decode(t, tc.want), obj); diff != "" {
				t.Errorf("%s\nDefault: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
