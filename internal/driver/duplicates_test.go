package driver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDuplicateFields covers YAML as kubectl reads it: a key given twice
// keeps its last value, and the CLI warns in the API server's words.
func TestDuplicateFields(t *testing.T) {
	cases := map[string]struct {
		reason   string
		in       string
		warnings []string
		want     []map[string]any // ParseObjects
	}{
		"None": {
			reason: "No warning without a repeated key.",
			in:     "a: 1\nb: {c: 2}\n",
			want:   []map[string]any{{"a": int64(1), "b": map[string]any{"c": int64(2)}}},
		},
		"Upstream": {
			reason: "Two upstream manifests repeat interactive: the last value is kept, as by kubectl apply.",
			in:     "spec:\n  interactive: false\n  size: 2\n  interactive: true\n",
			warnings: []string{
				`duplicate field "spec.interactive"`,
			},
			want: []map[string]any{{"spec": map[string]any{"interactive": true, "size": int64(2)}}},
		},
		"InList": {
			reason: "A field in a list element is named with its index, as the API server names it.",
			in:     "spec:\n  containers:\n  - image: a\n  - image: b\n    image: c\n",
			warnings: []string{
				`duplicate field "spec.containers[1].image"`,
			},
			want: []map[string]any{{"spec": map[string]any{"containers": []any{
				map[string]any{"image": "a"}, map[string]any{"image": "c"},
			}}}},
		},
		"EveryDocument": {
			reason: "Every document of a stream is read, JSON too; the top level has no prefix.",
			in:     "a: 1\na: 2\n---\n{\"b\": {\"c\": 1, \"c\": 3}}\n",
			warnings: []string{
				`duplicate field "a"`,
				`duplicate field "b.c"`,
			},
			want: []map[string]any{{"a": int64(2)}, {"b": map[string]any{"c": int64(3)}}},
		},
		"Thrice": {
			reason: "Each repetition is one warning.",
			in:     "a: 1\na: 2\na: 3\n",
			warnings: []string{
				`duplicate field "a"`,
				`duplicate field "a"`,
			},
			want: []map[string]any{{"a": int64(3)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.warnings, DuplicateFields([]byte(tc.in))); diff != "" {
				t.Errorf("%s\nDuplicateFields: -want, +got:\n%s", tc.reason, diff)
			}
			objs, err := ParseObjects([]byte(tc.in))
			if err != nil {
				t.Fatalf("%s\nParseObjects: %v", tc.reason, err)
			}
			var got []map[string]any
			for _, o := range objs {
				got = append(got, o.Object)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParseObjects: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
