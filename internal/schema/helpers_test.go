package schema

import (
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// decode reads YAML as kubectl and the API server would: YAML to JSON, then
// JSON with integers as int64.
func decode(t testing.TB, y string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const helloWorld = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: default
spec:
  size: 4
  logging:
    quiet: true
  containers:
    - image: rockylinux:9
      command: echo hello world
`

// withSpec is hello-world with its spec replaced.
func withSpec(spec string) string {
	return helloWorld[:strings.Index(helloWorld, "spec:\n")] + "spec:\n" + spec
}

// blocked is the error the API server adds when CEL rules were skipped.
const blockedErr = "<nil>: Invalid value: null: " + blockedMessage

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
