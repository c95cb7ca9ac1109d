package harness

import (
	"path/filepath"
	"testing"
)

func TestRepoRootHasCompositions(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"compositions/rbac.yaml", "compositions/definition.yaml", "compositions/composition.yaml", "examples/hello-world/claim.yaml"} {
		if _, err := ReadObjects(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
