package schema

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/compositions"
	"github.com/flux-framework/minicluster-crossplane/internal/schema/derive"
)

func TestLoad(t *testing.T) {
	if err := Claims.Load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MiniCluster", "XMiniCluster"}, Claims.Kinds()); diff != "" {
		t.Errorf("Kinds: -want, +got:\n%s", diff)
	}
	if got := Claims.APIVersion(); got != "flux-framework.org/v1alpha2" {
		t.Errorf("Claims.APIVersion() = %q", got)
	}
}

func TestLoadV2(t *testing.T) {
	if err := V2.Load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MiniCluster"}, V2.Kinds()); diff != "" {
		t.Errorf("V2.Kinds: -want, +got:\n%s", diff)
	}
	if got := V2.APIVersion(); got != Claims.APIVersion() {
		t.Errorf("V2.APIVersion() = %q, want the claim shape's %q", got, Claims.APIVersion())
	}
}

// TestShapes checks a MiniCluster against each shape's schema: Crossplane
// v2 keeps its fields under spec.crossplane of the namespaced composite,
// the claim at the top of spec.
func TestShapes(t *testing.T) {
	type want struct {
		unknown []string
		errs    []string
	}
	cases := map[string]struct {
		reason string
		spec   string
		claims want
		v2     want
	}{
		"CrossplaneBlock": {
			reason: "A user-written spec.crossplane (a pinned Composition, manual updates) is part of the v2 composite's schema; a claim has no such field.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    compositionUpdatePolicy: Manual\n",
			claims: want{unknown: []string{"spec.crossplane"}},
		},
		"CrossplaneUnknownField": {
			reason: "spec.crossplane has a schema of its own: a field Crossplane does not define is unknown.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    bogus: 1\n",
			claims: want{unknown: []string{"spec.crossplane"}},
			v2:     want{unknown: []string{"spec.crossplane.bogus"}},
		},
		"CrossplaneBadPolicy": {
			reason: "spec.crossplane is validated, enums included.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionUpdatePolicy: Sometimes\n",
			claims: want{unknown: []string{"spec.crossplane"}},
			v2: want{errs: []string{
				`spec.crossplane.compositionUpdatePolicy: Unsupported value: "Sometimes": supported values: "Automatic", "Manual"`,
				blockedErr,
			}},
		},
		"ClaimFieldsAtTopOfSpec": {
			reason: "The claim's spec.compositionRef is not a field of the v2 composite, whose is spec.crossplane.compositionRef.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  compositionRef: {name: miniclusters.flux-framework.org}\n",
			v2:     want{unknown: []string{"spec.compositionRef"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for shape, s := range map[string]struct {
				schema *Schema
				want   want
			}{"Claims": {Claims, tc.claims}, "V2": {V2, tc.v2}} {
				obj := decode(t, withSpec(tc.spec))
				got := want{unknown: s.schema.Unknown(obj)}
				if len(got.unknown) == 0 {
					s.schema.Default(obj)
					got.errs = messages(s.schema.Validate(context.Background(), obj))
				}
				if diff := cmp.Diff(s.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("%s\n%s: -want, +got:\n%s", tc.reason, shape, diff)
				}
			}
		})
	}
}

// TestV2Definition checks a Crossplane v2 XRD (namespaced composite, no
// claim): Crossplane's fields live under spec.crossplane.
func TestV2Definition(t *testing.T) {
	def := string(must(os.ReadFile("../../compositions/definition.yaml")))
	def = strings.Replace(def, "apiVersion: apiextensions.crossplane.io/v1", "apiVersion: apiextensions.crossplane.io/v2", 1)
	def = regexp.MustCompile(`(?s)  claimNames:.*?  defaultCompositionRef:`).ReplaceAllString(def, "  defaultCompositionRef:")
	def = strings.Replace(def, "scope: LegacyCluster", "scope: Namespaced", 1)
	defs, err := derive.CRDs([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	file, err := derive.YAML(defs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"XMiniCluster"}, c.kinds); diff != "" {
		t.Errorf("kinds: -want, +got:\n%s", diff)
	}
	obj := decode(t, "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x, namespace: ns}\nspec:\n  containers: [{image: a}]\n  crossplane: {compositionRef: {name: c}, resourceRefs: [{apiVersion: v1, kind: Service, name: x}]}\n  compositionRef: {name: c}\n")
	x := c.byKind["XMiniCluster"]
	if diff := cmp.Diff([]string{"spec.compositionRef"}, prune(obj, x)); diff != "" {
		t.Errorf("unknown: -want, +got:\n%s", diff)
	}
}

// TestConcurrent runs the validators from many goroutines (go test -race).
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				obj := decode(t, withSpec("  size: 4\n  maxSize: 2\n  containers: [{image: rockylinux:9}]\n"))
				Claims.Default(obj)
				if got := len(Claims.Validate(context.Background(), obj)); got != 1 {
					t.Errorf("got %d errors", got)
				}
				_ = Claims.ValidateUpdate(context.Background(), obj, obj)
				_ = Claims.Unknown(obj)
			}
		}()
	}
	wg.Wait()
}

// TestCRDsAreDerived holds the embedded CRDs to the XRDs: each file is what
// Crossplane's generator derives from its shape's XRD today.
func TestCRDsAreDerived(t *testing.T) {
	cases := map[string]struct {
		reason     string
		definition []byte
		file       string
		embedded   []byte
	}{
		"Claims": {
			reason:     "crds/claims.yaml is derived from compositions/definition.yaml.",
			definition: compositions.Definition,
			file:       "crds/claims.yaml",
			embedded:   claimsCRDs,
		},
		"V2": {
			reason:     "crds/v2.yaml is derived from compositions/v2/definition.yaml.",
			definition: compositions.DefinitionV2,
			file:       "crds/v2.yaml",
			embedded:   v2CRDs,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			defs, err := derive.CRDs(tc.definition)
			if err != nil {
				t.Fatal(err)
			}
			want, err := derive.YAML(defs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(tc.embedded)); diff != "" {
				t.Errorf("%s\n%s is stale: run make generate\n-derived, +embedded:\n%s", tc.reason, tc.file, diff)
			}
		})
	}
}
