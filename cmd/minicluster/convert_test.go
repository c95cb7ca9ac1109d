package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/convert"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// convertDir holds v1alpha1 manifests taken from the Flux Operator's
// v1alpha1 docs (<case>.v1alpha1.yaml) and what minicluster convert makes
// of them (<case>.golden.yaml: the stderr lines as comments, then stdout).
// go test ./cmd/minicluster/ -run TestConvertGoldens -update rewrites the
// goldens.
const convertDir = "testdata/convert"

// runConvert is minicluster convert -f file: stdout, stderr and the error.
func runConvert(t *testing.T, stdin string, files ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := convertFiles(files, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestConvertGoldens(t *testing.T) {
	cases := map[string]struct {
		reason string
		file   string
	}{
		"Basic":   {"Size, tasks, deadline, quiet logging (strict defaulted as v1alpha1 did) and a runner with a command.", "basic"},
		"Elastic": {"maxSize, interactive, jobLabels, every logging switch, archive.", "elastic"},
		"Pod":     {"The pod section (resources dropped: pod overhead), container resources, pull secret, environment, ports, lifeCycle, commands, a services Pod, and a command naming the v1alpha1 headless Service.", "pod"},
		"Batch":   {"batch with logs, and batchRaw in a second document of the stream.", "batch"},
		"Legacy":  {"cores, diagnostics, fluxUser, runFluxAsRoot, preCommand (to commands.pre), container-level fluxOptionFlags and fluxLogLevel; a sidecar with ports.", "legacy"},
		"Volumes": {"Top-level volumes: hostpath to hostPath, CSI to the claim the user makes (a line per PersistentVolume field); existingVolumes; cleanup.", "volumes"},
		"Restful": {"No command: the Flux RESTful API pattern; fluxRestful and users become lines, no secret reaches the claim; a ConfigMap passes through unchanged.", "restful"},
		"Flux":    {"The flux section: wrap, connectTimeout, logLevel, curveCertSecret, scheduler, bursting; installRoot and mungeSecret dropped; a warning of the function.", "flux"},
	}
	seen := map[string]bool{}
	for name, tc := range cases {
		seen[tc.file] = true
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(convertDir, tc.file+".v1alpha1.yaml")
			stdout, stderr, err := runConvert(t, "", in)
			if err != nil {
				t.Fatalf("%s\nconvert: %v", tc.reason, err)
			}
			got := "# minicluster convert -f " + in + "\n# stderr:\n"
			for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				got += "#   " + l + "\n"
			}
			got += stdout
			golden := filepath.Join(convertDir, tc.file+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/minicluster/ -run TestConvertGoldens -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s\nconvert of %s differs from %s (-want, +got; -update rewrites it):\n%s", tc.reason, in, golden, diff)
			}
		})
	}
	inputs, err := filepath.Glob(filepath.Join(convertDir, "*.v1alpha1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range inputs {
		if c := strings.TrimSuffix(filepath.Base(f), ".v1alpha1.yaml"); !seen[c] {
			t.Errorf("%s has no case in TestConvertGoldens", f)
		}
	}
}

// TestConvertedRender renders every converted claim of the goldens with
// the function in-process, as minicluster render does, under a policy
// that allows what the Flux Operator allowed (as convert checks them):
// none is refused.
func TestConvertedRender(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(convertDir, "*.golden.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	n := 0
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := driver.ParseObjects(b)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		for _, o := range objs {
			if o.GetKind() != "MiniCluster" {
				continue
			}
			if o.GetAPIVersion() != "flux-framework.org/v1alpha2" {
				t.Errorf("%s: %s %q is %s", g, o.GetKind(), o.GetName(), o.GetAPIVersion())
				continue
			}
			n++
			claim, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(filepath.Base(g)+"/"+o.GetName(), func(t *testing.T) {
				out, err := driver.Run(context.Background(), function.New(function.WithRandom(fixedEntropy{})), driver.Options{Claim: claim, Input: permissiveInput})
				if err != nil {
					t.Fatal(err)
				}
				if out.Fatal {
					t.Errorf("refused:\n%s", strings.Join(out.Results, "\n"))
				}
			})
		}
	}
	if n < 8 {
		t.Errorf("only %d converted MiniClusters in the goldens", n)
	}
}

// TestConvertRestfulExample keeps examples/restful-api what convert makes
// of a v1alpha1 MiniCluster that served the Flux RESTful API.
func TestConvertRestfulExample(t *testing.T) {
	v1alpha1 := `apiVersion: flux-framework.org/v1alpha1
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: default
spec:
  size: 2
  containers:
    - image: ghcr.io/flux-framework/flux-restful-api:latest
`
	stdout, _, err := runConvert(t, v1alpha1, "-")
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := yaml.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../examples/restful-api/claim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("examples/restful-api/claim.yaml (-) and the conversion of a v1alpha1 MiniCluster without a command (+) differ:\n%s", diff)
	}
}

func TestConvertErrors(t *testing.T) {
	mc := func(spec string) string {
		return "apiVersion: flux-framework.org/v1alpha1\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n  namespace: default\nspec:\n" + spec
	}
	cases := map[string]struct {
		reason string
		stdin  string
		want   string
	}{
		"UnknownField": {
			reason: "A field v1alpha1 does not have is an error, not dropped.",
			stdin:  mc("  size: 2\n  sizee: 3\n  containers:\n    - image: x\n      comand: echo\n"),
			want:   `<stdin>: document 1: MiniCluster "default/flux-sample": unknown v1alpha1 fields "spec.containers[0].comand", "spec.sizee": not a field of the Flux Operator's v1alpha1 MiniCluster (check the spelling, or remove them)`,
		},
		"WrongType": {
			reason: "A value of the wrong type names the field.",
			stdin:  mc("  size: four\n  containers: [{image: x}]\n"),
			want:   `<stdin>: document 1: MiniCluster "default/flux-sample": cannot decode the v1alpha1 MiniCluster: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field v1alpha1Spec.spec.size of type int32`,
		},
		"UndefinedVolume": {
			reason: "A container volume must name a top-level volume, as v1alpha1 checked.",
			stdin:  mc("  containers:\n    - image: x\n      command: ls\n      volumes:\n        data: {path: /data}\n"),
			want:   `<stdin>: document 1: MiniCluster "default/flux-sample": spec.containers[0].volumes.data: no volume "data" in spec.volumes: define it there, or mount an existing volume with existingVolumes`,
		},
		"RefusedBySchema": {
			reason: "A claim the API server would refuse is not written: the message names the field.",
			stdin:  mc("  size: 4\n  maxSize: 2\n  containers: [{image: x, command: ls}]\n"),
			want:   `<stdin>: document 1: MiniCluster "default/flux-sample": the v1alpha2 claim would be refused, so nothing is written (fix the v1alpha1 field of the same path and convert again): The MiniCluster "flux-sample" is invalid: spec.maxSize: Invalid value: spec.maxSize must be at least spec.size: lower spec.size, or give a new MiniCluster a larger spec.maxSize (it cannot change once the MiniCluster exists: delete and re-create it to grow beyond it)`,
		},
		"RefusedByFunction": {
			reason: "A claim the function would refuse is not written either.",
			stdin:  mc("  containers: [{image: x, command: ls, environment: {1FOO: x}}]\n"),
			want:   "",
		},
		"NoName": {
			reason: "A MiniCluster needs a name.",
			stdin:  "apiVersion: flux-framework.org/v1alpha1\nkind: MiniCluster\nspec:\n  containers: [{image: x}]\n",
			want:   `<stdin>: document 1: MiniCluster "": metadata.name is required: it names the MiniCluster and every object made for it`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stdout, _, err := runConvert(t, tc.stdin, "-")
			if err == nil {
				t.Fatalf("%s\nno error; stdout:\n%s", tc.reason, stdout)
			}
			if stdout != "" {
				t.Errorf("%s\nstdout is not empty:\n%s", tc.reason, stdout)
			}
			if tc.want == "" {
				if !strings.Contains(err.Error(), "the function refuses it: ") {
					t.Errorf("%s\ngot %v", tc.reason, err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestConvertPassThrough writes a stream without v1alpha1 MiniClusters out
// unchanged, and says so.
func TestConvertPassThrough(t *testing.T) {
	in := "# a v1alpha2 claim stays as it is\napiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: x\nspec:\n  containers: [{image: x}]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n"
	stdout, stderr, err := runConvert(t, in, "-")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, stdout); diff != "" {
		t.Errorf("-in, +out:\n%s", diff)
	}
	if want := "<stdin>: no " + convert.V1alpha1 + " MiniCluster: written out unchanged\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
