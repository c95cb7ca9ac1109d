package function

import (
	"context"
	"os"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// composite reads an example claim as the composite Crossplane sends: a
// protobuf Struct, every number a float64.
func composite(tb testing.TB, file string) *structpb.Struct {
	tb.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	mc, err := driver.ReadMiniCluster(b)
	if err != nil {
		tb.Fatal(err)
	}
	xr, err := driver.Composite(mc)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := structpb.NewStruct(xr.Object)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestSpecCheckerRemembers(t *testing.T) {
	s := composite(t, "../examples/hello-world/claim.yaml")
	c := &specChecker{}
	for i := 0; i < 2; i++ {
		if errs := c.check(context.Background(), s.GetFields()["spec"], s.AsMap()); len(errs) > 0 {
			t.Fatalf("hello-world: %v", errs)
		}
	}
	if len(c.valid) != 1 {
		t.Errorf("remembered %d specs, want 1", len(c.valid))
	}
	bad := composite(t, "../examples/hello-world/claim.yaml")
	bad.GetFields()["spec"].GetStructValue().GetFields()["size"] = structpb.NewNumberValue(0)
	for i := 0; i < 2; i++ {
		if errs := c.check(context.Background(), bad.GetFields()["spec"], bad.AsMap()); len(errs) == 0 {
			t.Fatalf("size 0 passed the schema on call %d", i+1)
		}
	}
}

// BenchmarkSpecCheck is the cost of the schema check: the first time a
// spec is seen (cold) and every time after (remembered).
func BenchmarkSpecCheck(b *testing.B) {
	s := composite(b, "../examples/hello-world/claim.yaml")
	spec := s.GetFields()["spec"]
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c := &specChecker{}
			_ = c.check(context.Background(), spec, s.AsMap())
		}
	})
	b.Run("remembered", func(b *testing.B) {
		c := &specChecker{}
		_ = c.check(context.Background(), spec, s.AsMap())
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = c.check(context.Background(), spec, s.AsMap())
		}
	})
}
