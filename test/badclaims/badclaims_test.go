package badclaims

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/corpus"
)

// MinCases is the least number of bad claims the table must hold.
const MinCases = 100

func TestCasesTable(t *testing.T) {
	cases := Cases()
	if len(cases) < MinCases {
		t.Errorf("Cases() has %d claims, want at least %d", len(cases), MinCases)
	}
	names, claimNames := map[string]bool{}, map[string]string{}
	layers := map[string]int{}
	for _, c := range cases {
		if c.Name == "" || c.Reason == "" || c.Want == "" {
			t.Errorf("case %q: Name, Reason and Want are required", c.Name)
		}
		if names[c.Name] {
			t.Errorf("case name %q is not unique", c.Name)
		}
		names[c.Name] = true
		if prev, ok := claimNames[c.ClaimName()]; ok {
			t.Errorf("cases %s and %s both name their claim %q: the e2e test creates them in one namespace", prev, c.Name, c.ClaimName())
		}
		claimNames[c.ClaimName()] = c.Name
		if c.Layer != LayerSchema && c.Layer != LayerFunction {
			t.Errorf("case %s: Layer %q, want %q or %q", c.Name, c.Layer, LayerSchema, LayerFunction)
		}
		layers[c.Layer]++
		if c.Claim["apiVersion"] != "flux-framework.org/v1alpha2" || c.Claim["kind"] != "MiniCluster" {
			t.Errorf("case %s: not a MiniCluster claim: %v %v", c.Name, c.Claim["apiVersion"], c.Claim["kind"])
		}
		if md, _ := c.Claim["metadata"].(map[string]any); md["namespace"] == nil || md["name"] == nil {
			t.Errorf("case %s: the claim needs metadata.name and metadata.namespace", c.Name)
		}
		if !strings.Contains(c.Want, "spec.") && !strings.Contains(c.Want, "metadata.") && !strings.HasPrefix(c.Want, "spec:") {
			t.Errorf("case %s: Want %q names no field path", c.Name, c.Want)
		}
		if len(corpus.FieldPaths(c.Want)) == 0 {
			t.Errorf("case %s: Want %q has no field path", c.Name, c.Want)
		}
	}
	t.Logf("%d bad claims: %d refused by the schema, %d by the function", len(cases), layers[LayerSchema], layers[LayerFunction])
}

func TestMatches(t *testing.T) {
	cases := map[string]struct {
		msg, want string
		match     bool
	}{
		"Plain":          {msg: "a: Invalid value: 1: x", want: "Invalid value: 1", match: true},
		"Missing":        {msg: "a: Invalid value: 1: x", want: "Invalid value: 2", match: false},
		"EmptyGap":       {msg: "a: Invalid value: x", want: "a: Invalid value: …x", match: true},
		"ObjectGap":      {msg: `a: Invalid value: "object": x`, want: "a: Invalid value: …x", match: true},
		"GapTooLong":     {msg: "a: Invalid value: " + strings.Repeat("v", MaxGap+1) + "x", want: "a: Invalid value: …x", match: false},
		"SecondOccurs":   {msg: "a: b; a: " + `"object": ` + "c", want: "a: …c", match: true},
		"OrderMatters":   {msg: "c a: ", want: "a: …c", match: false},
		"NoPartialMatch": {msg: "spec.size: Invalid value", want: "spec.size: Invalid value: …1", match: false},
	}
	for name, tc := range cases {
		if got := matches(tc.msg, tc.want); got != tc.match {
			t.Errorf("%s: matches(%q, %q) = %v, want %v", name, tc.msg, tc.want, got, tc.match)
		}
	}
}

// TestBaseIsHelloWorld: every case starts from the example, unchanged.
func TestBaseIsHelloWorld(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), HelloWorld))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got := base(); !reflect.DeepEqual(corpus.Normalize(want), got) {
		t.Errorf("base() = %v, want %s as it is: %v", got, HelloWorld, want)
	}
	// Cases get their own copies.
	a, c := Cases(), Cases()
	setPath(a[0].Claim, "spec.size", int64(99))
	if reflect.DeepEqual(a[0].Claim, c[0].Claim) {
		t.Error("two calls of Cases() share claims")
	}
}

// TestBadClaimsCLI: the CLI refuses every bad claim with its message, which
// names a field path of the claim and repeats no secret.
func TestBadClaimsCLI(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out, err := driver.Run(context.Background(), function.New(), driver.Options{Claim: c.JSON()})
			if err != nil {
				t.Fatalf("%s\ndriver.Run: %v", c.Reason, err)
			}
			msg := FatalMessage(out)
			if !out.Fatal || msg == "" {
				t.Fatalf("%s\nthe CLI composed the claim (%d objects), want it refused with %q\nresults: %s", c.Reason, len(out.Objects), c.Want, short(strings.Join(out.Results, "\n")))
			}
			if !c.Matches(msg) {
				t.Errorf("%s\nFatal message does not contain the expected one\n want: %s\n  got: %s", c.Reason, c.Want, short(msg))
			}
			if _, ok := corpus.PresentPath(c.Claim, msg); !ok {
				t.Errorf("%s\nthe message names no field path of the claim (paths named: %q): %s", c.Reason, corpus.FieldPaths(msg), short(msg))
			}
			for _, r := range out.Results {
				if piece := SecretPiece(r, c.Secret); piece != "" {
					t.Errorf("%s\nthe message repeats part of the certificate's key text (%q): %s", c.Reason, piece, short(r))
				}
			}
		})
	}
}

// short keeps a message readable in a test log.
func short(s string) string {
	const max = 2000
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// The split of the table between the layers, pinned: a rule that moves
// from the function's checks into the XRD's schema moves its cases, and
// this count with them, on purpose.
const (
	wantSchemaCases   = 173
	wantFunctionCases = 155
)

// TestLayers: what the API server does on create (driver.Check: strict
// decoding, the XRD's schema and CEL rules, metadata) refuses every
// schema-layer claim and accepts every function-layer one, so each rule is
// stated in one place and the table says which.
func TestLayers(t *testing.T) {
	layers := map[string]int{}
	for _, c := range Cases() {
		layers[c.Layer]++
		t.Run(c.Name, func(t *testing.T) {
			err := driver.Check(context.Background(), &unstructured.Unstructured{Object: c.Claim}, driver.ShapeClaims)
			switch {
			case c.Layer == LayerSchema && err == nil:
				t.Errorf("%s\nthe API server would accept the claim, want it refused with %q", c.Reason, c.Want)
			case c.Layer == LayerFunction && err != nil:
				t.Errorf("%s\nthe API server would refuse the claim, so the case belongs to the schema layer (with its message): %v", c.Reason, err)
			}
		})
	}
	if layers[LayerSchema] != wantSchemaCases || layers[LayerFunction] != wantFunctionCases {
		t.Errorf("the table has %d schema-layer and %d function-layer claims, want %d and %d: update the pinned split with the rules you moved",
			layers[LayerSchema], layers[LayerFunction], wantSchemaCases, wantFunctionCases)
	}
}
