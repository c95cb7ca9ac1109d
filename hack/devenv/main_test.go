package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestNodeHint runs the sed of the hint `make dev-up` prints on the example
// it names, as a user pastes it, and wants every image pointed at the
// node's application image and nothing else changed: a hint that looks for
// an image the example does not name would apply it unchanged, and its pods
// could not pull. The real hello-world is one case; the others are
// examples as they may become.
func TestNodeHint(t *testing.T) {
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(filepath.Join(repo, helloWorld))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason  string
		example string
	}{
		"TheRealExample": {
			reason:  "The hint must point examples/hello-world at the node's image, whatever image it names today.",
			example: string(real),
		},
		"RegistryImage": {
			reason: "The dots of a registry are no wildcards, and a longer image that shares a prefix is still replaced whole.",
			example: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
  size: 4
  containers:
    - image: ghcr.io/rse-ops/lammps-matrix:tag-noble
      command: lmp
`,
		},
		"TwoImages": {
			reason: "Every image of the example, runner and service, goes to the node's.",
			example: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
  size: 2
  containers:
    - image: rockylinux:9
      command: echo hello world
  services:
    - image: ubuntu:noble
      name: sidecar
      command: sleep infinity
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(helloWorld)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, helloWorld), []byte(tc.example), 0o600); err != nil {
				t.Fatal(err)
			}
			hint, err := nodeHint(root)
			if err != nil {
				t.Fatalf("%s\nnodeHint: %v", tc.reason, err)
			}
			sed, ok := strings.CutSuffix(hint, " | kubectl apply -f -")
			if !ok {
				t.Fatalf("%s\nthe hint %q does not pipe into kubectl apply -f -", tc.reason, hint)
			}
			cmd := exec.Command("bash", "-c", sed)
			cmd.Dir = root
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s\n%s: %v: %s", tc.reason, sed, err, stderr.String())
			}
			got, want := map[string]any{}, map[string]any{}
			if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%s\nthe hint's output: %v\n%s", tc.reason, err, out.String())
			}
			if err := yaml.Unmarshal([]byte(tc.example), &want); err != nil {
				t.Fatal(err)
			}
			spec, _ := want["spec"].(map[string]any)
			for _, key := range []string{"containers", "services"} {
				cs, _ := spec[key].([]any)
				for _, c := range cs {
					c.(map[string]any)["image"] = harness.AppImageRef
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n%s\n(-want, +what the hint applies):\n%s", tc.reason, hint, diff)
			}
		})
	}
}

// TestNodeHintDocumented wants docs/development.md to show the hint `make
// dev-up` prints, so the page and the command say the same.
func TestNodeHintDocumented(t *testing.T) {
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	hint, err := nodeHint(repo)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+hint+"\n") {
		t.Errorf("docs/development.md does not show the hint make dev-up prints:\n%s", hint)
	}
}
