package render_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateExamples runs `crossplane resource validate` offline against
// the generated XRD of each shape: every example claim passes (in the v2
// shape, as the namespaced composite it is there), and every claim under
// testdata/invalid fails with the message the schema or a CEL rule gives.
func TestValidateExamples(t *testing.T) {
	for name, def := range map[string]string{"claims": xrd, "v2": xrdV2} {
		t.Run(name, func(t *testing.T) { validateExamples(t, def) })
	}
}

func validateExamples(t *testing.T, xrd string) {
	o := tools(t)

	claims := t.TempDir()
	for _, dir := range examples(t) {
		b, err := os.ReadFile(filepath.Join(dir, "claim.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(claims, filepath.Base(dir)+".yaml"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(o.crossplane, "resource", "validate", xrd, claims, "--crossplane-image=", "--error-on-missing-schemas").CombinedOutput()
	if err != nil {
		t.Errorf("example claims do not validate against the XRD: %v\n%s", err, out)
	}

	cases := map[string]string{
		"maxsize-below-size.yaml":    "spec.maxSize must be at least spec.size",
		"size-zero.yaml":             "spec.size in body should be greater than or equal to 1",
		"two-runners.yaml":           "exactly one container with runFlux: true",
		"launcher-and-batch.yaml":    "may set launcher or batch, not both",
		"command-and-script.yaml":    "may set command or commands.script, not both",
		"uppercase-volume.yaml":      "volume names must be lowercase DNS labels",
		"hostlist-and-clusters.yaml": "set either hostlist or clusters, not both",
		"minsize-above-size.yaml":    "spec.minSize must not exceed spec.size",
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			out, _ := exec.Command(o.crossplane, "resource", "validate", xrd, filepath.Join("testdata/invalid", file), "--crossplane-image=").CombinedOutput()
			if !strings.Contains(string(out), "1 failure cases") || !strings.Contains(string(out), want) {
				t.Errorf("%s: want a validation failure saying %q, got:\n%s", file, want, out)
			}
		})
	}
}
