package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConvertRepeatedKey covers YAML as kubectl apply reads it: a key given
// twice keeps its last value, with a warning naming the field.
func TestConvertRepeatedKey(t *testing.T) {
	cases := map[string]struct {
		reason     string
		in         string
		wantStderr string
		wantInOut  string // a line of stdout
	}{
		"V1alpha1": {
			reason: "A v1alpha1 MiniCluster with interactive twice converts with the last value.",
			in: "apiVersion: flux-framework.org/v1alpha1\nkind: MiniCluster\nmetadata: {name: dup}\nspec:\n" +
				"  size: 2\n  interactive: false\n  interactive: true\n  containers:\n  - image: rockylinux:9\n",
			wantStderr: "<stdin>: Warning: duplicate field \"spec.interactive\"\n" +
				`<stdin>: MiniCluster "dup": spec.flux.container: set disable: true and image: rockylinux:9: a v1alpha1 image brings its own Flux, ` +
				"so the brokers run it (the init container, from the same image, only writes the configuration); " +
				"to take Flux from a Flux view instead, remove both and pick a view image that matches the image's OS\n",
			wantInOut: "  interactive: true",
		},
		"V1alpha2": {
			reason: "Upstream's broker-eks manifests repeat interactive: written out unchanged, with the warning.",
			in: "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: dup}\nspec:\n" +
				"  size: 2\n  interactive: true\n  interactive: true\n  containers:\n  - image: rockylinux:9\n",
			wantStderr: "<stdin>: Warning: duplicate field \"spec.interactive\"\n" +
				"<stdin>: no flux-framework.org/v1alpha1 MiniCluster: written out unchanged\n",
			wantInOut: "  interactive: true",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := runConvert(t, tc.in, "-")
			if err != nil {
				t.Fatalf("%s\nconvert: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr); diff != "" {
				t.Errorf("%s\nstderr: -want, +got:\n%s", tc.reason, diff)
			}
			if !strings.Contains(stdout, tc.wantInOut+"\n") || strings.Contains(stdout, "interactive: false") {
				t.Errorf("%s\nstdout lacks %q or keeps the first value:\n%s", tc.reason, tc.wantInOut, stdout)
			}
		})
	}
}
