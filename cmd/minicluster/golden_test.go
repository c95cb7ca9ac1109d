package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// update rewrites the goldens: go test ./cmd/minicluster/ -run TestGoldens -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the current code")

// fixedEntropy makes the CURVE keys, and so the goldens, the same on every run.
type fixedEntropy struct{}

func (fixedEntropy) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

// TestGoldens renders every example in-process, as minicluster render
// does, in the platform its fixtures describe (cluster.yaml for --cluster,
// input.yaml for --input: driver.ExampleFixtures), and compares the objects and the function's results with
// testdata/<example>.golden.yaml. It needs no tool build, so a change to
// what the function composes shows here in seconds; test/render compares
// the same examples through crossplane composition render. Both shapes
// compose the same objects with the same results (what Crossplane adds to
// them, owner references and labels, is not the function's), so the
// v2 shape's render (--shape v2) must match the same golden.
func TestGoldens(t *testing.T) {
	claims, err := filepath.Glob("../../examples/*/claim.yaml")
	if err != nil || len(claims) == 0 {
		t.Fatalf("no example claims: %v", err)
	}
	for _, file := range claims {
		name := filepath.Base(filepath.Dir(file))
		t.Run(name, func(t *testing.T) {
			claim, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// What the platform provides for the example, as the
			// command's flags give it.
			cluster, input, err := driver.ExampleFixtures(filepath.Dir(file))
			if err != nil {
				t.Fatal(err)
			}
			command := "minicluster render -f examples/" + name + "/claim.yaml"
			if cluster != nil {
				command += " --cluster examples/" + name + "/" + driver.ExampleClusterFile
			}
			if input != nil {
				command += " --input examples/" + name + "/" + driver.ExampleInputFile
			}
			render := func(shape driver.Shape) (string, *driver.Output) {
				out, err := driver.Run(context.Background(), function.New(function.WithRandom(fixedEntropy{})), driver.Options{Claim: claim, Shape: shape, Cluster: cluster, Input: input})
				if err != nil {
					t.Fatalf("driver.Run (shape %s): %v", shape, err)
				}
				got := "# " + command + " (results, then objects)\n"
				for _, r := range out.Results {
					got += "# " + strings.ReplaceAll(r, "\n", "\n# ") + "\n"
				}
				return got + string(out.YAML), out
			}
			got, claims := render(driver.ShapeClaims)
			_, v2 := render(driver.ShapeV2)
			// The shapes compose the same objects; only their controller,
			// the composite, differs.
			if diff := cmp.Diff(claims.Results, v2.Results); diff != "" {
				t.Errorf("examples/%s reports differently in the v2 shape (-claims, +v2):\n%s", name, diff)
			}
			if diff := cmp.Diff(withoutOwners(claims.Objects), withoutOwners(v2.Objects)); diff != "" {
				t.Errorf("examples/%s composes differently in the v2 shape (-claims, +v2):\n%s", name, diff)
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/minicluster/ -run TestGoldens -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("render of examples/%s differs from %s (-want, +got; -update rewrites it):\n%s", name, golden, diff)
			}
		})
	}
}

// TestExamplesComposite keeps `minicluster xr` what it was for every
// example: the committed xr.yaml.
func TestExamplesComposite(t *testing.T) {
	claims, err := filepath.Glob("../../examples/*/claim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range claims {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := compositeYAML(b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(filepath.Dir(f), "xr.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("-xr.yaml, +minicluster xr:\n%s", diff)
			}
		})
	}
}

// withoutOwners are copies of objs without owner references.
func withoutOwners(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		c := o.DeepCopy()
		c.SetOwnerReferences(nil)
		out = append(out, c)
	}
	return out
}
