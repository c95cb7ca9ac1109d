package schema

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// largeClaim is a claim at the schema's limits where it matters for cost:
// 16 containers and 16 services, each with environment, volumes, ports and
// hooks.
func largeClaim() string {
	var b strings.Builder
	b.WriteString("apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: large, namespace: default}\nspec:\n  size: 64\n  maxSize: 128\n  minSize: 32\n")
	b.WriteString("  flux: {bursting: {clusters: [{name: b0, size: 8}, {name: b1, size: 8}]}, environment: {A: b, C: d}}\n")
	b.WriteString("  pod: {nodeSelector: {pool: hpc}, labels: {team: hpc}}\n")
	for _, list := range []string{"containers", "services"} {
		fmt.Fprintf(&b, "  %s:\n", list)
		for i := range 16 {
			fmt.Fprintf(&b, "  - name: c%d\n    image: rockylinux:9\n    command: echo %d\n    runFlux: %v\n", i, i, list == "containers" && i == 0)
			b.WriteString("    environment: {A: b, C: d, E: f, G: h}\n    ports: [8080, 8081, 8082]\n")
			b.WriteString("    commands: {pre: echo pre, post: echo post, init: echo init}\n")
			b.WriteString("    resources: {limits: {cpu: 2, memory: 1Gi}, requests: {cpu: 1}}\n")
			b.WriteString("    volumes:\n")
			for v := range 4 {
				fmt.Fprintf(&b, "      data-%d: {path: /data/%d, emptyDir: true}\n", v, v)
			}
		}
	}
	return b.String()
}

func benchObjects(b *testing.B) map[string]map[string]any {
	hello, err := os.ReadFile("../../examples/hello-world/claim.yaml")
	if err != nil {
		b.Fatal(err)
	}
	pod, err := os.ReadFile("../../examples/pod-settings/claim.yaml")
	if err != nil {
		b.Fatal(err)
	}
	objs := map[string]map[string]any{
		"hello-world":  decode(b, string(hello)),
		"pod-settings": decode(b, string(pod)),
		"large":        decode(b, largeClaim()),
	}
	for name, o := range objs {
		Claims.Default(o)
		if errs := Claims.Validate(context.Background(), o); len(errs) > 0 {
			b.Fatalf("%s is invalid: %v", name, errs)
		}
	}
	return objs
}

var benchNames = []string{"hello-world", "pod-settings", "large"}

// BenchmarkValidate is the cost of Validate on a defaulted claim (the
// validators are built once, before the timer starts).
func BenchmarkValidate(b *testing.B) {
	objs := benchObjects(b)
	ctx := context.Background()
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			obj := objs[name]
			b.ReportAllocs()
			for b.Loop() {
				if errs := Claims.Validate(ctx, obj); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}

// BenchmarkValidateUpdate is ValidateUpdate of an unchanged object.
func BenchmarkValidateUpdate(b *testing.B) {
	objs := benchObjects(b)
	ctx := context.Background()
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			obj, old := objs[name], runtime.DeepCopyJSON(objs[name])
			b.ReportAllocs()
			for b.Loop() {
				if errs := Claims.ValidateUpdate(ctx, obj, old); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}

// BenchmarkUnknown is Unknown (it copies the object).
func BenchmarkUnknown(b *testing.B) {
	objs := benchObjects(b)
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			obj := objs[name]
			b.ReportAllocs()
			for b.Loop() {
				if u := Claims.Unknown(obj); len(u) > 0 {
					b.Fatal(u)
				}
			}
		})
	}
}

// BenchmarkFunctionPath is what the function would pay per request: the
// composite from the request's Struct (all numbers float64) made int64,
// defaulted and validated. The Struct's AsMap copy is not included; the
// copy that stands in for it is (runtime.DeepCopyJSON, measured alone in
// the Copy sub-benchmarks).
func BenchmarkFunctionPath(b *testing.B) {
	objs := benchObjects(b)
	ctx := context.Background()
	for _, name := range benchNames {
		floats := floats(runtime.DeepCopyJSON(objs[name]))
		b.Run(name+"/Copy", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = runtime.DeepCopyJSONValue(floats)
			}
		})
		b.Run(name+"/Int64sDefaultValidate", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				obj := Int64s(runtime.DeepCopyJSONValue(floats).(map[string]any))
				Claims.Default(obj)
				if errs := Claims.Validate(ctx, obj); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}

// floats turns every int64 into a float64, as a protobuf Struct does.
func floats(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = floats(x)
		}
	case []any:
		for i := range t {
			t[i] = floats(t[i])
		}
	case int64:
		return float64(t)
	}
	return v
}
