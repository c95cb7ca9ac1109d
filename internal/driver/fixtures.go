package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Files of an example directory besides claim.yaml and xr.yaml: what the
// platform provides for it, beyond what the default policy and a namespace
// without labels give.
const (
	// ExampleClusterFile holds the objects of the cluster the example
	// needs (a labelled Namespace, ServiceAccount or Secrets), as YAML an
	// admin applies with kubectl.
	ExampleClusterFile = "cluster.yaml"
	// ExampleInputFile holds the function input (kind Input) of a
	// Composition whose policy allows the example.
	ExampleInputFile = "input.yaml"
)

// ExampleFixtures reads what the platform provides for the example in
// exampleDir: the objects of its cluster.yaml, and its input.yaml as
// bytes. Either is nil when the file does not exist: the example needs
// nothing beyond a namespace without labels, or the default policy. Every
// example-driven test, the CLI's goldens and the render goldens read the
// fixtures through it, so what they compose is what the docs tell a
// platform to provide.
func ExampleFixtures(exampleDir string) (cluster []*unstructured.Unstructured, input []byte, err error) {
	b, err := os.ReadFile(filepath.Join(exampleDir, ExampleClusterFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		if cluster, err = ParseObjects(b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(exampleDir, ExampleClusterFile), err)
		}
		for _, o := range cluster {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				return nil, nil, fmt.Errorf("%s: every object needs apiVersion, kind and metadata.name", filepath.Join(exampleDir, ExampleClusterFile))
			}
		}
	}
	input, err = os.ReadFile(filepath.Join(exampleDir, ExampleInputFile))
	if errors.Is(err, fs.ErrNotExist) {
		return cluster, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return cluster, input, nil
}
