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

// xrd is the MiniCluster XRD, so the schema's defaults apply.
const xrd = "../../compositions/definition.yaml"

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

// renderArgs are the flags of hack/render but the example.
func (o toolset) renderArgs() []string {
	return []string{
		"--crossplane=" + o.crossplane, "--crossplane-core=" + o.core, "--function=" + o.function,
		"--xrd=" + xrd, "--compositions=../../compositions",
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

func TestRenderExamples(t *testing.T) {
	args := tools(t).renderArgs()
	bin := buildRender(t)
	for _, dir := range examples(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, append(args, "--example="+dir)...)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			got := normalize(t, out)
			golden := filepath.Join("testdata", filepath.Base(dir)+".golden.yaml")
			if *update {
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
		})
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
