package burst

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

const rootYAML = `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: hpc
spec:
  size: 2
  maxSize: 4
  interactive: true
  flux:
    bursting:
      clusters:
        - name: burst-0
          size: 4
  containers:
    - image: rockylinux:9
status:
  maximumSize: 4
`

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rootClaim(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(rootYAML), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func node(name, internal, external string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if internal != "" {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: internal})
	}
	if external != "" {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: external})
	}
	return n
}

func leadPod(name, nodeName string, created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "hpc", CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{
			plan.LabelJobName: "flux-sample", plan.LabelCompletionIndex: "0",
		}},
		Spec:   corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func leadService(nodePort int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample-lead-broker", Namespace: "hpc"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 8050, NodePort: nodePort}}},
	}
}

func rootSecret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "flux-sample-curve-cert", Namespace: "hpc"}, Data: map[string][]byte{v1alpha2.CurveCertKey: []byte("certificate text")}}
}

func newBurst() *v1alpha1.Burst {
	b := &v1alpha1.Burst{ObjectMeta: metav1.ObjectMeta{Name: "to-cloud", Namespace: "hpc"}}
	b.Spec.ForProvider = v1alpha1.BurstParameters{
		Root: "flux-sample", Cluster: "burst-0", TargetNamespace: "cloud",
		Template: v1alpha2.MiniClusterSpec{Containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}}},
	}
	return b
}

// localClient is a fake API server holding objs. As the real one does, it
// gives each object it creates a uid (the fake on its own leaves them
// empty): the controller knows the burst MiniCluster it made by it. Bursts
// have their status subresource.
func localClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.Burst{}).
		WithInterceptorFuncs(interceptor.Funcs{Create: createWithUID}).Build()
}

// uids numbers the uids createWithUID gives.
var uids atomic.Int64

// createWithUID creates obj in c with a uid of its own, as the API server
// would.
func createWithUID(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(fmt.Sprintf("created-%d", uids.Add(1))))
	}
	return c.Create(ctx, obj, opts...)
}

// newExternal is the external client of a Burst whose local cluster is
// local (which must hold the Burst, as the API server does while the
// Burst is reconciled) and whose target is target.
func newExternal(local, target client.Client) *external {
	return &external{local: local, fresh: local, target: target}
}

func rootWorld(t *testing.T, extra ...client.Object) client.Client {
	t.Helper()
	objs := []client.Object{rootClaim(t), leadService(30093), rootSecret(),
		node("node-a", "10.0.0.1", "34.1.1.1"),
		leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))}
	return localClient(t, append(objs, extra...)...)
}

func getClaim(t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha2.ClaimGVK())
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "cloud", Name: "burst-0"}, u); err != nil {
		t.Fatalf("burst claim: %v", err)
	}
	return u
}

func TestNodeAddress(t *testing.T) {
	cases := map[string]struct {
		reason string
		node   *corev1.Node
		want   string
	}{
		"External": {reason: "The external address is what another cluster can reach.", node: node("n", "10.0.0.1", "34.1.1.1"), want: "34.1.1.1"},
		"Internal": {reason: "Without an external address, the internal one.", node: node("n", "10.0.0.1", ""), want: "10.0.0.1"},
		"None":     {reason: "No address at all.", node: node("n", "", ""), want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NodeAddress(tc.node); got != tc.want {
				t.Errorf("%s\nNodeAddress() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestLeadPod(t *testing.T) {
	old := leadPod("old", "node-a", time.Unix(100, 0))
	newer := leadPod("new", "node-b", time.Unix(200, 0))
	pending := leadPod("pending", "", time.Unix(300, 0))
	failed := leadPod("failed", "node-c", time.Unix(400, 0))
	failed.Status.Phase = corev1.PodFailed
	cases := map[string]struct {
		reason string
		pods   []corev1.Pod
		want   string
	}{
		"Newest":        {reason: "After a restart the newest scheduled pod runs the lead broker.", pods: []corev1.Pod{*old, *newer}, want: "new"},
		"SkipPending":   {reason: "An unscheduled pod has no node yet.", pods: []corev1.Pod{*old, *pending}, want: "old"},
		"SkipFinished":  {reason: "A failed pod no longer runs a broker.", pods: []corev1.Pod{*old, *failed}, want: "old"},
		"NoneScheduled": {reason: "Nothing scheduled, no lead.", pods: []corev1.Pod{*pending}, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if p := LeadPod(tc.pods); p != nil {
				got = p.Name
			}
			if got != tc.want {
				t.Errorf("%s\nLeadPod() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// TestRootAndBurstAgreeOnRanks renders the root and the burst the
// controller asks for, and checks both compute the same ranks: the burst's
// host list is the root's with rank 0 replaced by the lead's address.
func TestRootAndBurstAgreeOnRanks(t *testing.T) {
	root, err := RootFrom(rootClaim(t))
	if err != nil {
		t.Fatal(err)
	}
	claim, err := DesiredClaim(newBurst(), root, Lead{Address: "34.1.1.1", Port: 30093})
	if err != nil {
		t.Fatal(err)
	}
	burstMC := &v1alpha2.MiniCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(claim.Object, burstMC); err != nil {
		t.Fatal(err)
	}
	v1alpha2.SetDefaults(burstMC, v1alpha2.PlatformDefaults{})
	burstPlan, errs := plan.New(burstMC, plan.Facts{Namespace: "default"})
	if len(errs) > 0 {
		t.Fatalf("the burst claim the controller writes is invalid: %v", errs)
	}
	rootPlan, errs := plan.New(root.MiniCluster, plan.Facts{Namespace: "default"})
	if len(errs) > 0 {
		t.Fatalf("the root claim is invalid: %v", errs)
	}
	rootHosts := expand(t, rootPlan.Hosts.All)
	burstHosts := expand(t, burstPlan.Hosts.All)
	if len(rootHosts) != 8 {
		t.Fatalf("root ranks %v, want 4 own and 4 burst hosts", rootHosts)
	}
	if diff := cmp.Diff(rootHosts[1:], burstHosts[1:]); diff != "" {
		t.Errorf("ranks after 0 differ between root and burst: -root, +burst:\n%s", diff)
	}
	if rootHosts[0] != "flux-sample-0" || burstHosts[0] != "34.1.1.1" {
		t.Errorf("rank 0: root %q, burst %q; want the root's own host and the lead's address", rootHosts[0], burstHosts[0])
	}
	if got := *burstMC.Spec.Size; got != 4 {
		t.Errorf("burst size %d, want the cluster entry's 4", got)
	}
	if burstMC.Spec.Flux.CurveCertSecret != "burst-0-curve-cert" {
		t.Errorf("burst certificate Secret %q, want burst-0-curve-cert", burstMC.Spec.Flux.CurveCertSecret)
	}
}

// expand lists every host of a Flux host list.
func expand(t *testing.T, list string) []string {
	t.Helper()
	hosts, err := hostlist.Expand(list)
	if err != nil {
		t.Fatalf("cannot expand %q: %v", list, err)
	}
	return hosts
}

func TestExternalLifecycle(t *testing.T) {
	ctx := context.Background()
	b := newBurst()
	local := rootWorld(t, b)
	target := localClient(t)
	e := newExternal(local, target)

	obs, err := e.Observe(ctx, b)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if obs.ResourceExists {
		t.Fatalf("nothing exists in the target yet, Observe says it does")
	}
	if _, err := e.Create(ctx, b); err != nil {
		t.Fatalf("Create: %v", err)
	}

	claim := getClaim(t, target)
	lb, _, _ := unstructured.NestedMap(claim.Object, "spec", "flux", "bursting", "leadBroker")
	if diff := cmp.Diff(map[string]any{"address": "34.1.1.1", "port": int64(30093), "name": "flux-sample", "size": int64(4)}, normalizeNumbers(lb)); diff != "" {
		t.Errorf("leadBroker: -want, +got:\n%s", diff)
	}
	sec := &corev1.Secret{}
	if err := target.Get(ctx, types.NamespacedName{Namespace: "cloud", Name: "burst-0-curve-cert"}, sec); err != nil || string(sec.Data[v1alpha2.CurveCertKey]) != "certificate text" {
		t.Errorf("the root's certificate was not copied: %v %q", err, sec.Data)
	}

	obs, err = e.Observe(ctx, b)
	if err != nil || !obs.ResourceExists || !obs.ResourceUpToDate {
		t.Fatalf("after Create: %+v, %v; want existing and up to date", obs, err)
	}
	want := v1alpha1.BurstObservation{Address: "34.1.1.1", Port: 30093, Node: "node-a", Claim: "cloud/burst-0", CurveCertSecret: "cloud/burst-0-curve-cert", ClaimUID: string(claim.GetUID())} //nolint:gosec // G101: a Secret's name, not its content
	if diff := cmp.Diff(want, b.Status.AtProvider); diff != "" {
		t.Errorf("atProvider: -want, +got:\n%s", diff)
	}
	if c := b.GetCondition(xpv2.TypeReady); c.Reason != xpv2.ReasonUnavailable {
		t.Errorf("Ready reason %q, want Unavailable until the burst claim is ready", c.Reason)
	}

	// The lead broker's pod is rescheduled on another node.
	if err := local.Create(ctx, node("node-b", "10.0.0.2", "35.2.2.2")); err != nil {
		t.Fatal(err)
	}
	if err := local.Create(ctx, leadPod("flux-sample-0-fghij", "node-b", time.Unix(500, 0))); err != nil {
		t.Fatal(err)
	}
	obs, err = e.Observe(ctx, b)
	if err != nil || obs.ResourceUpToDate {
		t.Fatalf("after the lead moved: %+v, %v; want out of date", obs, err)
	}
	if _, err := e.Update(ctx, b); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if addr, _, _ := unstructured.NestedString(getClaim(t, target).Object, "spec", "flux", "bursting", "leadBroker", "address"); addr != "35.2.2.2" {
		t.Errorf("after Update the burst points at %q, want the new node's 35.2.2.2", addr)
	}
	if obs, err = e.Observe(ctx, b); err != nil || !obs.ResourceUpToDate {
		t.Errorf("after Update: %+v, %v; want up to date", obs, err)
	}

	// Delete removes what the Burst made, and Observe then says so.
	b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	if _, err := e.Delete(ctx, b); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if obs, err := e.Observe(ctx, b); err != nil || obs.ResourceExists {
		t.Errorf("after Delete: %+v, %v; want gone", obs, err)
	}
}

func TestExternalRefusesForeignObjects(t *testing.T) {
	ctx := context.Background()
	foreign := &unstructured.Unstructured{}
	foreign.SetGroupVersionKind(v1alpha2.ClaimGVK())
	foreign.SetNamespace("cloud")
	foreign.SetName("burst-0")
	foreignSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "burst-0-curve-cert", Namespace: "cloud"}}
	target := localClient(t, foreign, foreignSecret)
	b := newBurst()
	e := newExternal(rootWorld(t, b), target)

	if _, err := e.Observe(ctx, b); err == nil || !strings.Contains(err.Error(), "not made by this Burst") {
		t.Errorf("Observe with a foreign MiniCluster in the way: %v, want an error saying so", err)
	}
	if _, err := e.Delete(ctx, b); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := target.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil {
		t.Errorf("Delete removed a MiniCluster this Burst did not make: %v", err)
	}
}

func TestExternalWaitsForRoot(t *testing.T) {
	cases := map[string]struct {
		reason  string
		local   client.Client
		burst   func(*v1alpha1.Burst)
		wantErr string               // an error: the user has something to fix
		wait    xpv2.ConditionReason // or a wait, reported as Ready=False
		wantMsg string
	}{
		"NoRoot": {
			reason:  "A missing root names the field.",
			local:   localClient(t),
			wantErr: "spec.forProvider.root",
		},
		"UnknownCluster": {
			reason:  "A cluster the root does not declare cannot join it.",
			local:   rootWorld(t),
			burst:   func(b *v1alpha1.Burst) { b.Spec.ForProvider.Cluster = "burst-9" },
			wantErr: "is not one of root MiniCluster flux-sample's spec.flux.bursting.clusters",
		},
		"NoLeadService": {
			reason:  "The lead broker Service comes from the function; until then, wait.",
			local:   localClient(t, rootClaim(t), rootSecret()),
			wait:    ReasonWaitingForRoot,
			wantMsg: "waiting for the root's lead broker Service hpc/flux-sample-lead-broker",
		},
		"NotScheduled": {
			reason:  "Without a scheduled lead pod there is no address yet.",
			local:   localClient(t, rootClaim(t), rootSecret(), leadService(30093)),
			wait:    ReasonWaitingForRoot,
			wantMsg: "waiting for root MiniCluster flux-sample's lead broker pod to be scheduled",
		},
		"NoSecret": {
			reason:  "The root's certificate Secret comes from the function too.",
			local:   localClient(t, rootClaim(t), leadService(30093), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))),
			wait:    ReasonWaitingForRoot,
			wantMsg: "waiting for the root's CURVE certificate Secret hpc/flux-sample-curve-cert",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBurst()
			if tc.burst != nil {
				tc.burst(b)
			}
			target := localClient(t)
			obs, err := newExternal(tc.local, target).Observe(context.Background(), b)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s\nObserve error %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nObserve: %v, want a wait", tc.reason, err)
			}
			if !obs.ResourceExists || !obs.ResourceUpToDate {
				t.Errorf("%s\nwhile waiting Observe must ask for no create or update, got %+v", tc.reason, obs)
			}
			if c := b.GetCondition(xpv2.TypeReady); c.Reason != tc.wait || !strings.HasPrefix(c.Message, tc.wantMsg) {
				t.Errorf("%s\nReady %s: %q, want %s: %q", tc.reason, c.Reason, c.Message, tc.wait, tc.wantMsg)
			}
			if claimExists(t, target) {
				t.Errorf("%s\nsomething was created while waiting", tc.reason)
			}
		})
	}
}

func TestExternalAddressOverride(t *testing.T) {
	local := localClient(t, rootClaim(t), rootSecret(), leadService(30093))
	e := newExternal(local, localClient(t))
	b := newBurst()
	b.Spec.ForProvider.Address = "lead.example.org"
	if _, err := e.Observe(context.Background(), b); err != nil {
		t.Fatalf("with an address override no pod is needed: %v", err)
	}
	if b.Status.AtProvider.Address != "lead.example.org" {
		t.Errorf("address %q, want the override", b.Status.AtProvider.Address)
	}
}

var _ managed.ExternalClient = &external{}

// TestNewClientForCaches checks that a target client is built once per
// kubeconfig, not on every reconcile.
func TestNewClientForCaches(t *testing.T) {
	s, err := TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	kc := func(server string) []byte {
		return []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	}
	clientFor := NewClientFor(s)
	a1, err := clientFor(kc("https://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := clientFor(kc("https://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := clientFor(kc("https://127.0.0.1:2"))
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Error("the same kubeconfig built a second client")
	}
	if a1 == b {
		t.Error("another kubeconfig got the first one's client")
	}
	if _, err := clientFor([]byte("not a kubeconfig")); err == nil {
		t.Error("a broken kubeconfig built a client")
	}
}
