// Package render_test renders every example with hack/render, that is the
// real `crossplane composition render` (the pinned Crossplane CLI and core)
// with the function running as a local process, and compares the output with
// committed goldens. Update them with `make golden` (go test -update), never
// by hand. The in-process goldens of cmd/minicluster cover the same examples
// without the tool build.
package render_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const generatedCert = "<a CURVE certificate generated for this render: checked to parse, then masked>"

// xrd is the MiniCluster XRD, so the schema's defaults apply; xrdV2 is the
// Crossplane v2 shape's.
const (
	xrd   = "../../compositions/definition.yaml"
	xrdV2 = "../../compositions/v2/definition.yaml"
)

// shapes are the two shapes and where their goldens are: the claim shape
// renders an example's xr.yaml, the v2 shape its claim.yaml.
var shapes = []struct{ name, goldens string }{
	{"claims", "testdata"},
	{"v2", filepath.Join("testdata", "v2")},
}

// toolset are the binaries make test-render builds.
type toolset struct{ crossplane, core, function string }

func tools(t *testing.T) toolset {
	t.Helper()
	o := toolset{crossplane: os.Getenv("MC_CROSSPLANE"), core: os.Getenv("MC_CROSSPLANE_CORE"), function: os.Getenv("MC_FUNCTION")}
	if o.crossplane == "" || o.core == "" || o.function == "" {
		t.Skip("MC_CROSSPLANE, MC_CROSSPLANE_CORE and MC_FUNCTION are not set: run make test-render")
	}
	return o
}

// renderArgs are the flags of hack/render but the example and the shape
// (whose XRD hack/render picks from --compositions).
func (o toolset) renderArgs() []string {
	return []string{
		"--crossplane=" + o.crossplane, "--crossplane-core=" + o.core, "--function=" + o.function,
		"--compositions=../../compositions",
	}
}

// buildRender builds hack/render, the one render driver.
func buildRender(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "render")
	cmd := exec.Command("go", "build", "-o", bin, "../../hack/render")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build hack/render: %v\n%s", err, out)
	}
	return bin
}

func examples(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../examples/*/xr.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// TestRenderExamples renders every example in both shapes: testdata/ holds
// the claim shape's goldens (the example's XMiniCluster, xr.yaml),
// testdata/v2/ the v2 shape's (its MiniCluster, claim.yaml, as the
// namespaced composite). TestShapesComposeTheSame compares the two. Each
// example renders in the platform its fixtures describe: hack/render
// passes its cluster.yaml as --required-resources and makes the
// Composition's step input its input.yaml (driver.ExampleFixtures).
func TestRenderExamples(t *testing.T) {
	args := tools(t).renderArgs()
	bin := buildRender(t)
	for _, shape := range shapes {
		for _, dir := range examples(t) {
			t.Run(shape.name+"/"+filepath.Base(dir), func(t *testing.T) {
				renderExample(t, bin, append(args, "--example="+dir, "--shape="+shape.name), filepath.Join(shape.goldens, filepath.Base(dir)+".golden.yaml"))
			})
		}
	}
}

// renderExample runs hack/render with args and compares its output with
// golden.
func renderExample(t *testing.T, bin string, args []string, golden string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	got := normalize(t, out)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("no golden %s: run make golden", golden)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("crossplane composition render output differs from %s (make golden updates it):\n%s", golden, diff)
	}
}

// normalize masks the one thing that differs between renders: a newly
// generated CURVE key, after checking it is a certificate Flux accepts.
func normalize(t *testing.T, out []byte) []byte {
	t.Helper()
	objs, err := driver.ParseObjects(out)
	if err != nil {
		t.Fatalf("render output is not YAML: %v", err)
	}
	// The render engine lists Result objects in no fixed order; sort them
	// (stably, after the resources) so the golden compares what matters.
	sort.SliceStable(objs, func(i, j int) bool {
		ri, rj := objs[i].GetKind() == "Result", objs[j].GetKind() == "Result"
		if ri != rj {
			return !ri
		}
		if ri {
			return fmt.Sprint(objs[i].Object["message"]) < fmt.Sprint(objs[j].Object["message"])
		}
		return false
	})
	var b strings.Builder
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetAnnotations()["crossplane.io/composition-resource-name"] == "curve-cert" {
			maskCert(t, o)
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String())
}

func maskCert(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	raw, err := base64.StdEncoding.DecodeString(data["curve.cert"])
	if err != nil {
		t.Fatalf("curve.cert is not base64: %v", err)
	}
	if _, err := curve.Parse(raw); err != nil {
		t.Fatalf("rendered curve.cert is not a certificate Flux accepts: %v\n%s", err, raw)
	}
	if os.Getenv("MC_KEEP_CERT") == "" {
		_ = unstructured.SetNestedField(o.Object, generatedCert, "data", "curve.cert")
	}
}

// TestShapesComposeTheSame reads the goldens of both shapes (no tools
// needed) and wants, for every example, the same composed objects, results
// and composite status. What differs is Crossplane's, not the function's:
// the controller of each object (the claim's XMiniCluster or the
// MiniCluster itself), the claim labels Crossplane copies from a claim's
// composite, where a composite keeps its resource references
// (spec.resourceRefs, naming namespaces, or spec.crossplane.resourceRefs, in
// its own) and the claim's condition types a claim's composite lists.
func TestShapesComposeTheSame(t *testing.T) {
	for _, dir := range examples(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var got [2][]*unstructured.Unstructured
			for i, shape := range shapes {
				b, err := os.ReadFile(filepath.Join(shape.goldens, name+".golden.yaml"))
				if err != nil {
					t.Fatalf("no golden of the %s shape: run make golden", shape.name)
				}
				objs, err := driver.ParseObjects(b)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = shapeNeutral(t, shape.name, objs)
			}
			if diff := cmp.Diff(got[0], got[1]); diff != "" {
				t.Errorf("the shapes compose %s differently (-claims, +v2):\n%s", name, diff)
			}
		})
	}
}

// shapeNeutral removes from a render of the given shape what Crossplane
// does differently in it, after checking it is what that shape must do.
func shapeNeutral(t *testing.T, shape string, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	if len(objs) == 0 {
		t.Fatal("empty render")
	}
	xr := objs[0]
	wantKind, refs := "XMiniCluster", []string{"spec", "resourceRefs"}
	if shape == "v2" {
		wantKind, refs = "MiniCluster", []string{"spec", "crossplane", "resourceRefs"}
	}
	if xr.GetKind() != wantKind {
		t.Fatalf("%s shape: the render starts with a %s, want the composite %s", shape, xr.GetKind(), wantKind)
	}
	status, _, _ := unstructured.NestedMap(xr.Object, "status")
	resourceRefs, _, _ := unstructured.NestedSlice(xr.Object, refs...)
	if len(resourceRefs) == 0 {
		t.Errorf("%s shape: the composite has no %s", shape, strings.Join(refs, "."))
	}
	if shape == "claims" {
		for _, r := range resourceRefs {
			if m, _ := r.(map[string]any); m["namespace"] == nil {
				t.Errorf("claims shape: resource reference %v names no namespace", m)
			} else {
				delete(m, "namespace")
			}
		}
		delete(status, "claimConditionTypes")
	}
	// Their order is Crossplane's, which sorts on different keys in the
	// two shapes.
	sort.Slice(resourceRefs, func(i, j int) bool { return fmt.Sprint(resourceRefs[i]) < fmt.Sprint(resourceRefs[j]) })
	out := []*unstructured.Unstructured{{Object: map[string]any{"status": status, "resourceRefs": resourceRefs}}}
	for _, o := range objs[1:] {
		o = o.DeepCopy()
		if o.GetKind() != "Result" {
			owners := o.GetOwnerReferences()
			if len(owners) != 1 || owners[0].Kind != wantKind || owners[0].Name != xr.GetName() || owners[0].Controller == nil || !*owners[0].Controller {
				t.Errorf("%s shape: %s %s is owned by %v, want its composite %s %s as controller", shape, o.GetKind(), o.GetName(), owners, wantKind, xr.GetName())
			}
			o.SetOwnerReferences(nil)
			labels := o.GetLabels()
			_, claimName := labels["crossplane.io/claim-name"]
			_, claimNamespace := labels["crossplane.io/claim-namespace"]
			if (shape == "v2") == (claimName || claimNamespace) {
				t.Errorf("%s shape: %s %s has labels %v: claim labels belong to the claim shape", shape, o.GetKind(), o.GetName(), labels)
			}
			delete(labels, "crossplane.io/claim-name")
			delete(labels, "crossplane.io/claim-namespace")
			o.SetLabels(labels)
		}
		out = append(out, o)
	}
	return out
}
