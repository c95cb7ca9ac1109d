package function_test

// Benchmarks and resource tests of RunFunction, against the performance
// targets of docs/performance.md. Run the benchmarks with
//
//	go test ./function/ -run '^$' -bench . -benchmem -count 6 | tee new.txt
//	benchstat new.txt
//
// Every request is what Crossplane sends for an example claim: the
// composite with the fields Crossplane adds (claimRef, compositionRef, ...),
// the Composition's input, and, in steady state, every composed resource as
// the API server returns it (uid, owner references, defaulted fields, Job
// status) plus the status the function wrote before (maximumSize).
//
// The floor is what any function pays for the same exchange: decoding the
// request from bytes and encoding the response, with protobuf alone.
//
// Besides ns/op, B/op and allocs/op the benchmarks report
//   - cpu-ns/op: CPU time (user + system, all threads, so GC included) per
//     operation, steadier than wall time on a shared machine;
//   - x-floor: cpu-ns/op over the floor's, measured in the same process
//     just before;
//   - resp-bytes (and req-bytes): encoded sizes.
//
// The tests here are deterministic: response sizes, heap growth over
// 10,000 calls (skipped with -short), concurrent calls.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// compositionInput is the input of the shipped Composition's pipeline step.
const compositionInput = `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","defaults":{}}`

// maxScalingSize is the largest size the function composes in the same
// time and bytes as size 4 (docs/performance.md), far above the default
// policy's maximum (policy.maxSize, 1024): scalingInput raises it.
const maxScalingSize = 10000

// scalingInput is compositionInput with a platform's policy.maxSize of
// maxScalingSize.
var scalingInput = fmt.Sprintf(`{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","defaults":{},"policy":{"maxSize":%d}}`, maxScalingSize)

// largestExample renders the most bytes of all examples (see
// TestLargestExample).
const largestExample = "flux-sidecar"

// benchExamples are the examples the benchmarks run.
var benchExamples = []string{"hello-world", largestExample}

// exampleNames lists every example with a claim.
func exampleNames(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "examples", "*", "claim.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no example claims: %v", err)
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, filepath.Base(filepath.Dir(f)))
	}
	sort.Strings(out)
	return out
}

// created is xr as Crossplane creates it for a claim: a generated name
// and the fields Crossplane and the API server add.
func created(tb testing.TB, xr *unstructured.Unstructured) map[string]any {
	tb.Helper()
	xr = xr.DeepCopy()
	claim := xr.GetName()
	name := claim + "-x7k2p"
	xr.SetName(name)
	xr.SetGenerateName(claim + "-")
	xr.SetUID("3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55")
	xr.SetResourceVersion("48213")
	xr.SetGeneration(1)
	xr.SetCreationTimestamp(metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	xr.SetFinalizers([]string{"composite.apiextensions.crossplane.io"})
	labels := xr.GetLabels()
	labels["crossplane.io/composite"] = name
	xr.SetLabels(labels)
	spec, _ := xr.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["claimRef"] = map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "name": claim, "namespace": labels[v1alpha2.LabelClaimNamespace]}
	spec["compositionRef"] = map[string]any{"name": "miniclusters.flux-framework.org"}
	spec["compositionRevisionRef"] = map[string]any{"name": "miniclusters.flux-framework.org-5d2c9a1"}
	spec["compositionUpdatePolicy"] = "Automatic"
	xr.Object["spec"] = spec
	// As the function receives it: JSON numbers.
	return mustStruct(tb, xr.Object).AsMap()
}

// example is a composite as Crossplane creates it for a claim, and the
// platform it is composed in: the objects of the cluster Crossplane answers
// the function's requirements from, and the input of the Composition's
// step. For an example of examples/ both are what its cluster.yaml and
// input.yaml say (driver.ExampleFixtures).
type example struct {
	xr      map[string]any
	cluster []*unstructured.Unstructured
	input   map[string]any
}

// requested is the request of the example's first reconcile: nothing
// observed yet but the composite, and no required resources.
func (ex example) requested(tb testing.TB) *fnv1.RunFunctionRequest {
	tb.Helper()
	req, err := driver.Request(&unstructured.Unstructured{Object: ex.xr}, nil, ex.input)
	if err != nil {
		tb.Fatal(err)
	}
	req.Meta.Tag = "d1c8e1f4b0"
	return req
}

// firstRequest is the request of the last call of a claim's first
// reconcile: nothing observed yet but the composite, and the resources the
// function required, as Crossplane answers them from the example's
// cluster (driver.Settle).
func firstRequest(tb testing.TB, ex example) *fnv1.RunFunctionRequest {
	tb.Helper()
	req, rsp, err := driver.Settle(context.Background(), function.New(function.WithRandom(fixedEntropy{})), ex.requested(tb), ex.cluster)
	if err != nil {
		tb.Fatal(err)
	}
	if msg := fatalResult(rsp); msg != "" {
		tb.Fatalf("first run: %s", msg)
	}
	return req
}

// steadyRequest is the request once everything exists and the brokers are
// up: every resource the first response composed, as the API server
// returns it, and the status the function reported.
func steadyRequest(tb testing.TB, ex example) *fnv1.RunFunctionRequest {
	tb.Helper()
	// Fixed entropy: the same claim always has the same key, so requests
	// (and benchmark results) are reproducible.
	fn := function.New(function.WithRandom(fixedEntropy{}))
	rsp, err := driver.RunRequest(context.Background(), fn, ex.requested(tb), ex.cluster)
	if err != nil || fatalResult(rsp) != "" {
		tb.Fatalf("first run: %v %s", err, fatalResult(rsp))
	}
	return observe(tb, ex, rsp)
}

// fixedEntropy makes CURVE keys deterministic.
type fixedEntropy struct{}

func (fixedEntropy) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

// observe is the request that follows rsp once Kubernetes made everything
// rsp composed and the brokers are up.
func observe(tb testing.TB, ex example, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionRequest {
	tb.Helper()
	xr := ex.xr
	md := xr["metadata"].(map[string]any)
	xrName := md["name"].(string)
	labels := md["labels"].(map[string]any)
	size := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["size"]

	var observed []*unstructured.Unstructured
	var refs []any
	names := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for name := range rsp.GetDesired().GetResources() {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		o := rsp.GetDesired().GetResources()[name].GetResource().AsMap()
		om := o["metadata"].(map[string]any)
		om["uid"] = fmt.Sprintf("7f6c1e2a-0000-4000-8000-%012d", i)
		om["resourceVersion"] = strconv.Itoa(48214 + i)
		om["generation"] = float64(1)
		om["creationTimestamp"] = "2024-01-01T00:00:01Z"
		ann, _ := om["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann["crossplane.io/composition-resource-name"] = name
		om["annotations"] = ann
		l, _ := om["labels"].(map[string]any)
		if l == nil {
			l = map[string]any{}
		}
		for k, v := range labels {
			l[k] = v
		}
		om["labels"] = l
		om["ownerReferences"] = []any{map[string]any{
			"apiVersion": "flux-framework.org/v1alpha2", "kind": "XMiniCluster", "name": xrName,
			"uid": md["uid"], "controller": true, "blockOwnerDeletion": true,
		}}
		switch o["kind"] {
		case "Job":
			spec := o["spec"].(map[string]any)
			spec["manualSelector"] = false
			spec["suspend"] = false
			spec["podReplacementPolicy"] = "TerminatingOrFailed"
			spec["selector"] = map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": om["uid"]}}
			tl := spec["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
			tl["batch.kubernetes.io/controller-uid"] = om["uid"]
			tl["batch.kubernetes.io/job-name"] = om["name"]
			tl["controller-uid"] = om["uid"]
			o["status"] = map[string]any{
				"active": size, "ready": size, "terminating": float64(0),
				"startTime": "2024-01-01T00:00:02Z", "uncountedTerminatedPods": map[string]any{},
			}
		case "Service":
			spec := o["spec"].(map[string]any)
			if spec["clusterIP"] == nil {
				spec["clusterIP"] = "10.96.12.34"
			}
			spec["clusterIPs"] = []any{spec["clusterIP"]}
			spec["ipFamilies"] = []any{"IPv4"}
			spec["ipFamilyPolicy"] = "SingleStack"
			spec["sessionAffinity"] = "None"
			spec["internalTrafficPolicy"] = "Cluster"
			if spec["type"] == nil {
				spec["type"] = "ClusterIP"
			}
			o["status"] = map[string]any{"loadBalancer": map[string]any{}}
		}
		observed = append(observed, &unstructured.Unstructured{Object: o})
		refs = append(refs, map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": om["name"], "namespace": om["namespace"]})
	}

	oxr := mustStruct(tb, xr).AsMap()
	oxr["spec"].(map[string]any)["resourceRefs"] = refs
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	st["phase"] = "Running"
	st["claimConditionTypes"] = []any{function.ConditionScaled, function.ConditionValid}
	var conds []any
	for _, c := range []string{"Responsive", function.ConditionScaled, function.ConditionValid, "Synced", "Ready"} {
		conds = append(conds, map[string]any{"type": c, "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:03Z"})
	}
	st["conditions"] = conds
	oxr["status"] = st

	req, err := driver.Request(&unstructured.Unstructured{Object: oxr}, observed, ex.input)
	if err != nil {
		tb.Fatal(err)
	}
	req.Meta.Tag = "d1c8e1f4b0"
	return req
}

func mustStruct(tb testing.TB, m map[string]any) *structpb.Struct {
	tb.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func mustJSONMap(tb testing.TB, j string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(j), &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func fatalResult(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// loadExample is an example claim's composite, in the platform its
// cluster.yaml and input.yaml describe (the shipped Composition's input
// when it has none).
func loadExample(tb testing.TB, name string) example {
	tb.Helper()
	dir := filepath.Join("..", "examples", name)
	b, err := os.ReadFile(filepath.Join(dir, "claim.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	mc, err := driver.ReadMiniCluster(b)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	xr, err := driver.Composite(mc)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	cluster, input, err := driver.ExampleFixtures(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if input == nil {
		input = []byte(compositionInput)
	}
	return example{xr: created(tb, xr), cluster: cluster, input: mustJSONMap(tb, string(input))}
}

// sizedExample is hello-world with spec.size = spec.maxSize = size, in a
// platform whose policy allows maxScalingSize pods.
func sizedExample(tb testing.TB, size int) example {
	tb.Helper()
	ex := loadExample(tb, "hello-world")
	spec := ex.xr["spec"].(map[string]any)
	spec["size"] = float64(size)
	spec["maxSize"] = float64(size)
	ex.input = mustJSONMap(tb, scalingInput)
	return ex
}

// call is one RunFunction as the gRPC server makes it: on a request of its
// own. (The SDK's response.To shares the request's desired state with the
// response, so a request must not be reused as is.)
type call struct {
	req     *fnv1.RunFunctionRequest
	desired *fnv1.Resource
}

func newCall(req *fnv1.RunFunctionRequest) *call {
	return &call{req: req, desired: req.GetDesired().GetComposite()}
}

func (c *call) run(fn *function.Function) (*fnv1.RunFunctionResponse, error) {
	c.req.Desired = &fnv1.State{Composite: c.desired}
	return fn.RunFunction(context.Background(), c.req)
}

// encoded returns the request and its response as bytes.
func encoded(tb testing.TB, req *fnv1.RunFunctionRequest) (reqBytes []byte, rsp *fnv1.RunFunctionResponse) {
	tb.Helper()
	reqBytes, err := proto.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	rsp, err = function.New().RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
	if err != nil || fatalResult(rsp) != "" {
		tb.Fatalf("RunFunction: %v %s", err, fatalResult(rsp))
	}
	return reqBytes, rsp
}

// floorOp decodes the request and encodes the response, nothing else.
func floorOp(reqBytes []byte, rsp *fnv1.RunFunctionResponse) (int, error) {
	r := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(reqBytes, r); err != nil {
		return 0, err
	}
	b, err := proto.Marshal(rsp)
	return len(b), err
}

// cpuNow is the CPU time (user + system) the process has used. Benchmarks
// report it per operation next to ns/op: on a shared machine, wall time
// includes waiting for a core, CPU time does not.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floorCPU is the CPU time of one floorOp, measured over about d outside
// the benchmark's timer, so a benchmark can report its ratio to the floor
// measured in the same run.
func floorCPU(tb testing.TB, reqBytes []byte, rsp *fnv1.RunFunctionResponse, d time.Duration) float64 {
	tb.Helper()
	for range 100 { // warm up
		if _, err := floorOp(reqBytes, rsp); err != nil {
			tb.Fatal(err)
		}
	}
	runtime.GC()
	n := 0
	start, cpu := time.Now(), cpuNow()
	for time.Since(start) < d {
		for range 100 {
			_, _ = floorOp(reqBytes, rsp)
		}
		n += 100
	}
	return float64(cpuNow()-cpu) / float64(n)
}

type benchCase struct {
	name string
	req  *fnv1.RunFunctionRequest
}

func exampleCases(b *testing.B) []benchCase {
	b.Helper()
	var out []benchCase
	for _, ex := range benchExamples {
		e := loadExample(b, ex)
		out = append(out,
			benchCase{"example=" + ex + "/state=first", firstRequest(b, e)},
			benchCase{"example=" + ex + "/state=steady", steadyRequest(b, e)},
		)
	}
	return out
}

var sinkRsp *fnv1.RunFunctionResponse

// benchRun times RunFunction alone on an already decoded request, and
// reports the response size and the ratio to the floor.
func benchRun(b *testing.B, req *fnv1.RunFunctionRequest) {
	reqBytes, want := encoded(b, req)
	floor := floorCPU(b, reqBytes, want, 200*time.Millisecond)
	fn := function.New()
	c := newCall(proto.Clone(req).(*fnv1.RunFunctionRequest))
	runtime.GC()
	b.ReportAllocs()
	cpu := cpuNow()
	for b.Loop() {
		rsp, err := c.run(fn)
		if err != nil {
			b.Fatal(err)
		}
		sinkRsp = rsp
	}
	if msg := fatalResult(sinkRsp); msg != "" {
		b.Fatal(msg)
	}
	cpuPerOp := float64(cpuNow()-cpu) / float64(b.N)
	b.ReportMetric(float64(proto.Size(sinkRsp)), "resp-bytes")
	b.ReportMetric(cpuPerOp, "cpu-ns/op")
	b.ReportMetric(cpuPerOp/floor, "x-floor")
}

// BenchmarkRunFunction is RunFunction on a decoded request: the first
// reconcile (which generates the CURVE key) and the steady state.
// x-floor is its time over BenchmarkFloor's, measured in the same run.
func BenchmarkRunFunction(b *testing.B) {
	for _, tc := range exampleCases(b) {
		b.Run(tc.name, func(b *testing.B) { benchRun(b, tc.req) })
	}
}

// BenchmarkFloor is proto.Unmarshal of the request plus proto.Marshal of
// the response: what the gRPC server pays anyway.
func BenchmarkFloor(b *testing.B) {
	for _, tc := range exampleCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			reqBytes, rsp := encoded(b, tc.req)
			runtime.GC()
			b.ReportAllocs()
			n := 0
			cpu := cpuNow()
			for b.Loop() {
				var err error
				if n, err = floorOp(reqBytes, rsp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(reqBytes)), "req-bytes")
			b.ReportMetric(float64(n), "resp-bytes")
		})
	}
}

// BenchmarkRoundTrip is what the server does per request: decode, run,
// encode. x-floor is its time over the floor's.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tc := range exampleCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			reqBytes, want := encoded(b, tc.req)
			floor := floorCPU(b, reqBytes, want, 200*time.Millisecond)
			fn := function.New()
			runtime.GC()
			b.ReportAllocs()
			n := 0
			cpu := cpuNow()
			for b.Loop() {
				r := &fnv1.RunFunctionRequest{}
				if err := proto.Unmarshal(reqBytes, r); err != nil {
					b.Fatal(err)
				}
				rsp, err := fn.RunFunction(context.Background(), r)
				if err != nil {
					b.Fatal(err)
				}
				out, err := proto.Marshal(rsp)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			cpuPerOp := float64(cpuNow()-cpu) / float64(b.N)
			b.ReportMetric(float64(n), "resp-bytes")
			b.ReportMetric(cpuPerOp, "cpu-ns/op")
			b.ReportMetric(cpuPerOp/floor, "x-floor")
		})
	}
}

// scalingSizes are the sizes of the scaling benchmark and test; 4 is the
// reference (hello-world's size).
var scalingSizes = []int{1, 4, 64, 1000, maxScalingSize}

// BenchmarkRunFunctionSize is steady-state RunFunction of hello-world with
// size = maxSize = 1 ... 10000: time, allocations and response bytes must
// not grow with size (host lists stay compressed).
func BenchmarkRunFunctionSize(b *testing.B) {
	for _, size := range scalingSizes {
		req := steadyRequest(b, sizedExample(b, size))
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) { benchRun(b, req) })
	}
}

// TestLargestExample keeps largestExample the example with the largest
// response.
func TestLargestExample(t *testing.T) {
	best, bestSize := "", 0
	sizes := map[string]int{}
	for _, ex := range exampleNames(t) {
		_, rsp := encoded(t, steadyRequest(t, loadExample(t, ex)))
		n := proto.Size(rsp)
		sizes[ex] = n
		if n > bestSize {
			best, bestSize = ex, n
		}
	}
	t.Logf("steady-state response bytes: %v", sizes)
	if best != largestExample {
		t.Errorf("the largest response is %s's (%d bytes), not %s's: update largestExample", best, bestSize, largestExample)
	}
}

// TestResponseSizeFlat: the response stays far below gRPC's 4 MiB limit
// and its structure does not grow with the cluster's size: from size 4 to
// 10000 only the digits of numbers in strings change.
func TestResponseSizeFlat(t *testing.T) {
	const limit = 64 << 10
	sizes := map[string]map[int]int{}
	for _, state := range []string{"first", "steady"} {
		sizes[state] = map[int]int{}
		for _, size := range scalingSizes {
			req := firstRequest(t, sizedExample(t, size))
			if state == "steady" {
				req = steadyRequest(t, sizedExample(t, size))
			}
			_, rsp := encoded(t, req)
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
			if err != nil {
				t.Fatal(err)
			}
			sizes[state][size] = len(b)
			if len(b) >= limit {
				t.Errorf("%s size %d: response is %d bytes, want < %d", state, size, len(b), limit)
			}
		}
		// Host names grow by 3 digits ("flux-sample-[0-9999]" vs
		// "flux-sample-[0-3]") in the hostlist and broker.toml, and a
		// starting cluster's Brokers message by 4 ("0 of 10000 brokers
		// up"); numbers are doubles of fixed width in protobuf.
		const slack = 12
		if d := sizes[state][maxScalingSize] - sizes[state][4]; d < 0 || d > slack {
			t.Errorf("%s: response for size %d is %d bytes, for size 4 %d bytes: %+d, want at most %d more", state, maxScalingSize, sizes[state][maxScalingSize], sizes[state][4], d, slack)
		}
		t.Logf("%s: response bytes by size %v", state, sizes[state])
	}
}

// TestRunFunctionDoesNotGrowHeap makes 10,000 sequential calls of one
// Function and checks that the live heap after 10,000 calls is no larger
// than after 1,000, within a small margin: nothing accumulates per call.
// (Calls are in-process, on decoded requests: the gRPC server's decoding
// and encoding are protobuf's and the SDK's, not the function's.)
func TestRunFunctionDoesNotGrowHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 10,000 calls")
	}
	// A mix: first runs (a new key each), steady states, a large cluster.
	calls := []*call{
		newCall(firstRequest(t, loadExample(t, "hello-world"))),
		newCall(steadyRequest(t, loadExample(t, "hello-world"))),
		newCall(steadyRequest(t, loadExample(t, largestExample))),
		newCall(steadyRequest(t, sizedExample(t, maxScalingSize))),
	}
	fn := function.New()
	serve := func(from, to int) {
		for i := from; i < to; i++ {
			rsp, err := calls[i%len(calls)].run(fn)
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if msg := fatalResult(rsp); msg != "" {
				t.Fatalf("call %d: %s", i, msg)
			}
		}
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	start := time.Now()
	serve(0, 1000)
	at1k := heap()
	serve(1000, 10000)
	at10k := heap()
	t.Logf("10,000 calls in %v; HeapInuse after GC: %.2f MiB at 1k, %.2f MiB at 10k", time.Since(start).Round(time.Millisecond), float64(at1k)/(1<<20), float64(at10k)/(1<<20))
	// 512 KiB covers allocator noise (span reuse) while a leak of even 64
	// bytes per call would exceed it.
	const margin = 512 << 10
	if at10k > at1k+margin {
		t.Errorf("heap grew from %d to %d bytes between 1,000 and 10,000 calls: something accumulates per call", at1k, at10k)
	}
}

// TestRunFunctionConcurrent calls one Function from several goroutines, as
// the gRPC server does: every answer must be the one a lone call gives.
// (Run with -race: the Function remembers validated certificates, and the
// conversion caches type plans.)
func TestRunFunctionConcurrent(t *testing.T) {
	var reqs []*fnv1.RunFunctionRequest
	var want [][]byte
	for _, ex := range exampleNames(t) {
		req := steadyRequest(t, loadExample(t, ex))
		_, rsp := encoded(t, req)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
		if err != nil {
			t.Fatal(err)
		}
		reqs, want = append(reqs, req), append(want, b)
	}
	fn := function.New()
	const workers, rounds = 4, 3
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for r := range rounds {
				for i := range reqs {
					i := (i + w + r) % len(reqs)
					rsp, err := fn.RunFunction(context.Background(), proto.Clone(reqs[i]).(*fnv1.RunFunctionRequest))
					if err != nil {
						errs <- err
						return
					}
					b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
					if err != nil {
						errs <- err
						return
					}
					if string(b) != string(want[i]) {
						errs <- fmt.Errorf("request %d: the response differs from a lone call's", i)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
