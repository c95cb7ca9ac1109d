package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// What holds the function's memory, from a heap profile of its
// --pprof-address, for load tests.

// Holder is a part of a live heap: a function or a module and how much of
// the heap its allocations still hold.
type Holder struct {
	Name string  `json:"name"`
	MiB  float64 `json:"mib"`
}

// Heap is the function's live heap after a collection.
type Heap struct {
	// LiveMiB is all the heap the profile holds (inuse_space).
	LiveMiB float64
	// ByModule is the live heap by the module of the function that
	// allocated it ("github.com/google/cel-go", "std" for the standard
	// library), largest first.
	ByModule []Holder
	// Top are the functions whose allocations hold most of it (pprof
	// -top's flat inuse_space), largest first.
	Top []Holder
	// Profile is the profile as served, for go tool pprof.
	Profile []byte
}

// FunctionPprofURL is the function's profiling endpoint (--pprof-address).
func (cp *ControlPlane) FunctionPprofURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(cp.ports.fnPprof) + "/debug/pprof"
}

// FunctionHeap fetches a heap profile of the running function, taken right
// after a garbage collection (gc=1), so what it shows is live, and sums
// it up: by module and the top n functions.
func (cp *ControlPlane) FunctionHeap(ctx context.Context, n int) (Heap, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := cp.FunctionPprofURL() + "/heap?gc=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Heap{}, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Heap{}, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read-only
	if rsp.StatusCode != http.StatusOK {
		return Heap{}, fmt.Errorf("GET %s: %s", url, rsp.Status)
	}
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return Heap{}, fmt.Errorf("GET %s: %w", url, err)
	}
	h, err := SumHeap(b, n)
	if err != nil {
		return Heap{}, fmt.Errorf("GET %s: %w", url, err)
	}
	return h, nil
}

// SumHeap sums up a heap profile (the Go runtime's, as net/http/pprof
// serves it): the live heap, by module and the top n functions.
func SumHeap(data []byte, n int) (Heap, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return Heap{}, fmt.Errorf("cannot parse the heap profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return Heap{}, fmt.Errorf("the profile has no inuse_space samples")
	}
	h := Heap{Profile: data}
	byFn, byMod := map[string]int64{}, map[string]int64{}
	var live int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		live += v
		fn := "?"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			fn = s.Location[0].Line[0].Function.Name
		}
		byFn[fn] += v
		byMod[Module(fn)] += v
	}
	h.LiveMiB = mebibytes(live)
	h.Top = largest(byFn, n)
	h.ByModule = largest(byMod, len(byMod))
	return h, nil
}

// Module is the module of a Go function's symbol name: its package path up
// to the module's root for the hosts whose layout says where that is, the
// package path otherwise, and "std" for the standard library and runtime.
func Module(fn string) string {
	// The package path ends before the first dot after its last slash.
	pkg := fn
	slash := strings.LastIndexByte(pkg, '/')
	if i := strings.IndexByte(pkg[slash+1:], '.'); i >= 0 {
		pkg = pkg[:slash+1+i]
	}
	first, _, _ := strings.Cut(pkg, "/")
	if !strings.Contains(first, ".") {
		return "std"
	}
	parts := strings.Split(pkg, "/")
	keep := 2 // k8s.io/apimachinery, go.uber.org/zap, google.golang.org/grpc
	switch first {
	case "github.com", "golang.org", "gopkg.in":
		keep = 3 // github.com/google/cel-go, golang.org/x/net
	}
	if len(parts) > keep {
		parts = parts[:keep]
	}
	return strings.Join(parts, "/")
}

func largest(m map[string]int64, n int) []Holder {
	out := make([]Holder, 0, len(m))
	for k, v := range m {
		out = append(out, Holder{Name: k, MiB: mebibytes(v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MiB != out[j].MiB {
			return out[i].MiB > out[j].MiB
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func mebibytes(b int64) float64 { return float64(int64(float64(b)/(1<<20)*100+0.5)) / 100 }
