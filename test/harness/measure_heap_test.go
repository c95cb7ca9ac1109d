package harness

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestModule(t *testing.T) {
	cases := map[string]struct {
		reason string
		fn     string
		want   string
	}{
		"GitHub": {
			reason: "A GitHub module is host, owner and repository.",
			fn:     "github.com/google/cel-go/interpreter.(*defaultDispatcher).Add",
			want:   "github.com/google/cel-go",
		},
		"K8s": {
			reason: "A k8s.io module is host and repository.",
			fn:     "k8s.io/apiextensions-apiserver/pkg/apiserver/schema.(*Structural).DeepCopyInto",
			want:   "k8s.io/apiextensions-apiserver",
		},
		"GoogleGolang": {
			reason: "google.golang.org/grpc is a module of two elements.",
			fn:     "google.golang.org/grpc/internal/mem.(*sizedBufferPool).Get",
			want:   "google.golang.org/grpc",
		},
		"XNet": {
			reason: "golang.org/x/net is three.",
			fn:     "golang.org/x/net/http2/hpack.buildRootHuffmanNode",
			want:   "golang.org/x/net",
		},
		"Std": {
			reason: "The standard library is one holder.",
			fn:     "regexp/syntax.(*compiler).inst",
			want:   "std",
		},
		"Runtime": {
			reason: "So is the runtime.",
			fn:     "runtime.malg",
			want:   "std",
		},
		"Ours": {
			reason: "The project's own code is its module.",
			fn:     "github.com/flux-framework/minicluster-crossplane/internal/schema.build",
			want:   "github.com/flux-framework/minicluster-crossplane",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Module(tc.fn); got != tc.want {
				t.Errorf("%s\nModule(%q) = %q, want %q", tc.reason, tc.fn, got, tc.want)
			}
		})
	}
}

// heapHog keeps what it allocates live until the profile is written.
var heapHog [][]byte

// TestSumHeap sums this test's own heap profile: what it keeps live shows
// up, in the top functions and under std (make is the runtime's).
func TestSumHeap(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for range 64 {
		heapHog = append(heapHog, make([]byte, 64<<10))
	}
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		t.Fatal(err)
	}
	h, err := SumHeap(b.Bytes(), 3)
	if err != nil {
		t.Fatal(err)
	}
	heapHog = nil
	if h.LiveMiB < 4 {
		t.Errorf("live heap %.2f MiB, want at least the 4 MiB the test keeps", h.LiveMiB)
	}
	if len(h.Top) != 3 {
		t.Fatalf("top: %d functions, want 3", len(h.Top))
	}
	if diff := cmp.Diff("github.com/flux-framework/minicluster-crossplane/test/harness.TestSumHeap", h.Top[0].Name); diff != "" {
		t.Errorf("the largest holder: -want, +got:\n%s", diff)
	}
	if h.Top[0].MiB < 4 {
		t.Errorf("the test holds %.2f MiB, want at least 4", h.Top[0].MiB)
	}
}
