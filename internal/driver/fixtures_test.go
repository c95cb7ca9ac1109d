package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/function"
)

// TestExampleFixturesAreNeeded: an example with fixtures (cluster.yaml,
// input.yaml) is refused by the default policy in a namespace without
// labels, naming the policy key its fixtures answer, and composes with
// them. So a fixture is never left over, and the claim's header says
// what it needs.
func TestExampleFixturesAreNeeded(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, dir := range dirs {
		cluster, input, err := ExampleFixtures(dir)
		if err != nil {
			t.Fatal(err)
		}
		if cluster == nil && input == nil {
			continue
		}
		found++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			claim, err := os.ReadFile(filepath.Join(dir, "claim.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			bare, err := Run(context.Background(), function.New(), Options{Claim: claim})
			if err != nil {
				t.Fatal(err)
			}
			if !bare.Fatal || !strings.Contains(strings.Join(bare.Results, "\n"), "(policy.") {
				t.Errorf("without its fixtures: want a refusal naming a policy key, got %v", bare.Results)
			}
			with, err := Run(context.Background(), function.New(), Options{Claim: claim, Cluster: cluster, Input: input})
			if err != nil {
				t.Fatal(err)
			}
			if with.Fatal || len(with.Objects) == 0 {
				t.Errorf("with its fixtures: refused: %v", with.Results)
			}
			header := string(claim[:strings.Index(string(claim), "apiVersion:")])
			if !strings.Contains(header, ExampleClusterFile) && cluster != nil || !strings.Contains(header, ExampleInputFile) && input != nil {
				t.Errorf("the header comment of claim.yaml should name its fixtures (%s, %s):\n%s", ExampleClusterFile, ExampleInputFile, header)
			}
		})
	}
	if found < 7 {
		t.Errorf("found %d examples with fixtures, want at least 7", found)
	}
}

func TestExampleFixturesNone(t *testing.T) {
	cluster, input, err := ExampleFixtures("../../examples/hello-world")
	if err != nil || cluster != nil || input != nil {
		t.Errorf("hello-world: got %v, %q, %v; want no fixtures", cluster, input, err)
	}
	if _, _, err := ExampleFixtures(t.TempDir() + "/missing"); err != nil {
		t.Errorf("a directory without fixtures: %v", err)
	}
}
