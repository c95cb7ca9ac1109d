package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Contention: more MiniClusters than the node has room for, applied at
// once, the way an HPC queue fills. Each broker requests a share of the
// node's free CPU such that six brokers fit and seven do not, and each
// MiniCluster has four: one and a half MiniClusters fit at a time.
//
// Without gang scheduling the scheduler places brokers one by one, so
// MiniClusters each hold part of their brokers, none reaches its quorum,
// and the node sits idle until their deadlines (issue 34 measured it:
// three MiniClusters holding 1, 3 and 2 brokers from second 50 on). With
// it, kube-scheduler places a MiniCluster's quorum at once or none of it,
// so the node is always either running a whole MiniCluster or free for
// the next.

const (
	contentionMiniClusters = 6
	contentionSize         = 4
	// contentionFit is how many brokers fit the node at once.
	contentionFit = 6
	// permitWait is kube-scheduler's gang permit timeout (a constant of
	// its GangScheduling plugin in 1.37): the longest a gang may hold
	// part of its pods, reserved, before the scheduler lets them go.
	permitWait = 5 * time.Minute
)

// TestContention: with gang scheduling every MiniCluster reaches
// Succeeded and none holds a partial set of running brokers for longer
// than the permit wait; without it (scheduling.gang: Disabled) the
// MiniClusters that stall holding part of their brokers say so on their
// Brokers condition within a minute: those of the six when they deadlock
// (a race of the scheduler's order), and always one of seven brokers,
// which never fits.
func TestContention(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	if !cp.ServesWorkloadAPI() {
		t.Fatalf("the real node runs Kubernetes 1.%d: gang scheduling needs 1.37", cp.KubernetesMinor())
	}
	ns := namespace(t, cp, "contention")

	t.Run("Gang", func(t *testing.T) {
		r, timedOut := contend(t, cp, ns, contentionMiniClusters, contentionSize, 10*time.Minute, untilAllFinished)
		t.Logf("gang: %s", r)
		if timedOut {
			t.Errorf("after %.0fs: %d of %d MiniClusters finished", r.Seconds, r.Finished, contentionMiniClusters)
		}
		for _, m := range r.MiniClusters {
			if m.Phase != "Succeeded" {
				t.Errorf("MiniCluster %s ended %q, want Succeeded", m.Name, m.Phase)
			}
			if m.LongestPartial > permitWait.Seconds() {
				t.Errorf("MiniCluster %s held a partial set of brokers for %.0fs, longer than the scheduler's permit wait (%s)", m.Name, m.LongestPartial, permitWait)
			}
		}
		deleteAll(t, cp, ns)
	})

	t.Run("NoGang", func(t *testing.T) {
		setGang(t, cp, "Disabled")
		r, timedOut := contend(t, cp, ns, contentionMiniClusters, contentionSize, 5*time.Minute, untilStallSaid(t, cp, ns, contentionSize))
		t.Logf("no gang: %s", r)
		if timedOut {
			t.Errorf("after %.0fs no MiniCluster has said it stalled: %s", r.Seconds, r)
		}
		deleteAll(t, cp, ns)
		// Whether six MiniClusters deadlock is a race of the scheduler's
		// order (most runs here do, within seconds; some do not). One
		// MiniCluster of one broker more than the node holds always
		// stalls, holding all it can, and must say so.
		if len(r.Stalls) == 0 {
			t.Logf("the six did not deadlock this time")
		}
		r, timedOut = contend(t, cp, ns, 1, contentionFit+1, 3*time.Minute, untilStallSaid(t, cp, ns, contentionFit+1))
		t.Logf("oversized, no gang: %s", r)
		if timedOut || len(r.Stalls) == 0 {
			t.Errorf("the MiniCluster that cannot fit never said it holds part of its brokers: %s", r)
		}
		deleteAll(t, cp, ns)
	})
}

// EnvContentionBench runs TestBenchContention (make bench-contention),
// which writes its JSON to EnvContentionReport; EnvContentionN is how many
// MiniClusters it applies (default contentionMiniClusters).
const (
	EnvContentionBench  = "MC_NODE_CONTENTION_BENCH"
	EnvContentionReport = "MC_NODE_CONTENTION_REPORT"
	EnvContentionN      = "MC_NODE_CONTENTION_N"
	// contentionCap bounds a run that never finishes: without gang
	// scheduling the deadlocked MiniClusters would wait until their
	// deadlines.
	contentionCap = 5 * time.Minute
)

// TestBenchContention is the contention benchmark: N MiniClusters on a
// node with room for six brokers, with gang scheduling and without, side
// by side in one run: how long until all finish (a run that has not
// finished after contentionCap says how many had), and the broker-seconds
// spent holding a partial set. It measures; it asserts nothing about the
// figures (docs/performance.md#contention).
func TestBenchContention(t *testing.T) {
	if os.Getenv(EnvContentionBench) == "" {
		t.Skipf("a benchmark: set %s=1 (make bench-contention)", EnvContentionBench)
	}
	cp := nodePlane(t, driver.ShapeClaims)
	if !cp.ServesWorkloadAPI() {
		t.Fatalf("the real node runs Kubernetes 1.%d: gang scheduling needs 1.37", cp.KubernetesMinor())
	}
	n := contentionMiniClusters
	if v := os.Getenv(EnvContentionN); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", EnvContentionN, v)
		}
	}
	ns := namespace(t, cp, "contention-bench")
	report := map[string]any{"miniClusters": n, "size": contentionSize, "brokersThatFit": contentionFit, "capSeconds": contentionCap.Seconds()}
	for _, mode := range []string{"Auto", "Disabled"} {
		setGang(t, cp, mode)
		r, timedOut := contend(t, cp, ns, n, contentionSize, contentionCap, untilAllFinished)
		key := map[string]string{"Auto": "gang", "Disabled": "noGang"}[mode]
		report[key] = map[string]any{"run": r, "capped": timedOut}
		t.Logf("%s: %d of %d finished in %.0fs, %.0f broker-seconds held partial (capped: %v)", key, r.Finished, n, r.Seconds, r.PartialBrokerSeconds, timedOut)
		deleteAll(t, cp, ns)
	}
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv(EnvContentionReport); f != "" {
		if err := os.WriteFile(f, append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("report:\n%s", b)
}

// setGang sets the Composition's scheduling.gang, and puts the shipped
// input back at the end.
func setGang(t *testing.T, cp *harness.ControlPlane, mode string) {
	t.Helper()
	if _, err := cp.SetScheduling(context.Background(), map[string]any{"gang": mode}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cp.SetScheduling(context.Background(), nil); err != nil {
			t.Error(err)
		}
	})
}

// contention is what one run of contend saw.
type contention struct {
	// Gang: the MiniClusters' pods were in PodGroups.
	Gang bool `json:"gang"`
	// BrokerCPU is each broker's CPU request.
	BrokerCPU string `json:"brokerCPU"`
	// Seconds from applying them to the end of the run; Finished of
	// the MiniClusters reached Succeeded or Failed by then.
	Seconds  float64 `json:"seconds"`
	Finished int     `json:"finished"`
	// PartialBrokerSeconds is the broker-seconds the MiniClusters held a
	// partial set of running brokers before their quorum ran: nodes
	// held, and nothing done with them.
	PartialBrokerSeconds float64          `json:"partialBrokerSeconds"`
	MiniClusters         []contendedOne   `json:"miniClusters"`
	Stalls               []contendedStall `json:"stalls,omitempty"`
}

type contendedOne struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Whole is when all its brokers first ran together, Done when it
	// finished (seconds from the start, 0 for never).
	Whole float64 `json:"whole"`
	Done  float64 `json:"done"`
	// LongestPartial is its longest span holding part of its brokers
	// before they all ran, in seconds.
	LongestPartial float64 `json:"longestPartial"`
	// PartialBrokerSeconds is what it held that way.
	PartialBrokerSeconds float64 `json:"partialBrokerSeconds"`
}

// contendedStall is a MiniCluster that held part of its brokers, and what
// its Brokers condition said.
type contendedStall struct {
	Name    string  `json:"name"`
	Held    int     `json:"held"`
	Seconds float64 `json:"seconds"`
	Said    string  `json:"said"`
}

func (c contention) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// sample is one look at the MiniClusters: brokers held (bound to the
// node and not finished) and phase, by name.
type sample struct {
	at    time.Duration
	held  map[string]int
	phase map[string]string
}

// until ends a run: it sees every sample and the run so far.
type until func(s sample, r *contention, names []string) bool

func untilAllFinished(s sample, r *contention, names []string) bool {
	return r.Finished == len(names)
}

// untilStallSaid ends the run once a MiniCluster that holds part of its
// brokers says so on its Brokers condition, and fails the test if one
// holds part of them for a minute without saying it (the promise of
// docs/minicluster.md#how-a-minicluster-starts). Seconds of the stall it
// records is how long it held them before its status said so.
func untilStallSaid(t *testing.T, cp *harness.ControlPlane, ns string, size int) until {
	since := map[string]time.Duration{}
	return func(s sample, r *contention, names []string) bool {
		for _, n := range names {
			h := s.held[n]
			if h == 0 || h >= size || finished(s.phase[n]) {
				delete(since, n)
				continue
			}
			if _, ok := since[n]; !ok {
				since[n] = s.at
			}
			held := s.at - since[n]
			msg := brokersMessage(t, cp, ns, n)
			if strings.Contains(msg, "scheduled and waiting for the rest, which cannot be scheduled") && strings.Contains(msg, observe.HoldingDocs) {
				r.Stalls = append(r.Stalls, contendedStall{Name: n, Held: h, Seconds: held.Seconds(), Said: msg})
				return true
			}
			if held > time.Minute {
				t.Fatalf("MiniCluster %s has held %d of its %d brokers for %s and its Brokers condition does not say so: %q", n, h, size, held.Round(time.Second), msg)
			}
		}
		// All finished: the node did not deadlock this time.
		return r.Finished == len(names)
	}
}

func finished(phase string) bool { return phase == "Succeeded" || phase == "Failed" }

// brokersMessage is a MiniCluster's Brokers condition message.
func brokersMessage(t *testing.T, cp *harness.ControlPlane, ns, name string) string {
	out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Brokers")].message}`)
	if err != nil {
		return err.Error()
	}
	return out
}

// contend applies n hello-world MiniClusters of size brokers at
// once in ns, each broker requesting what makes contentionFit brokers fit
// the node's free CPU, and samples their pods every second until done
// says so or timeout passes (timedOut).
func contend(t *testing.T, cp *harness.ControlPlane, ns string, n, size int, timeout time.Duration, done until) (r contention, timedOut bool) {
	t.Helper()
	ctx := context.Background()
	cpu := brokerShare(t, cp)
	r = contention{Gang: gangOn(t, cp), BrokerCPU: cpu.String()}
	dir := t.TempDir()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("contender-%d", i)
		f := manifest(t, "hello-world", ns, func(o map[string]any) {
			u := unstructured.Unstructured{Object: o}
			u.SetName(names[i])
			_ = unstructured.SetNestedField(o, int64(size), "spec", "size")
			containers, _, _ := unstructured.NestedSlice(o, "spec", "containers")
			c := containers[0].(map[string]any)
			c["resources"] = map[string]any{"requests": map[string]any{"cpu": cpu.String()}}
			_ = unstructured.SetNestedSlice(o, containers, "spec", "containers")
		})
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, names[i]+".yaml"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	mustKubectl(t, cp, "apply", "-f", dir)

	one := map[string]*contendedOne{}
	partialSince := map[string]time.Duration{}
	for _, name := range names {
		one[name] = &contendedOne{Name: name}
	}
	last := time.Duration(0)
	for {
		time.Sleep(time.Second)
		s := look(ctx, t, cp, ns, time.Since(start))
		dt := (s.at - last).Seconds()
		last = s.at
		r.Finished = 0
		for _, name := range names {
			m, h := one[name], s.held[name]
			m.Phase = s.phase[name]
			if finished(m.Phase) {
				r.Finished++
				if m.Done == 0 {
					m.Done = s.at.Seconds()
				}
			}
			if m.Whole == 0 && h >= size {
				m.Whole = s.at.Seconds()
			}
			if m.Whole == 0 && h > 0 && h < size {
				if _, ok := partialSince[name]; !ok {
					partialSince[name] = s.at
				}
				m.PartialBrokerSeconds += float64(h) * dt
				r.PartialBrokerSeconds += float64(h) * dt
				m.LongestPartial = max(m.LongestPartial, (s.at - partialSince[name]).Seconds())
			} else {
				delete(partialSince, name)
			}
		}
		r.Seconds = s.at.Seconds()
		if done(s, &r, names) {
			break
		}
		if s.at > timeout {
			timedOut = true
			break
		}
	}
	for _, name := range names {
		r.MiniClusters = append(r.MiniClusters, *one[name])
	}
	return r, timedOut
}

// look samples the MiniClusters' pods and phases.
func look(ctx context.Context, t *testing.T, cp *harness.ControlPlane, ns string, at time.Duration) sample {
	t.Helper()
	s := sample{at: at, held: map[string]int{}, phase: map[string]string{}}
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			s.held[p.Labels[plan.LabelName]]++
		}
	}
	mcs := &unstructured.UnstructuredList{}
	mcs.SetAPIVersion("flux-framework.org/v1alpha2")
	mcs.SetKind("MiniClusterList")
	if err := cp.Client.List(ctx, mcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, m := range mcs.Items {
		s.phase[m.GetName()], _, _ = unstructured.NestedString(m.Object, "status", "phase")
	}
	return s
}

// brokerShare is the CPU request that makes contentionFit brokers fit the
// node's free CPU and one more not: free/6.5.
func brokerShare(t *testing.T, cp *harness.ControlPlane) resource.Quantity {
	t.Helper()
	ctx := context.Background()
	nodes := &corev1.NodeList{}
	if err := cp.Client.List(ctx, nodes); err != nil || len(nodes.Items) != 1 {
		t.Fatalf("want the one real node: %v (%d nodes)", err, len(nodes.Items))
	}
	free := nodes.Items[0].Status.Allocatable.Cpu().MilliValue()
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx, pods); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			free -= c.Resources.Requests.Cpu().MilliValue()
		}
	}
	share := free * 2 / (2*contentionFit + 1)
	if share < 50 {
		t.Fatalf("the node has %dm CPU free: too little for %d brokers", free, contentionFit)
	}
	return *resource.NewMilliQuantity(share, resource.DecimalSI)
}

// gangOn tells whether the shipped Composition, as it is now, composes a
// gang on this cluster: it does unless scheduling.gang is Disabled.
func gangOn(t *testing.T, cp *harness.ControlPlane) bool {
	out := mustKubectl(t, cp, "get", "composition", harness.CompositionName, "-o", "jsonpath={.spec.pipeline[*].input.scheduling.gang}")
	return cp.ServesWorkloadAPI() && strings.TrimSpace(out) != "Disabled"
}

// deleteAll deletes every MiniCluster in ns and waits until their pods
// are gone, so that the next run starts on a free node.
func deleteAll(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	mustKubectl(t, cp, "delete", "miniclusters", "--all", "-n", ns, "--timeout=3m")
	eventually(t, 3*time.Minute, "every pod of the MiniClusters is gone", func() error {
		pods := &corev1.PodList{}
		if err := cp.Client.List(context.Background(), pods, client.InNamespace(ns)); err != nil {
			return err
		}
		var left []string
		for _, p := range pods.Items {
			left = append(left, p.Name)
		}
		sort.Strings(left)
		if len(left) > 0 {
			return fmt.Errorf("pods left: %v", left)
		}
		return nil
	})
}
