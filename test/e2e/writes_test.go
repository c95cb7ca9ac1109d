package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Environment of TestWrites (and of TestLoad's steady-state window).
const (
	// EnvWritesReport names a file TestWrites writes its report to, as JSON.
	EnvWritesReport = "MC_WRITES_REPORT"
	// EnvWritesClaims is how many claims TestWrites creates (default 10).
	EnvWritesClaims = "MC_WRITES_CLAIMS"
	// EnvWritesShape, "v2", runs TestWrites with the Crossplane v2 shape
	// (the MiniCluster is the composite) instead of claims.
	EnvWritesShape = "MC_WRITES_SHAPE"
	// EnvWritesSteady is TestWrites' steady-state window after the claims
	// converged, a Go duration (default 70s: long enough to see a
	// 1-minute poll).
	EnvWritesSteady = "MC_WRITES_STEADY"
	// EnvLoadSteady is TestLoad's (default 0: none; "5m" measures the
	// issue's window).
	EnvLoadSteady = "MC_LOAD_STEADY"
	// EnvCrossplaneFlags are extra flags of `crossplane core start`,
	// separated by spaces, for TestWrites and TestLoad, e.g.
	// "--poll-interval=10m --max-reconcile-rate=10".
	EnvCrossplaneFlags = "MC_CROSSPLANE_FLAGS"
)

// writesPhase is what was written in one phase (convergence or steady
// state): the API server's write requests, what reached etcd, and who
// wrote, from the audit log.
type writesPhase struct {
	Seconds float64 `json:"seconds"`
	// Requests are apiserver_request_total's write verbs (POST, PUT, PATCH,
	// DELETE, APPLY) by "VERB group/resource[/subresource]".
	Requests map[string]float64 `json:"requests"`
	// Etcd are the writes that changed something: etcd_requests_total's
	// create, update and delete by "operation group/resource". A request
	// that changes nothing is answered without one.
	Etcd map[string]float64 `json:"etcd"`
	// ByWriter is the audit log's writes by "writer verb group/resource[/sub]";
	// the writer is crossplane (its composite controller's applies of
	// composed objects named so), kube-controller-manager, or test (the
	// test itself, playing the kubelet).
	ByWriter map[string]float64 `json:"byWriter"`
	// Totals: every write request, and those of Crossplane (which writes
	// what the function returns).
	Total      float64 `json:"total"`
	Crossplane float64 `json:"crossplane"`
}

// plus is p and q together, as if measured over both their windows.
func (p writesPhase) plus(q writesPhase) writesPhase {
	add := func(a, b map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for _, m := range []map[string]float64{a, b} {
			for k, v := range m {
				out[k] += v
			}
		}
		return out
	}
	return writesPhase{
		Seconds: p.Seconds + q.Seconds, Requests: add(p.Requests, q.Requests), Etcd: add(p.Etcd, q.Etcd),
		ByWriter: add(p.ByWriter, q.ByWriter), Total: p.Total + q.Total, Crossplane: p.Crossplane + q.Crossplane,
	}
}

// writesReport is what TestWrites measured.
type writesReport struct {
	Claims          int          `json:"claims"`
	Shape           driver.Shape `json:"shape"`
	CrossplaneFlags []string     `json:"crossplaneFlags"`
	// ConvergedSeconds from the first create until every claim was Synced
	// and Ready with its four objects.
	ConvergedSeconds float64 `json:"convergedSeconds"`
	// Convergence runs from the first create until SettleSeconds after
	// convergence; Steady is the window after it. PerClaim is Convergence
	// divided by the claims; PerMinute is Steady per minute.
	SettleSeconds      float64            `json:"settleSeconds"`
	Convergence        writesPhase        `json:"convergence"`
	Steady             writesPhase        `json:"steady"`
	PerClaimByWriter   map[string]float64 `json:"perClaimByWriter"`
	PerClaimEtcd       map[string]float64 `json:"perClaimEtcd"`
	SteadyPerMinute    map[string]float64 `json:"steadyPerMinuteByWriter"`
	SteadyCrossplaneVM float64            `json:"steadyCrossplaneWritesPerMinute"`
	FunctionCalls      int64              `json:"functionCalls"`
	SteadyFunctionCall int64              `json:"steadyFunctionCalls"`
}

// crossplaneFlags are the extra flags of crossplane core start from
// $MC_CROSSPLANE_FLAGS.
func crossplaneFlags() []string { return strings.Fields(os.Getenv(EnvCrossplaneFlags)) }

// envDuration is a duration from the environment, or def.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("$%s: %v", name, err)
	}
	return d
}

// writeMeter counts writes from a point in time.
type writeMeter struct {
	cp   *harness.ControlPlane
	at   time.Time
	req  map[string]float64
	etcd map[string]float64
}

func newWriteMeter(t *testing.T, cp *harness.ControlPlane) *writeMeter {
	t.Helper()
	m := &writeMeter{cp: cp, at: time.Now()}
	var err error
	if m.req, err = cp.APIServerRequests(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.etcd, err = cp.EtcdWrites(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// isWriteVerb says whether an apiserver_request_total verb writes.
func isWriteVerb(v string) bool {
	v, _, _ = strings.Cut(v, "(")
	switch v {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return true
	}
	return false
}

// since is what was written between m and now (which becomes m's start).
func (m *writeMeter) since(t *testing.T) writesPhase {
	t.Helper()
	now := newWriteMeter(t, m.cp)
	p := writesPhase{Seconds: now.at.Sub(m.at).Seconds(), Requests: map[string]float64{}, Etcd: map[string]float64{}, ByWriter: map[string]float64{}}
	for k, v := range now.req {
		verb, _, _ := strings.Cut(k, " ")
		if d := v - m.req[k]; d > 0 && isWriteVerb(verb) {
			p.Requests[k] = d
			p.Total += d
		}
	}
	for k, v := range now.etcd {
		if d := v - m.etcd[k]; d > 0 {
			p.Etcd[k] = d
		}
	}
	if m.cp.Options().AuditWrites {
		ws, err := m.cp.AuditWrites(context.Background(), m.at, now.at)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			key := w.Writer() + " " + w.Verb + " " + w.Group + "/" + w.Resource
			if w.Subresource != "" {
				key += "/" + w.Subresource
			}
			if w.DryRun {
				key += " (dry run)"
			}
			p.ByWriter[key]++
			if w.User == "crossplane" {
				p.Crossplane++
			}
		}
	}
	*m = *now
	return p
}

// scaled is m with every value divided by d, to one decimal.
func scaled(m map[string]float64, d float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(int(v/d*100+0.5)) / 100
	}
	return out
}

// topEntries is m's largest entries, "key value" each, for the log.
func topEntries(m map[string]float64, n int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, fmt.Sprintf("%s: %g", k, m[k]))
	}
	return strings.Join(out, "\n  ")
}

// TestWrites counts the API writes that make MiniClusters converge and
// the writes once they have: $MC_WRITES_CLAIMS hello-world claims (default
// 10, size 4, two namespaces) on a control plane of its own with audit
// logging, the test playing the kubelet so that every MiniCluster runs
// (Ready), then a steady-state window ($MC_WRITES_STEADY, default 70s). Writes are
// broken down by resource and verb (the API server's counters), by writer
// (its audit log), and by what reached etcd; the report goes to the log
// and, as JSON, to $MC_WRITES_REPORT. Crossplane's flags come from
// $MC_CROSSPLANE_FLAGS.
//
// It fails if Crossplane writes anything about a converged, unchanged
// MiniCluster in the steady window: with the function's long TTL nothing
// re-runs the composition (realtime compositions see every change).
func TestWrites(t *testing.T) {
	requireE2E(t)
	if testing.Short() {
		t.Skip("-short: the writes test takes about two minutes")
	}
	claimsN := 10
	if v := os.Getenv(EnvWritesClaims); v != "" {
		if _, err := fmt.Sscan(v, &claimsN); err != nil || claimsN < 1 {
			t.Fatalf("$%s=%q: want a positive number", EnvWritesClaims, v)
		}
	}
	steady := envDuration(t, EnvWritesSteady, 70*time.Second)
	const settle = 5 * time.Second
	const size = 4
	flags := crossplaneFlags()
	shape := envShape(t, EnvWritesShape)
	cp := startOwnControlPlane(t, harness.Options{Name: "writes", AuditWrites: true, CrossplaneFlags: flags, Shape: shape})
	nss := []string{"writes-a", "writes-b"}
	for _, ns := range nss {
		createNamespace(t, cp, ns)
	}
	var claims []*unstructured.Unstructured
	for i := range claimsN {
		c := exampleClaim(t, cp, helloWorld, nss[i%len(nss)], fmt.Sprintf("mc-%02d", i))
		if err := unstructured.SetNestedField(c.Object, int64(size), "spec", "size"); err != nil {
			t.Fatal(err)
		}
		claims = append(claims, c)
	}

	calls0, err := cp.RunFunctionCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(EnvWritesTrace) != "" {
		tctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		traceChanges(tctx, t, cp, claims[0].GetNamespace(), claims[0].GetName())
	}
	meter := newWriteMeter(t, cp)
	start := time.Now()
	for _, c := range claims {
		if err := cp.Client.Create(context.Background(), c.DeepCopy()); err != nil {
			t.Fatalf("cannot create MiniCluster %s/%s: %v", c.GetNamespace(), c.GetName(), err)
		}
	}
	// Converged: every claim Synced and Ready, with its four objects. The
	// test is the kubelet: pods it sees are reported running and ready.
	doneAt := map[string]time.Duration{}
	lastLog := time.Duration(0)
	for {
		for _, ns := range nss {
			if _, err := cp.MarkPodsReady(context.Background(), ns, nil); err != nil {
				t.Logf("marking pods ready: %v", err)
			}
		}
		missing := loadProgress(t, cp, claims, doneAt, nil, time.Since(start))
		for _, c := range claims {
			key := c.GetNamespace() + "/" + c.GetName()
			if _, ok := doneAt[key]; !ok {
				continue
			}
			got := newClaim(c.GetNamespace(), c.GetName())
			if err := cp.Client.Get(context.Background(), client.ObjectKeyFromObject(c), got); err != nil {
				missing = append(missing, key+": "+err.Error())
				delete(doneAt, key)
				continue
			}
			if st, msg := condition(got, "Ready"); st != "True" {
				missing = append(missing, key+": Ready="+st+" "+msg)
				delete(doneAt, key)
			}
		}
		if len(missing) == 0 {
			break
		}
		if el := time.Since(start); el-lastLog >= 10*time.Second {
			lastLog = el
			t.Logf("after %s: %d of %d claims not converged, e.g. %s", el.Round(time.Second), len(missing), len(claims), missing[0])
		}
		if time.Since(start) > 4*time.Minute {
			t.Fatalf("after 4 minutes, %d of %d claims have not converged, e.g. %s", len(missing), len(claims), strings.Join(missing[:min(5, len(missing))], "; "))
		}
		time.Sleep(time.Second)
	}
	converged := time.Since(start)
	t.Logf("writes: %d claims Synced and Ready in %.1fs", len(claims), converged.Seconds())
	time.Sleep(settle)
	calls1, err := cp.RunFunctionCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conv := meter.since(t)
	time.Sleep(steady)
	calls2, err := cp.RunFunctionCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st := meter.since(t)

	n := float64(len(claims))
	r := writesReport{
		Claims: len(claims), Shape: shape, CrossplaneFlags: flags, ConvergedSeconds: converged.Seconds(), SettleSeconds: settle.Seconds(),
		Convergence: conv, Steady: st,
		PerClaimByWriter: scaled(conv.ByWriter, n), PerClaimEtcd: scaled(conv.Etcd, n),
		SteadyPerMinute: scaled(st.ByWriter, st.Seconds/60), SteadyCrossplaneVM: st.Crossplane / (st.Seconds / 60),
		FunctionCalls: calls1 - calls0, SteadyFunctionCall: calls2 - calls1,
	}
	t.Logf("writes: convergence, per claim (%.0f writes, %.1f per claim, of which Crossplane %.1f; %d RunFunction calls):\n  %s",
		conv.Total, conv.Total/n, conv.Crossplane/n, r.FunctionCalls, topEntries(r.PerClaimByWriter, 30))
	t.Logf("writes: convergence, etcd writes per claim:\n  %s", topEntries(r.PerClaimEtcd, 30))
	t.Logf("writes: steady state, %.0fs (%.0f writes, Crossplane %.1f per minute; %d RunFunction calls):\n  %s",
		st.Seconds, st.Total, r.SteadyCrossplaneVM, r.SteadyFunctionCall, topEntries(st.ByWriter, 30))
	writeReport(t, os.Getenv(EnvWritesReport), r)

	var bad []string
	for k, v := range st.ByWriter {
		if strings.HasPrefix(k, "crossplane") && !strings.Contains(k, "/events") {
			bad = append(bad, fmt.Sprintf("%s: %g", k, v))
		}
	}
	if len(bad) > 0 && steady > 0 {
		slices.Sort(bad)
		t.Errorf("in the %s after %d unchanged MiniClusters converged, Crossplane wrote:\n  %s\nwant nothing: something the function returns changes, or something re-runs the composition", steady, len(claims), strings.Join(bad, "\n  "))
	}
}

// envShape is the API shape named by the environment variable name:
// claims when it is unset.
func envShape(t *testing.T, name string) driver.Shape {
	t.Helper()
	shape, err := driver.ParseShape(os.Getenv(name))
	if err != nil {
		t.Fatalf("$%s: %v", name, err)
	}
	return shape
}

// writeReport writes r as indented JSON to path, if not "".
func writeReport(t *testing.T, path string, r any) {
	t.Helper()
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// EnvWritesTrace, when set, makes TestWrites log every change of the
// first claim, its composite and its Job: which fields changed, by whom
// (the field managers of the new version), to find what makes Crossplane
// write again.
const EnvWritesTrace = "MC_WRITES_TRACE"

// traceChanges watches the claim namespace/name, its composite and its Job
// until ctx ends, and logs what changed in each new version.
func traceChanges(ctx context.Context, t *testing.T, cp *harness.ControlPlane, namespace, name string) {
	dc, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Error(err)
		return
	}
	watch := func(gvr schema.GroupVersionResource, ns string, match func(*unstructured.Unstructured) bool) {
		w, err := dc.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("trace: cannot watch %s: %v", gvr.Resource, err)
			return
		}
		defer w.Stop()
		var last map[string]any
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || !match(u) {
				continue
			}
			cur := u.DeepCopy().Object
			md := cur["metadata"].(map[string]any)
			managers := []string{}
			for _, mf := range u.GetManagedFields() {
				managers = append(managers, mf.Manager+"/"+string(mf.Operation)+"@"+mf.Time.Format("15:04:05"))
			}
			delete(md, "managedFields")
			delete(md, "resourceVersion")
			var changes []string
			diffPaths("", last, cur, &changes)
			t.Logf("trace %s %s %s: %s [managers: %s]", time.Now().Format("15:04:05.000"), gvr.Resource, u.GetName(), strings.Join(changes, "; "), strings.Join(managers, ", "))
			last = cur
		}
	}
	go watch(schema.GroupVersionResource{Group: "flux-framework.org", Version: "v1alpha2", Resource: "miniclusters"}, namespace,
		func(u *unstructured.Unstructured) bool { return u.GetName() == name })
	go watch(schema.GroupVersionResource{Group: "flux-framework.org", Version: "v1alpha2", Resource: "xminiclusters"}, "",
		func(u *unstructured.Unstructured) bool {
			return u.GetLabels()["crossplane.io/claim-name"] == name && u.GetLabels()["crossplane.io/claim-namespace"] == namespace
		})
	go watch(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, namespace,
		func(u *unstructured.Unstructured) bool { return u.GetName() == name })
}

// diffPaths appends the paths where a and b differ, with b's value.
func diffPaths(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			diffPaths(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffPaths(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if reflect.DeepEqual(a, b) {
		return
	}
	j, _ := json.Marshal(b)
	s := string(j)
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	*out = append(*out, path+"="+s)
}
