package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	burstctl "github.com/flux-framework/minicluster-crossplane/internal/controller/burst"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

var (
	burstGVK   = schema.GroupVersionKind{Group: "bursting.flux-framework.org", Version: "v1alpha1", Kind: "Burst"}
	nodeAddrA  = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.10"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	nodeAddrB  = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.20"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.2"}}
	nodeAddrC  = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.3"}} // no ExternalIP: InternalIP it is
	curveKey   = "curve.cert"
	burstLabel = "bursting.flux-framework.org/burst"
)

// TestBurst bursts a root MiniCluster from a "lead" control plane into a
// second, "burst" control plane with the burst controller (cmd/provider, run
// as a process against the lead cluster, as it ships), and into another
// namespace of the lead cluster. Node objects and pod bindings made by the
// test stand in for kubelets and the scheduler: the lead broker's address is
// the node its index-0 pod is bound to, and moving that pod moves the burst.
// Both control planes serve MiniClusters as claims.
func TestBurst(t *testing.T) { testBurst(t, driver.ShapeClaims, driver.ShapeClaims) }

// TestBurstV2 is TestBurst with both control planes in the Crossplane v2
// shape: the root and both burst MiniClusters (in the burst cluster and in
// the lead cluster's other namespace) are namespaced composites, with
// Crossplane's fields under spec.crossplane. The burst controller reads and
// writes the same flux-framework.org/v1alpha2 MiniCluster in either shape;
// this proves it on real Crossplane, for the root as for the targets.
func TestBurstV2(t *testing.T) { testBurst(t, driver.ShapeV2, driver.ShapeV2) }

// testBurst runs TestBurst's steps with a lead (root) control plane of
// rootShape and a burst control plane of targetShape.
func testBurst(t *testing.T, rootShape, targetShape driver.Shape) {
	if v := os.Getenv(EnvE2E); v == "" || v == "0" {
		t.Skipf("end-to-end tests run a real control plane: set %s=1 (make e2e does, after installing the tools)", EnvE2E)
	}
	begin := time.Now()
	lead, remote, providerBin := startBurstClusters(t, rootShape, targetShape)
	t.Logf("lead cluster serves the %s shape, burst cluster the %s shape", rootShape, targetShape)

	const (
		ns        = "hpc"   // the roots and Bursts, in the lead cluster
		target    = "cloud" // the burst MiniCluster, in the burst cluster
		localNS   = "hpc-burst"
		root      = "flux-sample"
		burstName = "flux-sample-burst-0"
		cluster   = "burst-0"
	)
	var nodePort int32
	var rootCert []byte
	var leadPod *corev1.Pod

	step(t, "lead cluster: provider CRDs, root MiniCluster, its lead broker Service and Job, index 0 on node-a", func(t *testing.T) {
		installProviderCRDs(t, lead)
		createNamespace(t, lead, ns)
		// The root opens a NodePort, which the platform's default policy
		// allows only in namespaces it labels for it.
		allowNodePorts(t, lead, ns)
		createRoot(t, lead, exampleClaim(t, lead, "examples/bursting-root/claim.yaml", ns, ""))
		nodePort, rootCert = waitRoot(t, lead, ns, root)
		want := "flux-sample-[0-3],burst-0-[0-3]"
		if h := brokerHosts(t, lead, ns, root+"-entrypoint"); !reflect.DeepEqual(h, []map[string]any{{"host": want}}) {
			t.Errorf("root broker.toml hosts = %v, want [{host = %q}]", h, want)
		}
		if _, err := lead.CreateNode(ctx(t), "node-a", nodeAddrA...); err != nil {
			t.Fatal(err)
		}
		leadPod = bindLeadPod(t, lead, ns, root, "", "node-a")
	})

	// Not a step: a step's cleanups run when it ends, and the provider must
	// run until the test does.
	startProvider(t, lead, providerBin)

	step(t, "a Burst into the burst cluster joins burst-0 to the root", func(t *testing.T) {
		createNamespace(t, remote, target)
		// Something the controller did not make, in the target namespace.
		unrelated := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: target, Name: "unrelated"},
			StringData: map[string]string{"keep": "me"},
		}
		if err := remote.Client.Create(ctx(t), unrelated); err != nil {
			t.Fatal(err)
		}
		kubeconfig, err := os.ReadFile(remote.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		objs := burstExample(t, lead)
		secret, pc, burst := objs["Secret"], objs["ProviderConfig"], objs["Burst"]
		// The burst cluster's admin kubeconfig: the test needs no RBAC there.
		setField(t, secret, map[string]any{"kubeconfig": string(kubeconfig)}, "stringData")
		secret.SetNamespace(ns)
		pc.SetNamespace(ns)
		setField(t, pc, ns, "spec", "credentials", "secretRef", "namespace")
		burst.SetNamespace(ns)
		setField(t, burst, target, "spec", "forProvider", "targetNamespace")
		for _, o := range []*unstructured.Unstructured{secret, pc, burst} {
			if err := lead.Client.Create(ctx(t), o); err != nil {
				t.Fatalf("cannot create %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		t.Logf("created Secret, ProviderConfig cloud and Burst %s/%s (target %s)", ns, burstName, target)

		// The burst cluster started without compositions/: it does not
		// serve the MiniCluster API yet. The Burst says so, as a waiting
		// condition, and makes nothing there.
		eventually(t, time.Minute, "Burst "+burstName+" waits for the MiniCluster API (Ready=False TargetLacksMiniClusterAPI, Synced=True)", func() error {
			return wantLacksAPI(t, lead, ns, burstName)
		})
		// A Burst into such a target can be deleted while it waits: it made
		// nothing, so nothing holds it.
		elsewhere := burst.DeepCopy()
		elsewhere.SetName(burstName + "-elsewhere")
		elsewhere.SetResourceVersion("")
		elsewhere.SetUID("")
		setField(t, elsewhere, "elsewhere", "spec", "forProvider", "targetNamespace")
		if err := lead.Client.Create(ctx(t), elsewhere); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "Burst "+elsewhere.GetName()+" waits for the MiniCluster API too", func() error {
			return wantLacksAPI(t, lead, ns, elsewhere.GetName())
		})
		if err := lead.Client.Delete(ctx(t), elsewhere); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the Burst deleted while its target lacks the MiniCluster API is gone", func() error {
			if err := lead.Client.Get(ctx(t), client.ObjectKeyFromObject(elsewhere), elsewhere.DeepCopy()); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		secrets := &corev1.SecretList{}
		if err := remote.Client.List(ctx(t), secrets, client.HasLabels{burstLabel}); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			t.Errorf("Secret %s/%s made in the burst cluster while it lacks the MiniCluster API", s.Namespace, s.Name)
		}
		// Waiting is not an error: no warning event about it.
		events := &corev1.EventList{}
		if err := lead.Client.List(ctx(t), events, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": burstName, "type": corev1.EventTypeWarning}); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			t.Errorf("warning event while Burst %s waits: %s %s (x%d)", burstName, e.Reason, e.Message, e.Count)
		}

		// The platform team installs the MiniCluster API in the burst
		// cluster; the Burst carries on by itself.
		start := time.Now()
		if err := remote.Install(ctx(t)); err != nil {
			t.Fatal(err)
		}
		t.Logf("installed the %s shape's XRD and Composition in the burst cluster in %s", remote.Shape(), time.Since(start).Round(100*time.Millisecond))

		// The controller creates the MiniCluster first, then the copy
		// for the uid it got: wait for both.
		s := &corev1.Secret{}
		eventually(t, 2*time.Minute, "the burst cluster holds the certificate copy and MiniCluster "+cluster, func() error {
			if err := wantBurstClaim(t, remote, target, cluster, "203.0.113.10", nodePort, root, 4,
				[]any{map[string]any{"name": cluster, "size": int64(4)}}); err != nil {
				return err
			}
			return remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: cluster + "-curve-cert"}, s)
		})
		if !bytes.Equal(s.Data[curveKey], rootCert) {
			t.Errorf("secret %s/%s curve.cert differs from the root's %s-curve-cert", target, s.Name, root)
		}
		if s.Labels[burstLabel] != burstName {
			t.Errorf("secret %s/%s labels = %v, want %s=%s", target, s.Name, s.Labels, burstLabel, burstName)
		}

		// The burst cluster's own Crossplane and function compose it.
		eventually(t, 2*time.Minute, "the burst cluster's function composed "+cluster+"-entrypoint and Job "+cluster, func() error {
			cm := &corev1.ConfigMap{}
			if err := remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: cluster + "-entrypoint"}, cm); err != nil {
				return err
			}
			return remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: cluster}, &batchv1.Job{})
		})
		checkBurstHosts(t, remote, target, cluster, "203.0.113.10", nodePort, "flux-sample-[1-3],burst-0-[0-3]")
		checkSameRanks(t, lead, ns, root, remote, target, cluster)
		checkJobMountsSecret(t, remote, target, cluster, cluster+"-curve-cert")
		if err := remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: cluster + "-lead-broker"}, &corev1.Service{}); !kerrors.IsNotFound(err) {
			t.Errorf("the burst composed a lead broker Service of its own (err %v); only a root has one", err)
		}
		checkServedShape(t, remote, target, cluster)

		eventually(t, time.Minute, "Burst "+burstName+" is Synced with status.atProvider", func() error {
			return wantBurst(t, lead, ns, burstName, map[string]any{
				"address": "203.0.113.10", "port": int64(nodePort), "node": "node-a",
				"claim": target + "/" + cluster, "curveCertSecret": target + "/" + cluster + "-curve-cert",
			}, "Synced")
		})
		// Play the burst cluster's kubelet: once its brokers are up, the
		// burst MiniCluster is Ready and so is the Burst.
		eventually(t, 2*time.Minute, "the burst MiniCluster is Ready and the Burst says so", func() error {
			if _, err := remote.MarkPodsReady(ctx(t), target, map[string]string{batchv1.JobNameLabel: cluster}); err != nil {
				return err
			}
			return wantBurst(t, lead, ns, burstName, map[string]any{"claimReady": true}, "Synced", "Ready")
		})

		// The ProviderConfig is in use: deleting it leaves it Terminating,
		// counting its user, until the Burst is gone (last step).
		if err := lead.Client.Delete(ctx(t), pc); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "ProviderConfig "+ns+"/"+pc.GetName()+" in use stays, Terminating with 1 user", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(pc.GroupVersionKind())
			if err := lead.Client.Get(ctx(t), client.ObjectKeyFromObject(pc), got); err != nil {
				return err
			}
			users, _, _ := unstructured.NestedInt64(got.Object, "status", "users")
			if got.GetDeletionTimestamp() == nil || users != 1 {
				return fmt.Errorf("deletionTimestamp %v, status.users %d; want set and 1", got.GetDeletionTimestamp(), users)
			}
			return wantConditionReason(got, "Terminating", "True", "InUse")
		})
	})

	step(t, "the lead broker moves to node-b and the burst follows", func(t *testing.T) {
		if _, err := lead.CreateNode(ctx(t), "node-b", nodeAddrB...); err != nil {
			t.Fatal(err)
		}
		// Play node-a's kubelet evicting the lead: the pod fails with the
		// DisruptionTarget condition (the Job's pod failure policy ignores
		// it) and, as nothing would finish a graceful delete without a
		// kubelet, is deleted at once. The job controller replaces it (same
		// index) once it has failed, and the "scheduler" binds the new one
		// to node-b.
		evictPod(t, lead, leadPod)
		if err := lead.Client.Delete(ctx(t), leadPod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		t.Logf("deleted lead pod %s (uid %s) on node-a", leadPod.Name, leadPod.UID)
		leadPod = bindLeadPod(t, lead, ns, root, leadPod.UID, "node-b")
		eventually(t, time.Minute, "the burst MiniCluster's leadBroker.address follows to 203.0.113.20", func() error {
			return wantBurstClaim(t, remote, target, cluster, "203.0.113.20", nodePort, root, 4, nil)
		})
		eventually(t, time.Minute, "the burst cluster's broker.toml follows", func() error {
			return burstHostsErr(t, remote, target, cluster, "203.0.113.20", nodePort, "flux-sample-[1-3],burst-0-[0-3]")
		})
		eventually(t, 30*time.Second, "Burst "+burstName+" reports node-b", func() error {
			return wantBurst(t, lead, ns, burstName, map[string]any{"address": "203.0.113.20", "node": "node-b"}, "Synced")
		})
	})

	step(t, "a Burst into another namespace of the lead cluster (a ClusterProviderConfig with source InjectedIdentity that allows the namespace and the target), waiting for the root's lead pod first", func(t *testing.T) {
		const root2, cluster2, burst2 = "flux-two", "burst-1", "flux-two-burst-1"
		objs := burstExample(t, lead)
		// The platform team lends the provider's own identity to the
		// Bursts of ns, to write in localNS only.
		cpc := objs["ClusterProviderConfig"]
		setField(t, cpc, []any{ns}, "spec", "allowedNamespaces")
		setField(t, cpc, []any{localNS}, "spec", "targetNamespaces")
		if err := lead.Client.Create(ctx(t), cpc); err != nil {
			t.Fatal(err)
		}
		createNamespace(t, lead, localNS)
		two := exampleClaim(t, lead, "examples/bursting-root/claim.yaml", ns, root2)
		// Its own cluster entry, and a node port Kubernetes picks (the
		// example's 30093 is flux-sample's).
		setField(t, two, []any{map[string]any{"name": cluster2, "size": int64(2)}}, "spec", "flux", "bursting", "clusters")
		unstructured.RemoveNestedField(two.Object, "spec", "flux", "bursting", "leadBrokerService")
		createRoot(t, lead, two)
		port2, cert2 := waitRoot(t, lead, ns, root2)
		if port2 == nodePort {
			t.Fatalf("%s got node port %d, the same as %s", root2, port2, root)
		}
		b := objs["Burst"]
		b.SetNamespace(ns)
		b.SetName(burst2)
		setField(t, b, map[string]any{"kind": "ClusterProviderConfig", "name": cpc.GetName()}, "spec", "providerConfigRef")
		setField(t, b, root2, "spec", "forProvider", "root")
		setField(t, b, cluster2, "spec", "forProvider", "cluster")
		setField(t, b, localNS, "spec", "forProvider", "targetNamespace")
		if err := lead.Client.Create(ctx(t), b); err != nil {
			t.Fatal(err)
		}
		// The root's lead pod is not scheduled yet: the Burst says it waits,
		// as a condition, and is not in error.
		eventually(t, time.Minute, "Burst "+burst2+" waits for the lead pod (Ready=False WaitingForRoot, Synced=True)", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(burstGVK)
			if err := lead.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: burst2}, got); err != nil {
				return err
			}
			if err := wantConditionReason(got, "Ready", "False", burstctl.ReasonWaitingForRoot); err != nil {
				return err
			}
			return wantCondition(got, "Synced", "True")
		})
		if _, err := getClaim(t, lead, localNS, cluster2); !kerrors.IsNotFound(err) {
			t.Errorf("MiniCluster %s/%s made while the Burst waits: %v", localNS, cluster2, err)
		}
		// An Observe-only Burst of the same cluster reads and reports, makes
		// nothing, and goes without deleting anything.
		observer := b.DeepCopy()
		observer.SetName(burst2 + "-observer")
		observer.SetResourceVersion("")
		observer.SetUID("")
		setField(t, observer, []any{"Observe"}, "spec", "managementPolicies")
		if err := lead.Client.Create(ctx(t), observer); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the Observe-only Burst reports the wait too (Ready=False WaitingForRoot)", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(burstGVK)
			if err := lead.Client.Get(ctx(t), client.ObjectKeyFromObject(observer), got); err != nil {
				return err
			}
			return wantConditionReason(got, "Ready", "False", burstctl.ReasonWaitingForRoot)
		})
		if err := lead.Client.Delete(ctx(t), observer); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the Observe-only Burst is gone", func() error {
			if err := lead.Client.Get(ctx(t), client.ObjectKeyFromObject(observer), observer.DeepCopy()); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		if _, err := getClaim(t, lead, localNS, cluster2); !kerrors.IsNotFound(err) {
			t.Errorf("MiniCluster %s/%s made by an Observe-only Burst: %v", localNS, cluster2, err)
		}
		if _, err := lead.CreateNode(ctx(t), "node-c", nodeAddrC...); err != nil {
			t.Fatal(err)
		}
		bindLeadPod(t, lead, ns, root2, "", "node-c")
		s := &corev1.Secret{}
		eventually(t, 2*time.Minute, "MiniCluster "+localNS+"/"+cluster2+" and its certificate copy appear in the lead cluster", func() error {
			if err := wantBurstClaim(t, lead, localNS, cluster2, "10.0.0.3", port2, root2, 2,
				[]any{map[string]any{"name": cluster2, "size": int64(2)}}); err != nil {
				return err
			}
			return lead.Client.Get(ctx(t), client.ObjectKey{Namespace: localNS, Name: cluster2 + "-curve-cert"}, s)
		})
		if !bytes.Equal(s.Data[curveKey], cert2) {
			t.Errorf("secret %s/%s curve.cert differs from %s's", localNS, s.Name, root2)
		}
		if bytes.Equal(cert2, rootCert) {
			t.Errorf("%s and %s have the same CURVE certificate", root2, root)
		}
		eventually(t, 2*time.Minute, "the lead cluster's function composed "+cluster2+"-entrypoint", func() error {
			return burstHostsErr(t, lead, localNS, cluster2, "10.0.0.3", port2, "flux-two-[1-3],burst-1-[0-1]")
		})
		checkServedShape(t, lead, localNS, cluster2)
		eventually(t, time.Minute, "Burst "+burst2+" is Synced", func() error {
			return wantBurst(t, lead, ns, burst2, map[string]any{"address": "10.0.0.3", "port": int64(port2), "claim": localNS + "/" + cluster2}, "Synced")
		})
		// Nothing of it went to the burst cluster.
		if _, err := getClaim(t, remote, localNS, cluster2); !kerrors.IsNotFound(err) {
			t.Errorf("MiniCluster %s/%s in the burst cluster: %v, want not found", localNS, cluster2, err)
		}
	})

	step(t, "deleting the Burst deletes what it made in the burst cluster, and only that", func(t *testing.T) {
		b := &unstructured.Unstructured{}
		b.SetGroupVersionKind(burstGVK)
		b.SetNamespace(ns)
		b.SetName(burstName)
		if err := lead.Client.Delete(ctx(t), b); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "MiniCluster "+cluster+", its Secret and the Burst are gone", func() error {
			var left []string
			if _, err := getClaim(t, remote, target, cluster); !kerrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("MiniCluster %s/%s (%v)", target, cluster, err))
			}
			if err := remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: cluster + "-curve-cert"}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("Secret %s/%s-curve-cert (%v)", target, cluster, err))
			}
			if err := lead.Client.Get(ctx(t), client.ObjectKeyFromObject(b), b.DeepCopy()); !kerrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("Burst %s (%v)", burstName, err))
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		// What the burst cluster's Crossplane composed for it goes with it.
		eventually(t, 2*time.Minute, "the burst MiniCluster's Job and entrypoint ConfigMap are gone", func() error {
			var left []string
			for _, o := range []client.Object{&batchv1.Job{}, &corev1.ConfigMap{}} {
				name := cluster
				if _, ok := o.(*corev1.ConfigMap); ok {
					name += "-entrypoint"
				}
				if err := remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: name}, o); !kerrors.IsNotFound(err) {
					left = append(left, fmt.Sprintf("%T %s/%s (%v)", o, target, name, err))
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		eventually(t, time.Minute, "ProviderConfig "+ns+"/cloud, no longer in use, is gone", func() error {
			pc := &unstructured.Unstructured{}
			pc.SetGroupVersionKind(schema.GroupVersionKind{Group: "bursting.flux-framework.org", Version: "v1alpha1", Kind: "ProviderConfig"})
			if err := lead.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "cloud"}, pc); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		s := &corev1.Secret{}
		if err := remote.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: "unrelated"}, s); err != nil {
			t.Errorf("the unrelated Secret in %s: %v", target, err)
		}
		if _, err := getClaim(t, lead, localNS, "burst-1"); err != nil {
			t.Errorf("the other Burst's MiniCluster %s/burst-1: %v", localNS, err)
		}
		if _, err := getClaim(t, lead, ns, root); err != nil {
			t.Errorf("the root %s/%s: %v", ns, root, err)
		}
	})

	t.Logf("%s took %s", t.Name(), time.Since(begin).Round(100*time.Millisecond))
}

// ---------------------------------------------------------------- setup

// startBurstClusters builds the function and the provider once and starts
// the lead and burst control planes, of the given shapes, in parallel. Both
// are stopped when the test ends; when it fails their logs (and the
// provider's, in the lead's log directory) are kept and their last lines
// printed.
func startBurstClusters(t *testing.T, leadShape, burstShape driver.Shape) (lead, remote *harness.ControlPlane, provider string) {
	t.Helper()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
	c, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := harness.FindTools(c, repo)
	if err != nil {
		t.Fatalf("%s is set but %v", EnvE2E, err)
	}
	bin := t.TempDir()

	start := time.Now()
	var fn string
	var fnErr, pvErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); fn, fnErr = harness.BuildFunction(c, repo, bin) }()
	go func() {
		defer wg.Done()
		provider, pvErr = harness.BuildBinary(c, repo, "./cmd/provider", bin, "provider")
	}()
	wg.Wait()
	if err := errors.Join(fnErr, pvErr); err != nil {
		t.Fatal(err)
	}
	logf("e2e: built the function and the provider in %s", time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	cps := make([]*harness.ControlPlane, 2)
	errs := make([]error, 2)
	for i, shape := range []driver.Shape{leadShape, burstShape} {
		name := []string{"lead", "burst"}[i]
		if shape == driver.ShapeV2 {
			name += "-v2"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cps[i], errs[i] = harness.Start(c, harness.Options{
				Name: name, RepoRoot: repo, Tools: &tools, FunctionBinary: fn, Shape: shape,
				Debug: os.Getenv("MC_E2E_DEBUG") != "", Logf: logf,
				// The burst cluster gets the MiniCluster API only once
				// the test has seen a Burst wait for it.
				SkipInstall: i == 1,
			})
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		// Both stop at once: each takes a while (Crossplane's graceful
		// shutdown).
		var wg sync.WaitGroup
		for _, cp := range cps {
			if cp == nil {
				continue
			}
			// MC_E2E_KEEP=1 keeps the logs of a passing run too (e.g.
			// the provider's, to see what it did).
			if os.Getenv("MC_E2E_KEEP") != "" {
				cp.KeepDir()
			}
			if t.Failed() {
				cp.KeepDir()
				fmt.Fprintf(os.Stderr, "\ne2e: %s failed; %s control-plane logs are kept in %s\n", t.Name(), cp.Options().Name, cp.LogDir)
				cp.DumpLogs(os.Stderr, 40)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := cp.Stop(); err != nil {
					t.Log(err)
				}
			}()
		}
		wg.Wait()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	logf("e2e: lead and burst control planes up in %s", time.Since(start).Round(100*time.Millisecond))
	return cps[0], cps[1], provider
}

// allowNodePorts labels a namespace for NodePorts, as a platform team does
// for the namespaces of burst roots (the function's policy.nodePorts).
func allowNodePorts(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"minicluster.flux-framework.org/node-ports":"true"}}}`)
	if err := cp.Client.Patch(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// createRoot creates a root claim. Unlike createClaim it does not delete
// it when the (sub)test ends: steps build on it, and the control plane
// goes away with the test.
func createRoot(t *testing.T, cp *harness.ControlPlane, c *unstructured.Unstructured) {
	t.Helper()
	if err := cp.Client.Create(ctx(t), c); err != nil {
		t.Fatalf("cannot create MiniCluster %s/%s: %v", c.GetNamespace(), c.GetName(), err)
	}
}

// installProviderCRDs applies package/provider/crds and waits until they
// are served.
func installProviderCRDs(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cp.Options().RepoRoot, "package", "provider", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no provider CRDs in package/provider/crds (%v)", err)
	}
	var names []string
	for _, f := range files {
		objs, err := harness.ReadObjects(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Apply(ctx(t), objs...); err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			names = append(names, o.GetName())
		}
	}
	eventually(t, time.Minute, "the provider CRDs are established", func() error {
		return crdsEstablished(t, cp, names...)
	})
}

// startProvider runs cmd/provider against cp (admin kubeconfig: no RBAC
// needed) with a 2s poll, and waits for its health endpoint.
func startProvider(t *testing.T, cp *harness.ControlPlane, bin string) {
	t.Helper()
	p, err := cp.StartProvider(ctx(t), bin, cp.Kubeconfig, "--debug", "--poll=2s")
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: the provider stops before the
	// control planes.
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
	})
}

// burstExample reads examples/bursting/burst.yaml by kind.
func burstExample(t *testing.T, cp *harness.ControlPlane) map[string]*unstructured.Unstructured {
	t.Helper()
	objs, err := harness.ReadObjects(filepath.Join(cp.Options().RepoRoot, "examples", "bursting", "burst.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		m[o.GetKind()] = o
	}
	for _, k := range []string{"Secret", "ProviderConfig", "Burst", "ClusterProviderConfig"} {
		if m[k] == nil {
			t.Fatalf("examples/bursting/burst.yaml has no %s", k)
		}
	}
	return m
}

func setField(t *testing.T, u *unstructured.Unstructured, v any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, v, fields...); err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------- roots

// waitRoot waits for the function to compose a root's NodePort lead broker
// Service (reported in the claim's status), its Job and its CURVE Secret,
// and returns the allocated node port and the certificate.
func waitRoot(t *testing.T, cp *harness.ControlPlane, ns, name string) (int32, []byte) {
	t.Helper()
	var port int32
	var cert []byte
	eventually(t, 2*time.Minute, "root "+name+" has its lead broker Service (reported in status), Job and CURVE Secret", func() error {
		svc := &corev1.Service{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-lead-broker"}, svc); err != nil {
			return err
		}
		if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort == 0 {
			return fmt.Errorf("service %s: type %s ports %v, want one NodePort", svc.Name, svc.Spec.Type, svc.Spec.Ports)
		}
		port = svc.Spec.Ports[0].NodePort
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, &batchv1.Job{}); err != nil {
			return err
		}
		s := &corev1.Secret{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-curve-cert"}, s); err != nil {
			return err
		}
		cert = s.Data[curveKey]
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		got, _, _ := unstructured.NestedMap(c.Object, "status", "leadBroker")
		if got["service"] != svc.Name || fmt.Sprint(got["nodePort"]) != fmt.Sprint(port) {
			return fmt.Errorf("claim status.leadBroker = %v, want service %s, nodePort %d", got, svc.Name, port)
		}
		return nil
	})
	if _, err := curve.Parse(cert); err != nil {
		t.Fatalf("root %s: curve.cert is not a certificate Flux accepts: %v", name, err)
	}
	t.Logf("root %s/%s: lead broker node port %d", ns, name, port)
	return port, cert
}

// bindLeadPod waits for the job controller to run the root's index-0 pod
// (not the one with uid old) and binds it to node, as the scheduler would.
func bindLeadPod(t *testing.T, cp *harness.ControlPlane, ns, root string, old types.UID, node string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, 2*time.Minute, "the job controller runs a new index-0 pod of "+root, func() error {
		pods := &corev1.PodList{}
		if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{
			batchv1.JobNameLabel: root, "batch.kubernetes.io/job-completion-index": "0",
		}); err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Spec.NodeName == "" && p.UID != old {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("%d index-0 pods, none new and unscheduled", len(pods.Items))
	})
	if err := cp.BindPod(ctx(t), ns, pod.Name, node); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != node {
		t.Fatalf("pod %s is on %q after binding, want %s", pod.Name, pod.Spec.NodeName, node)
	}
	t.Logf("bound lead pod %s/%s to %s", ns, pod.Name, node)
	return pod
}

// ---------------------------------------------------------------- checks

// wantBurstClaim checks a burst MiniCluster made by the controller: its
// size, certificate Secret, lead broker and (if not nil) clusters.
func wantBurstClaim(t *testing.T, cp *harness.ControlPlane, ns, name, address string, port int32, root string, size int64, clusters []any) error {
	c, err := getClaim(t, cp, ns, name)
	if err != nil {
		return err
	}
	var errs []string
	lb, _, _ := unstructured.NestedMap(c.Object, "spec", "flux", "bursting", "leadBroker")
	want := map[string]any{"address": address, "port": int64(port), "name": root, "size": int64(4)}
	if !reflect.DeepEqual(lb, want) {
		errs = append(errs, fmt.Sprintf("spec.flux.bursting.leadBroker = %v, want %v", lb, want))
	}
	if s, _, _ := unstructured.NestedInt64(c.Object, "spec", "size"); s != size {
		errs = append(errs, fmt.Sprintf("spec.size = %d, want %d", s, size))
	}
	if s, _, _ := unstructured.NestedString(c.Object, "spec", "flux", "curveCertSecret"); s != name+"-curve-cert" {
		errs = append(errs, fmt.Sprintf("spec.flux.curveCertSecret = %q, want %s-curve-cert", s, name))
	}
	if clusters != nil {
		got, _, _ := unstructured.NestedSlice(c.Object, "spec", "flux", "bursting", "clusters")
		if !reflect.DeepEqual(got, clusters) {
			errs = append(errs, fmt.Sprintf("spec.flux.bursting.clusters = %v, want %v (the root's)", got, clusters))
		}
	}
	if _, ok := c.GetLabels()[burstLabel]; !ok {
		errs = append(errs, fmt.Sprintf("labels %v lack %s", c.GetLabels(), burstLabel))
	}
	return errorsJoin(errs)
}

// checkServedShape checks that a burst MiniCluster the controller made is
// of the shape its control plane serves, and that Crossplane composed it as
// such: a claim has Crossplane's fields at the top of its spec and is bound
// to a cluster-scoped composite, which controls the Job; a v2 MiniCluster
// keeps them under spec.crossplane and controls the Job itself.
func checkServedShape(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	mc, err := getClaim(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	spec, _, _ := unstructured.NestedMap(mc.Object, "spec")
	xp, _, _ := unstructured.NestedMap(mc.Object, "spec", "crossplane")
	switch cp.Shape() {
	case driver.ShapeV2:
		if xp["compositionRef"] == nil || spec["resourceRef"] != nil || spec["compositionRef"] != nil {
			t.Errorf("v2 MiniCluster %s/%s: spec.crossplane %v, spec.resourceRef %v, spec.compositionRef %v; want Crossplane's fields under spec.crossplane only",
				ns, name, xp, spec["resourceRef"], spec["compositionRef"])
		}
	default:
		if spec["resourceRef"] == nil || xp != nil {
			t.Errorf("MiniCluster claim %s/%s: spec.resourceRef %v, spec.crossplane %v; want a claim bound to its composite", ns, name, spec["resourceRef"], xp)
		}
	}
	xr, err := compositeOf(t, cp, mc)
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{}
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	if err := ownedBy(job, xr); err != nil {
		t.Error(err)
	}
	t.Logf("MiniCluster %s/%s is of the %s shape; its Job is controlled by %s %s", ns, name, cp.Shape(), xr.GetKind(), xr.GetName())
}

// msgLacksAPI is what a Burst whose target lacks the MiniCluster API says.
const msgLacksAPI = "the target cluster does not serve the MiniCluster API (flux-framework.org/v1alpha2): " +
	"install Crossplane and the MiniCluster Configuration there (docs/bursting.md)"

// wantLacksAPI checks that a Burst waits for its target's MiniCluster API:
// Ready=False with reason TargetLacksMiniClusterAPI and the message that
// says what to install, and Synced=True.
func wantLacksAPI(t *testing.T, cp *harness.ControlPlane, ns, name string) error {
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(burstGVK)
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
		return err
	}
	if err := wantConditionReason(b, "Ready", "False", burstctl.ReasonTargetLacksAPI); err != nil {
		return err
	}
	if _, msg := harness.Condition(b, "Ready"); msg != msgLacksAPI {
		return fmt.Errorf("Burst %s/%s: Ready says %q, want %q", ns, name, msg, msgLacksAPI)
	}
	return wantCondition(b, "Synced", "True")
}

// wantBurst checks a Burst's status.atProvider fields and that the given
// conditions are True.
func wantBurst(t *testing.T, cp *harness.ControlPlane, ns, name string, atProvider map[string]any, conditions ...string) error {
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(burstGVK)
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
		return err
	}
	var errs []string
	for k, v := range atProvider {
		got, _, _ := unstructured.NestedFieldNoCopy(b.Object, "status", "atProvider", k)
		if fmt.Sprint(got) != fmt.Sprint(v) {
			errs = append(errs, fmt.Sprintf("status.atProvider.%s = %v, want %v", k, got, v))
		}
	}
	for _, c := range conditions {
		if err := wantCondition(b, c, "True"); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return errorsJoin(errs)
}

// brokerHosts is bootstrap.hosts of a ConfigMap's broker.toml.
func brokerHosts(t *testing.T, cp *harness.ControlPlane, ns, cm string) []map[string]any {
	t.Helper()
	h, _, err := brokerHostsErr(t, cp, ns, cm)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func brokerHostsErr(t *testing.T, cp *harness.ControlPlane, ns, name string) ([]map[string]any, string, error) {
	cm := &corev1.ConfigMap{}
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return nil, "", err
	}
	var broker struct {
		Bootstrap struct {
			Hosts []map[string]any `toml:"hosts"`
		} `toml:"bootstrap"`
	}
	if err := toml.NewDecoder(strings.NewReader(cm.Data["broker.toml"])).Decode(&broker); err != nil {
		return nil, "", fmt.Errorf("%s broker.toml does not parse: %w\n%s", name, err, cm.Data["broker.toml"])
	}
	return broker.Bootstrap.Hosts, cm.Data["broker.toml"], nil
}

// burstHostsErr checks a burst's broker.toml hosts: rank 0 reached at the
// lead's address and node port, then the root's other ranks and clusters.
func burstHostsErr(t *testing.T, cp *harness.ControlPlane, ns, cluster, address string, port int32, rest string) error {
	hosts, text, err := brokerHostsErr(t, cp, ns, cluster+"-entrypoint")
	if err != nil {
		return err
	}
	p := strconv.Itoa(int(port))
	want := []map[string]any{
		{"host": address, "bind": "tcp://eth0:" + p, "connect": "tcp://" + address + ":" + p},
		{"host": rest},
	}
	if !reflect.DeepEqual(hosts, want) {
		return fmt.Errorf("%s-entrypoint broker.toml hosts = %v, want %v", cluster, hosts, want)
	}
	line := fmt.Sprintf("hosts = [{host = '%s', bind = 'tcp://eth0:%s', connect = 'tcp://%s:%s'}, {host = '%s'}]", address, p, address, p, rest)
	if !strings.Contains(text, line) {
		return fmt.Errorf("%s-entrypoint broker.toml does not contain the documented line\n  %s\n%s", cluster, line, text)
	}
	return nil
}

func checkBurstHosts(t *testing.T, cp *harness.ControlPlane, ns, cluster, address string, port int32, rest string) {
	t.Helper()
	if err := burstHostsErr(t, cp, ns, cluster, address, port, rest); err != nil {
		t.Error(err)
	}
}

// checkSameRanks checks that the root's and the burst's host lists name the
// same host at every rank but 0, which the burst reaches by address.
func checkSameRanks(t *testing.T, rootCP *harness.ControlPlane, rootNS, root string, burstCP *harness.ControlPlane, burstNS, cluster string) {
	t.Helper()
	rh, _, err := brokerHostsErr(t, rootCP, rootNS, root+"-entrypoint")
	if err != nil {
		t.Fatal(err)
	}
	bh, _, err := brokerHostsErr(t, burstCP, burstNS, cluster+"-entrypoint")
	if err != nil {
		t.Fatal(err)
	}
	expand := func(hosts []map[string]any) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, expandHostlist(fmt.Sprint(h["host"]))...)
		}
		return out
	}
	r, b := expand(rh), expand(bh)
	if len(r) != len(b) || len(r) < 2 || !reflect.DeepEqual(r[1:], b[1:]) {
		t.Errorf("ranks differ:\n root:  %v\n burst: %v", r, b)
		return
	}
	t.Logf("root and burst agree on %d ranks; rank 0 is %s / %s", len(r), r[0], b[0])
}

// expandHostlist expands a host list the function wrote.
func expandHostlist(s string) []string {
	hosts, err := hostlist.Expand(s)
	if err != nil {
		return []string{"<" + err.Error() + ">"}
	}
	return hosts
}

// checkJobMountsSecret checks that a Job's pods mount a Secret.
func checkJobMountsSecret(t *testing.T, cp *harness.ControlPlane, ns, job, secret string) {
	t.Helper()
	j := &batchv1.Job{}
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: job}, j); err != nil {
		t.Fatal(err)
	}
	spec := j.Spec.Template.Spec
	for _, v := range spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret {
			continue
		}
		for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					t.Logf("job %s/%s: container %s mounts Secret %s at %s", ns, job, c.Name, secret, m.MountPath)
					return
				}
			}
		}
		t.Errorf("job %s/%s has volume %s of Secret %s but no container mounts it", ns, job, v.Name, secret)
		return
	}
	t.Errorf("job %s/%s has no volume of Secret %s", ns, job, secret)
}
