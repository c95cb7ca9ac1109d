package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// controllerGen finds controller-gen: $MC_CONTROLLER_GEN (set by make), else
// the tool cache. Without it the generated files cannot be checked.
func controllerGen(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MC_CONTROLLER_GEN"); p != "" {
		return p
	}
	out, err := exec.Command("../tools.sh", "path", "controller-gen").Output()
	if err != nil {
		t.Skip("controller-gen is not installed (make test installs it): cannot check generated files")
	}
	return string(bytes.TrimSpace(out))
}

// TestGeneratedFilesAreCurrent regenerates the XRDs of both shapes, the input
// CRD and the deepcopy code from the Go types, and the v2 shape's
// Composition from the claim shape's, and fails if the committed files
// differ: none of them is edited by hand.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	cg := controllerGen(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	gen := func(args ...string) {
		t.Helper()
		cmd := exec.Command(cg, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, out)
		}
	}

	gen("crd", "paths=./apis/minicluster/...", "output:crd:dir="+filepath.Join(tmp, "crd"))
	xrdOut, xrdV2Out := filepath.Join(tmp, "definition.yaml"), filepath.Join(tmp, "definition-v2.yaml")
	if err := run(filepath.Join(tmp, "crd", "flux-framework.org_miniclusters.yaml"), xrdOut, xrdV2Out); err != nil {
		t.Fatal(err)
	}
	same(t, filepath.Join(root, "compositions/definition.yaml"), xrdOut)
	same(t, filepath.Join(root, "compositions/v2/definition.yaml"), xrdV2Out)
	compositionV2Out := filepath.Join(tmp, "composition-v2.yaml")
	if err := v2CompositionFile(filepath.Join(root, "compositions/composition.yaml"), compositionV2Out); err != nil {
		t.Fatal(err)
	}
	same(t, filepath.Join(root, "compositions/v2/composition.yaml"), compositionV2Out)

	gen("crd", "paths=./apis/input/...", "output:crd:dir="+filepath.Join(tmp, "input"))
	same(t, filepath.Join(root, "package/input/minicluster.fn.flux-framework.org_inputs.yaml"), filepath.Join(tmp, "input/minicluster.fn.flux-framework.org_inputs.yaml"))

	gen("crd", "paths=./apis/bursting/...", "output:crd:dir="+filepath.Join(tmp, "provider"))
	fresh, err := filepath.Glob(filepath.Join(tmp, "provider", "*.yaml"))
	if err != nil || len(fresh) == 0 {
		t.Fatalf("no provider CRDs generated: %v", err)
	}
	committed, _ := filepath.Glob(filepath.Join(root, "package/provider/crds", "*.yaml"))
	if len(committed) != len(fresh) {
		t.Errorf("package/provider/crds has %d CRDs, the types generate %d: run make generate", len(committed), len(fresh))
	}
	for _, f := range fresh {
		if filepath.Base(f) == burstCRD {
			if err := trimTemplateFile(f); err != nil {
				t.Fatal(err)
			}
		}
		same(t, filepath.Join(root, "package/provider/crds", filepath.Base(f)), f)
	}

	for _, pkg := range []string{"apis/minicluster/v1alpha2", "apis/input/v1beta1", "apis/bursting/v1alpha1"} {
		dir := filepath.Join(tmp, "object", filepath.Base(pkg))
		gen("object", "paths=./"+pkg, "output:object:dir="+dir)
		same(t, filepath.Join(root, pkg, "zz_generated.deepcopy.go"), filepath.Join(dir, "zz_generated.deepcopy.go"))
	}
}

func same(t *testing.T, committed, fresh string) {
	t.Helper()
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%s is missing: run make generate", committed)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale: run make generate\n-generated, +committed:\n%s", committed, diff)
	}
}

const burstCRD = "bursting.flux-framework.org_bursts.yaml"

// TestBurstTemplateHasNoTransitionRules checks the committed Burst CRD: the
// MiniCluster spec it embeds keeps its validation but none of the rules
// that read oldSelf, which would refuse every update of a Burst the burst
// controller makes (the e2e TestBurst found this), and TrimTemplate leaves
// it unchanged.
func TestBurstTemplateHasNoTransitionRules(t *testing.T) {
	path := filepath.Join("..", "..", "package", "provider", "crds", burstCRD)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, removed, err := TrimTemplate(b)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 0 || !bytes.Equal(out, b) {
		t.Errorf("%s has %d transition rules under spec.forProvider.template: run make generate", path, removed)
	}
	if !bytes.Contains(b, []byte("spec.maxSize must be at least spec.size")) {
		t.Errorf("%s lost the template's other rules", path)
	}
}

func TestTrimTemplate(t *testing.T) {
	in := []byte(`---
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              forProvider:
                properties:
                  template:
                    properties:
                      containers:
                        items:
                          x-kubernetes-validations:
                          - rule: self.a == 1
                        type: array
                        x-kubernetes-validations:
                        - rule: self == oldSelf
                      size:
                        type: integer
                    x-kubernetes-validations:
                    - rule: has(self.network) == has(oldSelf.network)
                    - rule: self.size > 0
                x-kubernetes-validations:
                - rule: self == oldSelf
`)
	want := `---
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              forProvider:
                properties:
                  template:
                    properties:
                      containers:
                        items:
                          x-kubernetes-validations:
                          - rule: self.a == 1
                        type: array
                      size:
                        type: integer
                    x-kubernetes-validations:
                    - rule: self.size > 0
                x-kubernetes-validations:
                - rule: self == oldSelf
`
	out, removed, err := TrimTemplate(in)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d rules, want 2", removed)
	}
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
