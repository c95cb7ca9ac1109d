package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFunctionName(t *testing.T) {
	for ref, want := range map[string]string{
		"xpkg.crossplane.io/flux-framework/function-minicluster":                            "flux-framework-function-minicluster",
		"127.0.0.1:5000/flux-framework/function-minicluster":                                "flux-framework-function-minicluster",
		"registry.example.com/flux/function-minicluster":                                    "flux-function-minicluster",
		"ghcr.io/org.name/team_a/function-minicluster":                                      "org-name-teama-function-minicluster",
		"localhost:5000/function-minicluster":                                               "function-minicluster",
		"docker.io/flux/function-minicluster":                                               "flux-function-minicluster",
		"xpkg.crossplane.io/a-very-long-organisation-name-for-testing/function-minicluster": "a-very-long-organisation-name-for-testing-function-minicluster",
	} {
		got, err := functionName(ref)
		if err != nil || got != want {
			t.Errorf("functionName(%q) = %q, %v; want %q", ref, got, err, want)
		}
		if len(got) > 63 {
			t.Errorf("functionName(%q) = %q: longer than a DNS label", ref, got)
		}
	}
}

func TestRenameFunctionRefs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The Compositions of both shapes call the function the same way.
	for _, composition := range []string{"composition.yaml", filepath.Join("v2", "composition.yaml")} {
		renameIn(t, filepath.Join(root, "compositions", composition))
	}

	// The XRD has no Composition: unchanged.
	xrd, err := os.ReadFile(filepath.Join(root, "compositions", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "definition.yaml")
	if err := os.WriteFile(path, xrd, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := renameFunctionRefs(path, "function-minicluster", "x-function-minicluster"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(xrd) {
		t.Error("definition.yaml changed")
	}

	// A reference the rewrite cannot find is an error, not a silently
	// broken package.
	flow := "apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nspec:\n  pipeline:\n    - step: s\n      functionRef: {name: function-minicluster}\n"
	if err := os.WriteFile(path, []byte(flow), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := renameFunctionRefs(path, "function-minicluster", "x-function-minicluster"); err == nil || !strings.Contains(err.Error(), `calls function "function-minicluster"`) {
		t.Errorf("flow-style functionRef: got %v, want an error naming the step's function", err)
	}
}

// renameIn checks renameFunctionRefs on a copy of a Composition file: the
// step's functionRef, and nothing else, takes the dependency's name.
func renameIn(t *testing.T, file string) {
	t.Helper()
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new string }{
		{"function-minicluster", "flux-framework-function-minicluster"},
		{"function-minicluster", "function-minicluster"}, // a registry without an organisation
	} {
		path := filepath.Join(t.TempDir(), "composition.yaml")
		if err := os.WriteFile(path, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := renameFunctionRefs(path, tc.old, tc.new); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(string(orig), "name: "+tc.old+"\n", "name: "+tc.new+"\n", 1)
		if string(got) != want {
			t.Errorf("%s: %s -> %s: got\n%s\nwant\n%s", file, tc.old, tc.new, got, want)
		}
	}
}

func TestSelectPackages(t *testing.T) {
	cases := map[string]struct {
		reason string
		list   string
		want   []string
		err    string
	}{
		"All": {
			reason: "No list builds every package (make packages).",
			want:   []string{"function-minicluster", "provider-minicluster-burst", "configuration-minicluster", "configuration-minicluster-v2"},
		},
		"SomeInPackageOrder": {
			reason: "A list picks packages in the order of packages, whatever its own order (the upgrade e2e builds only the Function and the Configuration).",
			list:   "configuration-minicluster, function-minicluster",
			want:   []string{"function-minicluster", "configuration-minicluster"},
		},
		"Unknown": {
			reason: "A name that is no package is an error naming it and the packages there are.",
			list:   "function-minicluster,nope,alsonot",
			err:    "no package alsonot, nope (have function-minicluster, provider-minicluster-burst, configuration-minicluster, configuration-minicluster-v2)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := selectPackages(tc.list)
			errStr := ""
			if err != nil {
				errStr = err.Error()
			}
			if diff := cmp.Diff(tc.err, errStr); diff != "" {
				t.Errorf("%s\nselectPackages(%q) error: -want, +got:\n%s", tc.reason, tc.list, diff)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("%s\nselectPackages(%q): -want, +got:\n%s", tc.reason, tc.list, diff)
			}
		})
	}
}
