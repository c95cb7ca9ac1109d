package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

const (
	// EnvLoadReport names a file TestLoad writes its measurements to, as JSON.
	EnvLoadReport = "MC_LOAD_REPORT"
	// EnvLoadClaims is how many MiniClusters TestLoad creates (default 100,
	// over 10 namespaces; make load-1000 sets 1000).
	EnvLoadClaims = "MC_LOAD_CLAIMS"
	// EnvLoadReady, "0", keeps the MiniClusters of TestLoad's steady-state
	// window not Ready (no kubelet plays their pods); by default the test
	// reports their pods running and ready first, as in production.
	EnvLoadReady = "MC_LOAD_READY"
	// EnvLoadShape, "v2", runs TestLoad with the Crossplane v2 shape (the
	// MiniCluster is the composite) instead of claims.
	EnvLoadShape = "MC_LOAD_SHAPE"
)

// operatorFigures is what issue #14 measured for the upstream Flux Operator
// on this kind of control plane (etcd, kube-apiserver and
// kube-controller-manager v1.34, the operator out of cluster, the same
// hello-world MiniClusters of size 4 over 10 namespaces applied at once,
// no kubelets; medians of three runs): seconds until every object exists,
// and API writes in all. The load report sets its own figures beside them.
var operatorFigures = map[int]struct {
	AllObjectsSeconds   float64
	Writes              float64
	APIServerCPUSeconds float64
}{
	1:   {AllObjectsSeconds: 0.18, Writes: 22},
	10:  {AllObjectsSeconds: 0.86, Writes: 197},
	100: {AllObjectsSeconds: 9.2, Writes: 1913, APIServerCPUSeconds: 22},
}

// Issue #14's targets: API writes per MiniCluster at most 1.5x the
// operator's with the v2 shape and 2x with claims, and the time until
// every object of 100 MiniClusters exists within 1.5x.
var targetWritesRatio = map[driver.Shape]float64{driver.ShapeClaims: 2.0, driver.ShapeV2: 1.5}

const targetTimeRatio = 1.5

// targetFunctionRSSMiB is issue #36's: the function's RSS under make load's
// 100 MiniClusters at most the whole Flux Operator's (61 MiB).
const targetFunctionRSSMiB = 61

// loadComparison sets a load run beside the operator's figures.
type loadComparison struct {
	OperatorAllObjectsSeconds float64 `json:"operatorAllObjectsSeconds"`
	OperatorWritesPerClaim    float64 `json:"operatorWritesPerClaim"`
	OperatorAPIServerCPUMsPer float64 `json:"operatorApiserverCpuMsPerClaim,omitempty"`
	// Ours divided by the operator's.
	TimeRatio       float64 `json:"timeRatio"`
	WritesRatio     float64 `json:"writesRatio"`
	TimeTarget      float64 `json:"timeTarget"`
	WritesTarget    float64 `json:"writesTarget"`
	TimeTargetMet   bool    `json:"timeTargetMet"`
	WritesTargetMet bool    `json:"writesTargetMet"`
}

// loadReport is what TestLoad measured.
type loadReport struct {
	Claims     int `json:"claims"`
	Namespaces int `json:"namespaces"`
	Size       int `json:"size"`
	// Shape is the API shape: claims or v2.
	Shape driver.Shape `json:"shape"`
	// Seconds from the first create: all claims created; every claim's
	// Job, Service, ConfigMap and Secret exist (what the operator's figure
	// measures); all claims Synced=True with those objects; and the time by
	// which half and 90% of the claims were (first seen) Synced with their
	// objects. The test polls twice a second.
	CreatedSeconds    float64 `json:"createdSeconds"`
	AllObjectsSeconds float64 `json:"allObjectsSeconds"`
	AllSyncedSeconds  float64 `json:"allSyncedSeconds"`
	P50Seconds        float64 `json:"p50Seconds"`
	P90Seconds        float64 `json:"p90Seconds"`
	// The function process while the claims converged: CPU (user+system)
	// and RunFunction calls answered; its resident memory at the end and
	// its peak (VmHWM; the process started with this control plane).
	FunctionCPUSeconds   float64 `json:"functionCpuSeconds"`
	FunctionCalls        int64   `json:"functionCalls"`
	FunctionCPUPerCallMs float64 `json:"functionCpuPerCallMs"`
	FunctionRSSMiB       float64 `json:"functionRssMiB"`
	FunctionPeakRSSMiB   float64 `json:"functionPeakRssMiB"`
	// The function's RSS split into anonymous memory (heap, stacks) and
	// file pages (its binary), and what holds its live heap: a heap
	// profile of its --pprof-address taken with the other figures, after
	// a collection. The profile itself is written beside the report
	// (<report>.heap.pb.gz) for go tool pprof.
	FunctionRSSAnonMiB   float64          `json:"functionRssAnonMiB"`
	FunctionRSSFileMiB   float64          `json:"functionRssFileMiB"`
	FunctionHeapLiveMiB  float64          `json:"functionHeapLiveMiB"`
	FunctionHeapByModule []harness.Holder `json:"functionHeapByModule"`
	FunctionHeapTop      []harness.Holder `json:"functionHeapTop"`
	FunctionRSSTargetMiB float64          `json:"functionRssTargetMiB"`
	FunctionRSSTargetMet bool             `json:"functionRssTargetMet"`
	// CPU seconds of the other processes meanwhile, for context.
	CrossplaneCPUSeconds float64 `json:"crossplaneCpuSeconds"`
	APIServerCPUSeconds  float64 `json:"apiserverCpuSeconds"`
	EtcdCPUSeconds       float64 `json:"etcdCpuSeconds"`
	KCMCPUSeconds        float64 `json:"kubeControllerManagerCpuSeconds"`
	// kube-apiserver CPU per MiniCluster while they converged.
	APIServerCPUMsPerClaim float64 `json:"apiserverCpuMsPerClaim"`
	CrossplaneRSSMiB       float64 `json:"crossplaneRssMiB"`
	CrossplanePeakRSSMiB   float64 `json:"crossplanePeakRssMiB"`
	CPUs                   int     `json:"cpus"`
	// API server requests per claim meanwhile, by "VERB group/resource",
	// for the claims, the composites and the composed objects: where the
	// API server's time went.
	RequestsPerClaim map[string]float64 `json:"apiserverRequestsPerClaim"`
	// Writes while the claims converged, per claim: by writer, verb and
	// resource (the audit log) and what reached etcd; and, with
	// $MC_LOAD_STEADY, in the steady-state window after, per minute.
	CrossplaneFlags          []string           `json:"crossplaneFlags"`
	WritesPerClaim           float64            `json:"writesPerClaim"`
	CrossplaneWritesPerClaim float64            `json:"crossplaneWritesPerClaim"`
	WritesPerClaimByWriter   map[string]float64 `json:"writesPerClaimByWriter"`
	EtcdWritesPerClaim       map[string]float64 `json:"etcdWritesPerClaim"`
	SteadySeconds            float64            `json:"steadySeconds,omitempty"`
	SteadyPerMinuteByWriter  map[string]float64 `json:"steadyWritesPerMinuteByWriter,omitempty"`
	SteadyEtcdPerMinute      map[string]float64 `json:"steadyEtcdWritesPerMinute,omitempty"`
	SteadyCrossplanePerMin   float64            `json:"steadyCrossplaneWritesPerMinute"`
	SteadyFunctionCalls      int64              `json:"steadyFunctionCalls"`
	// Crossplane's writes in each minute of the steady window.
	SteadyCrossplaneByMinute []float64 `json:"steadyCrossplaneWritesByMinute,omitempty"`
	// Whether the MiniClusters were Ready (their pods reported running
	// and ready) in the steady-state window.
	SteadyReady bool `json:"steadyReady,omitempty"`
	// Composites whose watch circuit breaker was open (Responsive=False)
	// when the steady window began: the function has each of them
	// recomposed every 30 s until it closes (function.WatchesDroppedTTL),
	// which costs writes in the window.
	SteadyBreakerOpen int `json:"steadyBreakerOpen"`
	// Writes per claim while the MiniClusters became Ready (pods reported
	// running and ready), between convergence and the steady window.
	ReadyWritesPerClaim         float64            `json:"readyWritesPerClaim,omitempty"`
	ReadyWritesPerClaimByWriter map[string]float64 `json:"readyWritesPerClaimByWriter,omitempty"`
	// The operator's figures for as many MiniClusters, if issue #14 has
	// them, and how this run compares with the targets.
	Operator *loadComparison `json:"operator,omitempty"`
}

// TestLoad measures the real control plane under 100 hello-world claims
// (size 4) across 10 tenant namespaces, applied at once: the time until
// every claim is Synced with its four composed objects present, and what
// the function process used meanwhile. It runs on a control plane of its
// own, with Crossplane's default settings (nothing tuned), so the numbers
// are the function's and Crossplane's alone. The summary goes to the test
// log and, as JSON, to $MC_LOAD_REPORT. It fails only if the claims do not
// converge within 4 minutes. It also counts the API writes while the
// claims converge (by writer, verb and resource, from the API server's
// audit log; and what reached etcd), and with $MC_LOAD_STEADY (e.g. 5m)
// the writes a minute in that window after they converged. Crossplane's
// flags can be set with $MC_CROSSPLANE_FLAGS.
func TestLoad(t *testing.T) {
	requireE2E(t)
	if testing.Short() {
		t.Skip("-short: the load test takes about a minute")
	}
	claimsN := 100
	if v := os.Getenv(EnvLoadClaims); v != "" {
		if _, err := fmt.Sscan(v, &claimsN); err != nil || claimsN < 1 {
			t.Fatalf("$%s=%q: want a positive number", EnvLoadClaims, v)
		}
	}
	namespaces := min(10, claimsN)
	const size = 4
	// 100 MiniClusters converge in well under a minute on an idle 2-core
	// machine; the time allowed grows with their number.
	timeout := max(4*time.Minute, time.Duration(claimsN)*3*time.Second)
	steady := envDuration(t, EnvLoadSteady, 0)
	playKubelet := os.Getenv(EnvLoadReady) != "0"
	shape := envShape(t, EnvLoadShape)
	cp := startOwnControlPlane(t, harness.Options{Name: "load", AuditWrites: true, CrossplaneFlags: crossplaneFlags(), Shape: shape})
	var nss []string
	for i := range namespaces {
		ns := fmt.Sprintf("load-%02d", i)
		createNamespace(t, cp, ns)
		nss = append(nss, ns)
	}
	claims := make([]*unstructured.Unstructured, 0, claimsN)
	for i := range claimsN {
		c := exampleClaim(t, cp, helloWorld, nss[i%namespaces], fmt.Sprintf("mc-%03d", i/namespaces))
		if err := unstructured.SetNestedField(c.Object, int64(size), "spec", "size"); err != nil {
			t.Fatal(err)
		}
		claims = append(claims, c)
	}

	pids := cp.Pids()
	usage := func() map[string]harness.Usage {
		m := map[string]harness.Usage{}
		for name, pid := range pids {
			u, err := harness.ProcessUsage(pid)
			if err != nil {
				t.Fatalf("%s (pid %d): %v", name, pid, err)
			}
			m[name] = u
		}
		return m
	}
	calls0, err := cp.RunFunctionCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req0, err := cp.APIServerRequests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := usage()
	meter := newWriteMeter(t, cp)

	// Apply every claim at once, a namespace per goroutine, as ten tenants
	// (or a GitOps sync) would.
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(claims))
	for _, ns := range nss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range claims {
				if c.GetNamespace() != ns {
					continue
				}
				if err := cp.Client.Create(context.Background(), c.DeepCopy()); err != nil {
					errs <- fmt.Errorf("cannot create MiniCluster %s/%s: %w", ns, c.GetName(), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	created := time.Since(start)
	t.Logf("created %d claims in %s", len(claims), created.Round(10*time.Millisecond))

	// Poll with one list per kind (not a GET per object): a claim is done
	// when it is Synced=True and its four objects exist.
	doneAt, objectsAt := map[string]time.Duration{}, map[string]time.Duration{}
	var missing []string
	lastLog := time.Duration(0)
	for {
		missing = loadProgress(t, cp, claims, doneAt, objectsAt, time.Since(start))
		if len(missing) == 0 {
			break
		}
		if el := time.Since(start); el-lastLog >= 5*time.Second {
			lastLog = el
			t.Logf("after %s: %d of %d claims done; e.g. %s", el.Round(time.Second), len(doneAt), len(claims), missing[0])
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %s, %d of %d claims are not Synced with their objects, e.g. %s", timeout, len(missing), len(claims), strings.Join(missing[:min(5, len(missing))], "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
	all := time.Since(start)
	var allObjects time.Duration
	for _, d := range objectsAt {
		allObjects = max(allObjects, d)
	}
	// A claim is done when Synced with its objects, but the job
	// controller may still be creating pods, and every Job status change
	// re-runs the composition: the MiniClusters have converged (what the
	// operator's figures count) when every Job has all its pods (active ==
	// size) and the last status writes are done.
	eventually(t, timeout, "every Job has all its pods", func() error {
		jobs := &batchv1.JobList{}
		if err := cp.Client.List(context.Background(), jobs, client.HasLabels{labelComposite}); err != nil {
			return err
		}
		short := 0
		for _, j := range jobs.Items {
			if j.Status.Active < size {
				short++
			}
		}
		if short > 0 || len(jobs.Items) < len(claims) {
			return fmt.Errorf("%d of %d Jobs lack pods", short+len(claims)-len(jobs.Items), len(claims))
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	after := usage()
	heap, err := cp.FunctionHeap(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	calls1, err := cp.RunFunctionCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req1, err := cp.APIServerRequests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conv := meter.since(t)
	perClaim := map[string]float64{}
	for k, v := range req1 {
		if d := v - req0[k]; d > 0 && !strings.HasPrefix(k, "LIST ") && !strings.HasPrefix(k, "WATCH ") &&
			(strings.Contains(k, "flux-framework.org/") || strings.Contains(k, " /pods") || strings.Contains(k, "batch/jobs") ||
				strings.Contains(k, " /services") || strings.Contains(k, " /configmaps") || strings.Contains(k, " /secrets") || strings.Contains(k, " /events")) {
			perClaim[k] = float64(int(d/float64(len(claims))*10)) / 10
		}
	}

	lat := make([]time.Duration, 0, len(doneAt))
	for _, d := range doneAt {
		lat = append(lat, d)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))].Seconds() }
	cpu := func(name string) float64 { return (after[name].CPU - before[name].CPU).Seconds() }
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	r := loadReport{
		Claims: len(claims), Namespaces: namespaces, Size: size, Shape: shape,
		CreatedSeconds: created.Seconds(), AllObjectsSeconds: allObjects.Seconds(), AllSyncedSeconds: all.Seconds(), P50Seconds: pct(0.5), P90Seconds: pct(0.9),
		FunctionCPUSeconds: cpu("function"), FunctionCalls: calls1 - calls0,
		FunctionRSSMiB: mib(after["function"].RSS), FunctionPeakRSSMiB: mib(after["function"].PeakRSS),
		FunctionRSSAnonMiB: mib(after["function"].RSSAnon), FunctionRSSFileMiB: mib(after["function"].RSSFile),
		FunctionHeapLiveMiB: heap.LiveMiB, FunctionHeapByModule: heap.ByModule[:min(8, len(heap.ByModule))], FunctionHeapTop: heap.Top,
		FunctionRSSTargetMiB: targetFunctionRSSMiB, FunctionRSSTargetMet: mib(after["function"].RSS) <= targetFunctionRSSMiB,
		CrossplaneCPUSeconds: cpu("crossplane"), APIServerCPUSeconds: cpu("kube-apiserver"), EtcdCPUSeconds: cpu("etcd"),
		KCMCPUSeconds: cpu("kube-controller-manager"), APIServerCPUMsPerClaim: cpu("kube-apiserver") * 1000 / float64(len(claims)),
		CrossplaneRSSMiB: mib(after["crossplane"].RSS), CrossplanePeakRSSMiB: mib(after["crossplane"].PeakRSS),
		CPUs: runtime.NumCPU(), RequestsPerClaim: perClaim,
		CrossplaneFlags: cp.Options().CrossplaneFlags, WritesPerClaim: conv.Total / float64(len(claims)),
		CrossplaneWritesPerClaim: conv.Crossplane / float64(len(claims)),
		WritesPerClaimByWriter:   scaled(conv.ByWriter, float64(len(claims))), EtcdWritesPerClaim: scaled(conv.Etcd, float64(len(claims))),
	}
	if op, ok := operatorFigures[len(claims)]; ok {
		n := float64(len(claims))
		c := &loadComparison{
			OperatorAllObjectsSeconds: op.AllObjectsSeconds, OperatorWritesPerClaim: op.Writes / n,
			OperatorAPIServerCPUMsPer: op.APIServerCPUSeconds * 1000 / n,
			TimeRatio:                 r.AllObjectsSeconds / op.AllObjectsSeconds, WritesRatio: r.WritesPerClaim / (op.Writes / n),
			TimeTarget: targetTimeRatio, WritesTarget: targetWritesRatio[shape],
		}
		c.TimeTargetMet, c.WritesTargetMet = c.TimeRatio <= c.TimeTarget, c.WritesRatio <= c.WritesTarget
		r.Operator = c
	}
	if steady > 0 {
		// Unless $MC_LOAD_READY=0, the steady state starts when every
		// MiniCluster is Ready, its pods reported running and ready as a
		// kubelet would.
		if playKubelet {
			r.SteadyReady = true
			eventually(t, timeout, "every MiniCluster is Ready", func() error {
				for _, ns := range nss {
					if _, err := cp.MarkPodsReady(context.Background(), ns, nil); err != nil {
						return err
					}
				}
				return allReady(t, cp, claims)
			})
			// Settle a few seconds: the last claims' final status writes.
			time.Sleep(5 * time.Second)
			ready := meter.since(t)
			r.ReadyWritesPerClaim = ready.Total / float64(len(claims))
			r.ReadyWritesPerClaimByWriter = scaled(ready.ByWriter, float64(len(claims)))
			t.Logf("load: writes per claim while the MiniClusters became Ready: %.1f:\n  %s", r.ReadyWritesPerClaim, topEntries(r.ReadyWritesPerClaimByWriter, 20))
		}
		calls2, err := cp.RunFunctionCalls(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.SteadyBreakerOpen, err = breakersOpen(cp, shape); err != nil {
			t.Fatal(err)
		}
		t.Logf("load: converged; measuring the steady state for %s (%d composites with Responsive=False)", steady, r.SteadyBreakerOpen)
		// Minute by minute, to tell a backlog draining (Crossplane's
		// event recorder still writing what it queued while the
		// MiniClusters converged) from a steady rate.
		var st writesPhase
		for left := steady; left > 0; left -= time.Minute {
			time.Sleep(min(left, time.Minute))
			m := meter.since(t)
			r.SteadyCrossplaneByMinute = append(r.SteadyCrossplaneByMinute, m.Crossplane)
			st = st.plus(m)
		}
		calls3, err := cp.RunFunctionCalls(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mins := st.Seconds / 60
		r.SteadySeconds, r.SteadyPerMinuteByWriter, r.SteadyEtcdPerMinute = st.Seconds, scaled(st.ByWriter, mins), scaled(st.Etcd, mins)
		r.SteadyCrossplanePerMin, r.SteadyFunctionCalls = st.Crossplane/mins, calls3-calls2
		t.Logf("load: steady state, %.0fs: %.1f writes a minute by Crossplane (minute by minute: %v), %.1f in all; %d RunFunction calls; per minute:\n  %s",
			st.Seconds, r.SteadyCrossplanePerMin, r.SteadyCrossplaneByMinute, st.Total/mins, r.SteadyFunctionCalls, topEntries(r.SteadyPerMinuteByWriter, 20))
	}
	if r.FunctionCalls > 0 {
		r.FunctionCPUPerCallMs = r.FunctionCPUSeconds * 1000 / float64(r.FunctionCalls)
	}
	t.Logf("load: %d claims (size %d, %d namespaces) created in %.1fs, every object exists after %.1fs, all Synced with 4 objects in %.1fs (p50 %.1fs, p90 %.1fs); "+
		"function: %.2fs CPU for %d RunFunction calls (%.2f ms/call), RSS %.1f MiB, peak %.1f MiB; "+
		"CPU meanwhile: crossplane %.1fs (peak RSS %.0f MiB), kube-apiserver %.1fs, etcd %.1fs, kube-controller-manager %.1fs; %d CPUs",
		r.Claims, r.Size, r.Namespaces, r.CreatedSeconds, r.AllObjectsSeconds, r.AllSyncedSeconds, r.P50Seconds, r.P90Seconds,
		r.FunctionCPUSeconds, r.FunctionCalls, r.FunctionCPUPerCallMs, r.FunctionRSSMiB, r.FunctionPeakRSSMiB,
		r.CrossplaneCPUSeconds, r.CrossplanePeakRSSMiB, r.APIServerCPUSeconds, r.EtcdCPUSeconds, r.KCMCPUSeconds, r.CPUs)
	keys := make([]string, 0, len(perClaim))
	for k := range perClaim {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return int(perClaim[b]*10 - perClaim[a]*10) })
	var top []string
	for _, k := range keys[:min(10, len(keys))] {
		top = append(top, fmt.Sprintf("%s %.1f", k, perClaim[k]))
	}
	t.Logf("load: API server requests per claim: %s", strings.Join(top, ", "))
	t.Logf("load: writes per claim while converging: %.1f, of which Crossplane %.1f:\n  %s", r.WritesPerClaim, r.CrossplaneWritesPerClaim, topEntries(r.WritesPerClaimByWriter, 30))
	t.Logf("load: kube-apiserver %.0f ms CPU per MiniCluster; Crossplane RSS %.0f MiB (peak %.0f), function RSS %.0f MiB (peak %.0f)",
		r.APIServerCPUMsPerClaim, r.CrossplaneRSSMiB, r.CrossplanePeakRSSMiB, r.FunctionRSSMiB, r.FunctionPeakRSSMiB)
	t.Logf("load: function RSS %.1f MiB (target %.0f: %s) = %.1f anonymous + %.1f file pages; live heap %.1f MiB, by module: %v; top: %v",
		r.FunctionRSSMiB, r.FunctionRSSTargetMiB, met(r.FunctionRSSTargetMet), r.FunctionRSSAnonMiB, r.FunctionRSSFileMiB,
		r.FunctionHeapLiveMiB, r.FunctionHeapByModule, r.FunctionHeapTop)
	if c := r.Operator; c != nil {
		t.Logf("load: against the Flux Operator (issue #14's figures for %d): every object after %.1fs vs %.1fs (%.1fx, target %.1fx: %s); "+
			"%.1f API writes per MiniCluster vs %.1f (%.1fx, target %.1fx with %s: %s)",
			r.Claims, r.AllObjectsSeconds, c.OperatorAllObjectsSeconds, c.TimeRatio, c.TimeTarget, met(c.TimeTargetMet),
			r.WritesPerClaim, c.OperatorWritesPerClaim, c.WritesRatio, c.WritesTarget, shape, met(c.WritesTargetMet))
	}
	if path := os.Getenv(EnvLoadReport); path != "" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		profile := strings.TrimSuffix(path, ".json") + ".heap.pb.gz"
		if err := os.WriteFile(profile, heap.Profile, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s and the function's heap profile %s (go tool pprof -top %s)", path, profile, profile)
	}
}

// loadProgress records in doneAt (by namespace/name) the claims that are
// now Synced=True with their Job, Service, ConfigMap and Secret, and
// returns what the others still lack.
func loadProgress(t *testing.T, cp *harness.ControlPlane, claims []*unstructured.Unstructured, doneAt, objectsAt map[string]time.Duration, now time.Duration) []string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exists := map[string]bool{} // "kind ns/name"
	lists := []struct {
		kind string
		list client.ObjectList
	}{
		{"Job", &batchv1.JobList{}}, {"Service", &corev1.ServiceList{}},
		{"ConfigMap", &corev1.ConfigMapList{}}, {"Secret", &corev1.SecretList{}},
	}
	for _, l := range lists {
		// Only what Crossplane composed.
		if err := cp.Client.List(c, l.list, client.HasLabels{labelComposite}); err != nil {
			t.Logf("listing %ss: %v", l.kind, err)
			return []string{"(list failed)"}
		}
		switch v := l.list.(type) {
		case *batchv1.JobList:
			for _, o := range v.Items {
				exists["Job "+o.Namespace+"/"+o.Name] = true
			}
		case *corev1.ServiceList:
			for _, o := range v.Items {
				exists["Service "+o.Namespace+"/"+o.Name] = true
			}
		case *corev1.ConfigMapList:
			for _, o := range v.Items {
				exists["ConfigMap "+o.Namespace+"/"+o.Name] = true
			}
		case *corev1.SecretList:
			for _, o := range v.Items {
				exists["Secret "+o.Namespace+"/"+o.Name] = true
			}
		}
	}
	got := &unstructured.UnstructuredList{}
	got.SetGroupVersionKind(claimGVK.GroupVersion().WithKind(claimGVK.Kind + "List"))
	if err := cp.Client.List(c, got); err != nil {
		t.Logf("listing claims: %v", err)
		return []string{"(list failed)"}
	}
	synced := map[string]string{}
	for i := range got.Items {
		st, msg := condition(&got.Items[i], "Synced")
		synced[got.Items[i].GetNamespace()+"/"+got.Items[i].GetName()] = st + " " + msg
	}
	var missing []string
	for _, cl := range claims {
		key := cl.GetNamespace() + "/" + cl.GetName()
		if _, ok := doneAt[key]; ok {
			continue
		}
		var lack []string
		for _, o := range []string{"Job " + key, "Service " + key, "ConfigMap " + key + "-entrypoint", "Secret " + key + "-curve-cert"} {
			if !exists[o] {
				lack = append(lack, "no "+strings.Fields(o)[0])
			}
		}
		if _, ok := objectsAt[key]; !ok && len(lack) == 0 && objectsAt != nil {
			objectsAt[key] = now
		}
		if s := synced[key]; !strings.HasPrefix(s, "True") {
			lack = append(lack, "Synced="+s)
		}
		if len(lack) == 0 {
			doneAt[key] = now
			continue
		}
		missing = append(missing, key+": "+strings.Join(lack, ", "))
	}
	return missing
}

// labelComposite is the label Crossplane sets on every object it composes,
// naming the composite: in both API shapes.
const labelComposite = "crossplane.io/composite"

// allReady returns an error naming the claims that are not Ready=True.
func allReady(t *testing.T, cp *harness.ControlPlane, claims []*unstructured.Unstructured) error {
	t.Helper()
	got := &unstructured.UnstructuredList{}
	got.SetGroupVersionKind(claimGVK.GroupVersion().WithKind(claimGVK.Kind + "List"))
	if err := cp.Client.List(context.Background(), got); err != nil {
		return err
	}
	ready := map[string]bool{}
	for i := range got.Items {
		if st, _ := condition(&got.Items[i], "Ready"); st == "True" {
			ready[got.Items[i].GetNamespace()+"/"+got.Items[i].GetName()] = true
		}
	}
	var not []string
	for _, c := range claims {
		if key := c.GetNamespace() + "/" + c.GetName(); !ready[key] {
			not = append(not, key)
		}
	}
	if len(not) > 0 {
		return fmt.Errorf("%d of %d MiniClusters are not Ready, e.g. %s", len(not), len(claims), not[0])
	}
	return nil
}

// breakersOpen counts the composites whose Responsive condition is False:
// Crossplane's circuit breaker drops their watch events.
func breakersOpen(cp *harness.ControlPlane, shape driver.Shape) (int, error) {
	gvk := claimGVK
	if shape == driver.ShapeClaims {
		gvk = compositeGVK
	}
	got := &unstructured.UnstructuredList{}
	got.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := cp.Client.List(context.Background(), got); err != nil {
		return 0, err
	}
	n := 0
	for i := range got.Items {
		if st, _ := condition(&got.Items[i], "Responsive"); st == "False" {
			n++
		}
	}
	return n, nil
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
