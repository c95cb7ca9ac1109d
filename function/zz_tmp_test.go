package function

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

func zzObjs(b *testing.B) []render.Object {
	x := xr(helloSpec, "")
	m := structpbMap(x)
	mc, ns, err := Decode(m)
	if err != nil {
		b.Fatal(err)
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	objs, err := render.Render(render.Input{MiniCluster: mc, Namespace: ns, CurveCert: []byte("x"), MaximumSize: 4, Size: 4})
	if err != nil {
		b.Fatal(err)
	}
	return objs
}

func structpbMap(j string) map[string]any {
	s := &structpb.Struct{}
	_ = s.UnmarshalJSON([]byte(j))
	return s.AsMap()
}

func BenchmarkZZToComposed(b *testing.B) {
	objs := zzObjs(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range objs {
			cd, _ := toComposed(o.Object)
			_, _ = structpb.NewStruct(cd.Object)
		}
	}
}

func BenchmarkZZToComposedOnly(b *testing.B) {
	objs := zzObjs(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range objs {
			_, _ = toComposed(o.Object)
		}
	}
}

func BenchmarkZZRender(b *testing.B) {
	x := xr(helloSpec, "")
	m := structpbMap(x)
	mc, ns, _ := Decode(m)
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	b.ReportAllocs()
	for b.Loop() {
		_, _ = render.Render(render.Input{MiniCluster: mc, Namespace: ns, CurveCert: []byte("x"), MaximumSize: 4, Size: 4})
	}
}

func BenchmarkZZDecode(b *testing.B) {
	m := structpbMap(xr(helloSpec, ""))
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = Decode(m)
	}
}
