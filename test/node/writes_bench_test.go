package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Environment of TestBenchNodeWrites (make bench-node).
const (
	// EnvNodeBench turns it on: it takes several minutes and measures
	// rather than checks.
	EnvNodeBench = "MC_NODE_BENCH"
	// EnvNodeBenchRuns is how many times each variant runs (default 3).
	EnvNodeBenchRuns = "MC_NODE_BENCH_RUNS"
	// EnvNodeBenchReport names the JSON report (make bench-node:
	// bin/bench-node.json; none when unset).
	EnvNodeBenchReport = "MC_NODE_BENCH_REPORT"
	// EnvNodeBenchShapes are the shapes measured, comma-separated
	// (default "v2,claims").
	EnvNodeBenchShapes = "MC_NODE_BENCH_SHAPES"
	// EnvNodeBenchDebug turns on Crossplane's and the function's debug
	// logs and keeps the control plane's directory, to read what each
	// composition run did beside the timeline.
	EnvNodeBenchDebug = "MC_NODE_BENCH_DEBUG"
)

// The targets for hello-world size 4, apply -> Succeeded, against
// the composed objects applied directly on the same node.
const (
	targetWritesV2     = 1.5
	targetWritesClaims = 2.0
	targetRuns         = 5
	targetTime         = 1.2
)

// variantDirect applies the four objects the function composes, without
// Crossplane: the floor a composition is measured against.
const variantDirect = "direct"

// benchRun is one MiniCluster from apply to Succeeded (the Job's Complete
// for direct).
type benchRun struct {
	Variant string `json:"variant"`
	// Plane is the shape the control plane served (direct runs on both).
	Plane   driver.Shape `json:"plane"`
	Rep     int          `json:"rep"`
	Seconds float64      `json:"seconds"`
	// Writes are the audit log's writes of the MiniCluster (its namespace,
	// and with claims its composite) from apply to Succeeded.
	Writes int `json:"writes"`
	// CompositionRuns are the composite controller's runs that applied
	// the composite's resourceRefs; RunFunctionCalls the function's gRPC
	// count, which is one per run unless the function's requirements
	// changed within the run (Crossplane then calls it again).
	CompositionRuns  int            `json:"compositionRuns"`
	RunFunctionCalls int64          `json:"runFunctionCalls"`
	ByWriter         map[string]int `json:"byWriter"`
	// Timeline and Triggers (the first run of each variant): every write
	// and change, and for each composition run what changed before it.
	Timeline []string `json:"timeline,omitempty"`
	Triggers []string `json:"triggers,omitempty"`
}

// benchSummary is a variant's medians and its ratios to direct on the same
// control plane.
type benchSummary struct {
	Variant          string       `json:"variant"`
	Plane            driver.Shape `json:"plane"`
	Writes           float64      `json:"writes"`
	CompositionRuns  float64      `json:"compositionRuns"`
	RunFunctionCalls float64      `json:"runFunctionCalls"`
	Seconds          float64      `json:"seconds"`
	WritesRatio      float64      `json:"writesRatio,omitempty"`
	TimeRatio        float64      `json:"timeRatio,omitempty"`
	TargetWrites     float64      `json:"targetWritesRatio,omitempty"`
	TargetRuns       int          `json:"targetRuns,omitempty"`
	TargetTime       float64      `json:"targetTimeRatio,omitempty"`
}

// TestBenchNodeWrites measures hello-world at size 4 on the real node:
// per shape, a control plane of its own with the audit log on, where the
// MiniCluster in that shape and the same four objects applied directly
// (rendered in-process by the function, as `minicluster render` does, with
// the Composition's input) alternate, $MC_NODE_BENCH_RUNS times each. It
// prints API writes, composition runs and time from apply to Succeeded,
// their medians, the ratios to direct with the targets beside
// them, and the timeline of each shape's first run (every change the API
// server made, who wrote it, and where each composition run starts); it
// writes them to $MC_NODE_BENCH_REPORT. It does not fail on the targets.
func TestBenchNodeWrites(t *testing.T) {
	if os.Getenv(EnvNodeBench) == "" {
		t.Skipf("set %s=1 to measure writes on the real node (make bench-node)", EnvNodeBench)
	}
	reps := 3
	if v := os.Getenv(EnvNodeBenchRuns); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("$%s=%q: want a positive number", EnvNodeBenchRuns, v)
		}
		reps = n
	}
	shapes := []driver.Shape{driver.ShapeV2, driver.ShapeClaims}
	if v := os.Getenv(EnvNodeBenchShapes); v != "" {
		shapes = nil
		for _, s := range strings.Split(v, ",") {
			shape, err := driver.ParseShape(strings.TrimSpace(s))
			if err != nil {
				t.Fatalf("$%s: %v", EnvNodeBenchShapes, err)
			}
			shapes = append(shapes, shape)
		}
	}
	var runs []benchRun
	for _, shape := range shapes {
		cp := benchPlane(t, shape)
		// The variants alternate so that drift of the machine's load
		// falls on both alike.
		for i := range reps {
			for _, variant := range []string{variantDirect, string(shape)} {
				r := benchOnce(t, cp, variant, i, i == 0)
				runs = append(runs, r)
				t.Logf("%s (%s plane) run %d: %.1f s, %d writes, %d composition runs, %d RunFunction calls",
					variant, shape, i, r.Seconds, r.Writes, r.CompositionRuns, r.RunFunctionCalls)
			}
		}
		stopPlane(false)
	}
	sums := summarize(runs)
	table := benchTable(sums, runs)
	t.Logf("bench-node (hello-world size 4, %d runs each, real flux: %v):\n%s", reps, realFlux(), table)
	fmt.Fprintf(os.Stderr, "\nbench-node: hello-world size 4, apply -> Succeeded (medians of %d)\n%s\n", reps, table)
	for _, r := range runs {
		if len(r.Timeline) > 0 {
			fmt.Fprintf(os.Stderr, "\nbench-node: timeline of %s run %d (%s plane)\n  %s\n", r.Variant, r.Rep, r.Plane, strings.Join(r.Timeline, "\n  "))
		}
		if len(r.Triggers) > 0 {
			fmt.Fprintf(os.Stderr, "\nbench-node: what preceded each composition run of %s run %d\n  %s\n", r.Variant, r.Rep, strings.Join(r.Triggers, "\n  "))
		}
	}
	if path := os.Getenv(EnvNodeBenchReport); path != "" {
		b, err := json.MarshalIndent(map[string]any{"realFlux": realFlux(), "runsPerVariant": reps, "summary": sums, "runs": runs}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
}

// benchPlane starts the real node's control plane for shape with the
// audit log on. It is nodePlane's, but for the audit log and without
// Kueue, whose webhook on every Job would add its own latency to both
// variants; it takes the one node's place in plane, so that TestMain
// stops it.
func benchPlane(t *testing.T, shape driver.Shape) *harness.ControlPlane {
	t.Helper()
	if v := os.Getenv(EnvE2ENode); v == "" || v == "0" {
		t.Skipf("the benchmark runs pods on this machine: set %s=1 (make bench-node does)", EnvE2ENode)
	}
	if os.Geteuid() != 0 {
		t.Skip("the real node needs root")
	}
	stopPlane(false)
	plane.mu.Lock()
	defer plane.mu.Unlock()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	buildNodeImages(ctx, t, root)
	debug := os.Getenv(EnvNodeBenchDebug) != ""
	cp, err := harness.Start(ctx, harness.Options{
		Name:         "bench-" + string(shape),
		Shape:        shape,
		StartTimeout: 10 * time.Minute,
		Logf:         logf,
		AuditWrites:  true,
		Debug:        debug,
		Node:         &harness.NodeOptions{Images: plane.images.Tarballs, PauseImage: harness.PauseImageRef},
	})
	if err != nil {
		t.Fatal(err)
	}
	if debug {
		cp.KeepDir()
		logf("bench-node: debug logs in %s", cp.LogDir)
	}
	plane.cp, plane.shape = cp, shape
	return cp
}

// benchOnce runs hello-world at size 4 once in a namespace of its own,
// as variant (a shape, or direct), and deletes it again.
func benchOnce(t *testing.T, cp *harness.ControlPlane, variant string, rep int, trace bool) benchRun {
	t.Helper()
	ctx := context.Background()
	shape := cp.Shape()
	ns := fmt.Sprintf("bench-%s-%s-%d", shape, variant, rep)
	mustKubectl(t, cp, "create", "namespace", ns)
	namespaceReady(t, cp, ns)
	f := manifest(t, "hello-world", ns, func(o map[string]any) { o["spec"].(map[string]any)["size"] = int64(4) })
	mc, err := readObject(f)
	if err != nil {
		t.Fatal(err)
	}
	if variant == variantDirect {
		f = renderDirect(t, cp, f)
	}
	var tr *tracer
	if trace {
		tr = startTracer(t, cp, ns, mc)
	}
	calls0, err := cp.RunFunctionCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	mustKubectl(t, cp, "apply", "-f", f)
	done, composite := waitDone(t, cp, variant, ns, mc)
	calls1, err := cp.RunFunctionCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := cp.AuditWrites(ctx, start, done)
	if err != nil {
		t.Fatal(err)
	}
	ws := harness.OfMiniCluster(all, ns, composite)
	r := benchRun{
		Variant: variant, Plane: shape, Rep: rep, Seconds: done.Sub(start).Seconds(), Writes: len(ws),
		RunFunctionCalls: calls1 - calls0, ByWriter: map[string]int{},
	}
	for _, w := range ws {
		r.ByWriter[harness.WriteKey(w, shape)]++
		if harness.StartsCompositionRun(w, shape) {
			r.CompositionRuns++
		}
	}
	if tr != nil {
		events := tr.stop()
		r.Timeline = timeline(start, done, ws, events, shape)
		r.Triggers = triggers(start, done, ws, events, shape)
	}
	benchCleanup(t, cp, variant, ns, mc)
	return r
}

// namespaceReady waits until a new namespace has what its pods need
// before the clock starts: its default ServiceAccount and the
// kube-root-ca.crt ConfigMap of their token volume, which controllers add
// a moment after the namespace is created. A tenant's namespace has them
// long before; here the direct Job, created at once, would race them and
// the composed Job, created later, would not.
func namespaceReady(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		sa, cm := &unstructured.Unstructured{}, &unstructured.Unstructured{}
		sa.SetAPIVersion("v1")
		sa.SetKind("ServiceAccount")
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		errSA := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, sa)
		errCM := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, cm)
		if errSA == nil && errCM == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s has no default ServiceAccount or kube-root-ca.crt after a minute: %v, %v", ns, errSA, errCM)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readObject reads the one object of a YAML file.
func readObject(path string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, yaml.Unmarshal(b, &u.Object)
}

// renderDirect renders the MiniCluster of the manifest file f into the
// objects the function composes, with the function input of the
// Composition the control plane runs (the node's view image is its
// platform default), as `minicluster render` does, and writes them to a
// file for kubectl. The objects lose their owner reference: it names a
// composite that does not exist here, which the garbage collector would
// take as gone and delete them.
func renderDirect(t *testing.T, cp *harness.ControlPlane, f string) string {
	t.Helper()
	ctx := context.Background()
	comp := &unstructured.Unstructured{}
	comp.SetAPIVersion("apiextensions.crossplane.io/v1")
	comp.SetKind("Composition")
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: harness.CompositionName}, comp); err != nil {
		t.Fatal(err)
	}
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	if len(steps) != 1 {
		t.Fatalf("the Composition has %d pipeline steps, want 1", len(steps))
	}
	input, err := yaml.Marshal(steps[0].(map[string]any)["input"])
	if err != nil {
		t.Fatal(err)
	}
	claim, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := driver.Run(ctx, function.New(), driver.Options{Claim: claim, Input: input, Shape: cp.Shape()})
	if err != nil {
		t.Fatal(err)
	}
	if out.Fatal {
		t.Fatalf("the function refused hello-world: %v", out.Results)
	}
	var b []byte
	for _, o := range out.Objects {
		o.SetOwnerReferences(nil)
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, "---\n"...), y...)
	}
	if len(out.Objects) != 4 {
		t.Fatalf("the function composed %d objects, want 4 (Job, Service, ConfigMap, Secret)", len(out.Objects))
	}
	p := filepath.Join(t.TempDir(), "direct.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitDone polls every 100 ms until the MiniCluster is Succeeded (the
// Job Complete for direct) and returns when it saw it, and the name of
// the claim's composite (with claims).
func waitDone(t *testing.T, cp *harness.ControlPlane, variant, ns string, mc *unstructured.Unstructured) (time.Time, string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		u := &unstructured.Unstructured{}
		var err error
		done := false
		if variant == variantDirect {
			u.SetAPIVersion("batch/v1")
			u.SetKind("Job")
			if err = cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mc.GetName()}, u); err == nil {
				st, _ := harness.Condition(u, "Complete")
				done = st == "True"
				if st, msg := harness.Condition(u, "Failed"); st == "True" {
					t.Fatalf("direct Job failed: %s", msg)
				}
			}
		} else {
			u.SetGroupVersionKind(mc.GroupVersionKind())
			if err = cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mc.GetName()}, u); err == nil {
				phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
				done = phase == "Succeeded"
				if phase == "Failed" {
					t.Fatalf("%s MiniCluster failed: %v", variant, u.Object["status"])
				}
			}
		}
		if done {
			at := time.Now()
			composite, _, _ := unstructured.NestedString(u.Object, "spec", "resourceRef", "name")
			return at, composite
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s in %s not done after 3 minutes (last error %v)", variant, ns, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// benchCleanup deletes the run's MiniCluster (so that its composite is
// gone before the namespace's content) and the namespace, and waits until
// both are gone, so that the next run has the node to itself.
func benchCleanup(t *testing.T, cp *harness.ControlPlane, variant, ns string, mc *unstructured.Unstructured) {
	t.Helper()
	if variant != variantDirect {
		mustKubectl(t, cp, "delete", "minicluster", mc.GetName(), "-n", ns, "--timeout=2m")
	}
	mustKubectl(t, cp, "delete", "namespace", ns, "--timeout=3m")
}

// ---------------------------------------------------------------- summary

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// summarize takes each variant's medians on each plane, and the shapes'
// ratios to direct on their own plane.
func summarize(runs []benchRun) []benchSummary {
	type key struct {
		v string
		p driver.Shape
	}
	var order []key
	group := map[key][]benchRun{}
	for _, r := range runs {
		k := key{r.Variant, r.Plane}
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], r)
	}
	var out []benchSummary
	for _, k := range order {
		var w, c, f, s []float64
		for _, r := range group[k] {
			w = append(w, float64(r.Writes))
			c = append(c, float64(r.CompositionRuns))
			f = append(f, float64(r.RunFunctionCalls))
			s = append(s, r.Seconds)
		}
		out = append(out, benchSummary{Variant: k.v, Plane: k.p, Writes: median(w), CompositionRuns: median(c), RunFunctionCalls: median(f), Seconds: median(s)})
	}
	for i := range out {
		if out[i].Variant == variantDirect {
			continue
		}
		for _, d := range out {
			if d.Variant == variantDirect && d.Plane == out[i].Plane && d.Writes > 0 && d.Seconds > 0 {
				out[i].WritesRatio = out[i].Writes / d.Writes
				out[i].TimeRatio = out[i].Seconds / d.Seconds
			}
		}
		out[i].TargetWrites = targetWritesClaims
		if out[i].Plane == driver.ShapeV2 {
			out[i].TargetWrites = targetWritesV2
		}
		out[i].TargetRuns, out[i].TargetTime = targetRuns, targetTime
	}
	return out
}

// benchTable prints the medians with the targets beside them, every run's
// figures, and each variant's writes by writer (medians).
func benchTable(sums []benchSummary, runs []benchRun) string {
	var b strings.Builder
	mark := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	fmt.Fprintf(&b, "%-16s %7s %-20s %-14s %6s %7s %-20s\n", "variant (plane)", "writes", "x direct (target)", "runs (target)", "calls", "time s", "x direct (target)")
	for _, s := range sums {
		name := fmt.Sprintf("%s (%s)", s.Variant, s.Plane)
		if s.Variant == variantDirect {
			fmt.Fprintf(&b, "%-16s %7.0f %-20s %-14s %6.0f %7.2f %-20s\n", name, s.Writes, "floor", "-", s.RunFunctionCalls, s.Seconds, "floor")
			continue
		}
		fmt.Fprintf(&b, "%-16s %7.0f %-20s %-14s %6.0f %7.2f %-20s\n", name, s.Writes,
			fmt.Sprintf("%.2f (<=%.1f %s)", s.WritesRatio, s.TargetWrites, mark(s.WritesRatio <= s.TargetWrites)),
			fmt.Sprintf("%.0f (<=%d %s)", s.CompositionRuns, s.TargetRuns, mark(s.CompositionRuns <= float64(s.TargetRuns))),
			s.RunFunctionCalls, s.Seconds,
			fmt.Sprintf("%.2f (<=%.1f %s)", s.TimeRatio, s.TargetTime, mark(s.TimeRatio <= s.TargetTime)))
	}
	b.WriteString("\nevery run: variant (plane) rep: seconds, writes, composition runs, RunFunction calls\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "  %s (%s) %d: %.2f s, %d writes, %d runs, %d calls\n", r.Variant, r.Plane, r.Rep, r.Seconds, r.Writes, r.CompositionRuns, r.RunFunctionCalls)
	}
	for _, s := range sums {
		per := map[string][]float64{}
		var n int
		for _, r := range runs {
			if r.Variant != s.Variant || r.Plane != s.Plane {
				continue
			}
			n++
			for k := range r.ByWriter {
				per[k] = nil
			}
		}
		for _, r := range runs {
			if r.Variant == s.Variant && r.Plane == s.Plane {
				for k := range per {
					per[k] = append(per[k], float64(r.ByWriter[k]))
				}
			}
		}
		keys := make([]string, 0, len(per))
		for k := range per {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "\nwrites of %s (%s plane) by writer, median of %d:\n", s.Variant, s.Plane, n)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-80s %5.1f\n", k, median(per[k]))
		}
	}
	return b.String()
}

// ---------------------------------------------------------------- timeline

// change is one watch event: a change the API server made to an object of
// the MiniCluster, as Crossplane's watches and informers see it (a write
// that changes nothing makes none).
type change struct {
	at                    time.Time
	kind, name, typ, what string
}

// tracer watches what the composite controller watches (the composite,
// the composed objects, the pods and Events the function requires) and the
// claim.
type tracer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	seen   []change
}

func startTracer(t *testing.T, cp *harness.ControlPlane, ns string, mc *unstructured.Unstructured) *tracer {
	t.Helper()
	dc, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := &tracer{cancel: cancel}
	gv := mc.GroupVersionKind().GroupVersion()
	type watched struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	ws := []watched{
		{gv.WithResource("miniclusters"), ns},
		{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, ns},
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ns},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, ns},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, ns},
		{schema.GroupVersionResource{Version: "v1", Resource: "events"}, ns},
	}
	if cp.Shape() != driver.ShapeV2 {
		ws = append(ws,
			watched{gv.WithResource("xminiclusters"), ""},
			// A cluster-scoped composite's Events are in namespace default.
			watched{schema.GroupVersionResource{Version: "v1", Resource: "events"}, "default"})
	}
	for _, w := range ws {
		// From the watch cache's state, whatever it is ("0"): the
		// namespace is new, so every object of the run is seen being
		// added; a watch from "now" ("") can start ahead of a kind's
		// cache and fail with "Too large resource version".
		wi, err := dc.Resource(w.gvr).Namespace(w.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			cancel()
			t.Fatalf("watch %s: %v", w.gvr, err)
		}
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			defer wi.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-wi.ResultChan():
					if !ok {
						return
					}
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok || ev.Type == watch.Error {
						tr.mu.Lock()
						tr.seen = append(tr.seen, change{at: time.Now(), kind: w.gvr.Resource, typ: string(ev.Type), what: fmt.Sprint(ev.Object)})
						tr.mu.Unlock()
						continue
					}
					if w.ns == "default" && !strings.HasPrefix(u.GetName(), mc.GetName()+"-") {
						continue // not the composite's Event
					}
					c := change{at: time.Now(), kind: u.GetKind(), name: u.GetName(), typ: string(ev.Type), what: summary(u)}
					tr.mu.Lock()
					tr.seen = append(tr.seen, c)
					tr.mu.Unlock()
				}
			}
		}()
	}
	return tr
}

func (tr *tracer) stop() []change {
	tr.cancel()
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.seen
}

// summary says in a few words what an object's status is.
func summary(u *unstructured.Unstructured) string {
	o := u.Object
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(o, path...); return s }
	num := func(path ...string) string {
		if n, ok, _ := unstructured.NestedInt64(o, path...); ok {
			return strconv.FormatInt(n, 10)
		}
		return "-"
	}
	conds := func(types ...string) string {
		var parts []string
		for _, ty := range types {
			if st, _ := harness.Condition(u, ty); st != "" {
				parts = append(parts, ty+"="+st)
			}
		}
		return strings.Join(parts, ",")
	}
	switch u.GetKind() {
	case "Pod":
		states := func(key string) string {
			cs, _, _ := unstructured.NestedSlice(o, "status", key)
			var parts []string
			for _, c := range cs {
				m, _ := c.(map[string]any)
				st, _ := m["state"].(map[string]any)
				for s := range st {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "+")
		}
		return fmt.Sprintf("node=%s phase=%s %s init=%s main=%s", str("spec", "nodeName"), str("status", "phase"),
			conds("PodScheduled", "Initialized", "Ready"), states("initContainerStatuses"), states("containerStatuses"))
	case "Job":
		return fmt.Sprintf("active=%s ready=%s succeeded=%s %s", num("status", "active"), num("status", "ready"), num("status", "succeeded"), conds("SuccessCriteriaMet", "Complete", "Failed"))
	case "MiniCluster", "XMiniCluster":
		return fmt.Sprintf("rv=%s phase=%s job.ready=%s %s", u.GetResourceVersion(), str("status", "phase"), num("status", "job", "ready"),
			conds("Synced", "Ready", "Brokers", "Finished", "Valid"))
	case "Event":
		return fmt.Sprintf("%s %s/%s count=%s", str("reason"), str("involvedObject", "kind"), str("involvedObject", "name"), num("count"))
	}
	return "rv=" + u.GetResourceVersion()
}

// kindOf is the kind of an audit write's resource, as the tracer names it.
var kindOf = map[string]string{
	"pods": "Pod", "jobs": "Job", "services": "Service", "configmaps": "ConfigMap", "secrets": "Secret",
	"events": "Event", "miniclusters": "MiniCluster", "xminiclusters": "XMiniCluster",
}

// writerOf is the write that made change c: of the writes to c's object,
// the nearest in time. The audit log stamps a write when its response is
// complete, which can be a few milliseconds after watchers saw the
// change; a create by generateName has no name in the audit log, so an
// added object may be matched by its kind alone.
func writerOf(c change, ws []harness.AuditWrite, shape driver.Shape) string {
	writer, best := "?", 100*time.Millisecond
	for _, w := range ws {
		if kindOf[w.Resource] != c.kind || (w.Name != c.name && (w.Name != "" || c.typ != string(watch.Added))) {
			continue
		}
		d := c.at.Sub(w.Time)
		if d < 0 {
			d = -d
		}
		if w.Time.After(c.at.Add(100*time.Millisecond)) || d >= best {
			continue
		}
		writer, best = harness.WriterOf(w, shape)+" "+w.Verb, d
		if w.Subresource != "" {
			writer += " " + w.Subresource
		}
	}
	return writer
}

// timeline merges the MiniCluster's writes and the changes they made, from
// apply to done, numbering the composition runs: a run starts with its
// apply of the composite's resourceRefs.
func timeline(start, done time.Time, ws []harness.AuditWrite, changes []change, shape driver.Shape) []string {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, c := range changes {
		if c.at.After(done) {
			continue
		}
		lines = append(lines, line{at: c.at, text: fmt.Sprintf("  change %-8s %s/%s by %s: %s", c.typ, c.kind, c.name, writerOf(c, ws, shape), c.what)})
	}
	runs := 0
	for _, w := range ws {
		if harness.StartsCompositionRun(w, shape) {
			runs++
			lines = append(lines, line{at: w.Time, text: fmt.Sprintf("RUN %d starts (resourceRefs apply)", runs)})
			continue
		}
		text := fmt.Sprintf("    write %s %s %s/%s", harness.WriterOf(w, shape), w.Verb, w.Resource, w.Name)
		if w.Subresource != "" {
			text += " " + w.Subresource
		}
		if w.Code >= 300 {
			text += " -> " + strconv.Itoa(w.Code)
		}
		lines = append(lines, line{at: w.Time, text: text})
	}
	// Writes complete before the watch event of the change they make:
	// at equal times the write goes first.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%6.3f %s", l.at.Sub(start).Seconds(), l.text))
	}
	return out
}

// triggers lists, for each composition run, what changed among the
// objects the composite controller watches (the composite, the composed
// objects, the pods and Events the function requires) since the previous
// run started: a change while a run is under way queues the next one,
// so one of these woke it. Then what the run changed of the composite
// (its status apply and conditions update), which wakes the next run
// itself, and with claims the claim controller.
func triggers(start, done time.Time, ws []harness.AuditWrite, changes []change, shape driver.Shape) []string {
	watched := map[string]bool{"Job": true, "Service": true, "ConfigMap": true, "Secret": true, "Pod": true, "Event": true, kindOf[harness.Composite(shape)]: true}
	var starts []time.Time
	for _, w := range ws {
		if harness.StartsCompositionRun(w, shape) {
			starts = append(starts, w.Time)
		}
	}
	rel := func(t time.Time) string { return fmt.Sprintf("%.3f", t.Sub(start).Seconds()) }
	var out []string
	// A run's first write comes a few tens of milliseconds after its
	// reconcile began (the reads, the function's call): a change just
	// before the previous run's first write may have come too late for
	// that run, and queued this one. Those are marked.
	const slack = 100 * time.Millisecond
	for i, at := range starts {
		from, prev := start, start
		if i > 0 {
			prev = starts[i-1]
			from = prev.Add(-slack)
		}
		until := done
		if i+1 < len(starts) {
			until = starts[i+1]
		}
		out = append(out, fmt.Sprintf("run %d at %s s, after:", i+1, rel(at)))
		for _, c := range changes {
			if watched[c.kind] && c.at.After(from) && c.at.Before(at) {
				late := ""
				if c.at.Before(prev) {
					late = " [just before the previous run's first write]"
				}
				out = append(out, fmt.Sprintf("    %s %s %s/%s by %s: %s%s", rel(c.at), c.typ, c.kind, c.name, writerOf(c, ws, shape), c.what, late))
			}
		}
		out = append(out, "  it changed:")
		for _, c := range changes {
			if c.kind == kindOf[harness.Composite(shape)] && !c.at.Before(at) && c.at.Before(until) {
				if wr := writerOf(c, ws, shape); strings.HasPrefix(wr, "crossplane composite") {
					out = append(out, fmt.Sprintf("    %s %s/%s by %s: %s", rel(c.at), c.kind, c.name, wr, c.what))
				}
			}
		}
	}
	return out
}
