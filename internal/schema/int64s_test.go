package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInt64s(t *testing.T) {
	got := Int64s(map[string]any{"a": 4.0, "b": 4.5, "c": []any{map[string]any{"d": 1.0}}, "e": "1", "f": int64(2)})
	want := map[string]any{"a": int64(4), "b": 4.5, "c": []any{map[string]any{"d": int64(1)}}, "e": "1", "f": int64(2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Int64s: -want, +got:\n%s", diff)
	}
}
