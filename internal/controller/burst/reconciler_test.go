package burst

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	rfake "github.com/crossplane/crossplane-runtime/v2/pkg/resource/fake"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// sameCluster is a ClusterProviderConfig whose target is the cluster the
// controller runs in, for Bursts of namespace hpc writing in cloud.
func sameCluster() *v1alpha1.ClusterProviderConfig {
	return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials:       v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity},
		AllowedNamespaces: []string{"hpc"},
		TargetNamespaces:  []string{"cloud"},
	}}
}

// managedBurst is a Burst as the API server holds it after its first
// reconcile: with a provider config reference, the management policies its
// schema defaults, and the reconciler's finalizer (adding it rewrites the
// object, which drops the status of that first pass).
func managedBurst() *v1alpha1.Burst {
	b := newBurst()
	b.SetUID("5e1d3c2a-0000-4000-8000-000000000001")
	b.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"})
	b.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionAll})
	b.SetFinalizers([]string{managed.FinalizerName})
	return b
}

// apiClient is a fake API server client that reads like the manager's
// cached client: objects come back with their kind set (crossplane-runtime's
// provider config reconciler selects usages by it).
func apiClient(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	s := testScheme(t)
	get := func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if funcs != nil && funcs.Get != nil {
			if err := funcs.Get(ctx, c, key, obj, opts...); err != nil {
				return err
			}
		} else if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		if gvk, err := apiutil.GVKForObject(obj, s); err == nil {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return nil
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.Burst{}, &v1alpha1.ProviderConfig{}, &v1alpha1.ClusterProviderConfig{}).
		WithInterceptorFuncs(interceptor.Funcs{Get: get, Create: createWithUID}).Build()
}

// reconcileBurst runs the Burst reconciler once, as the controller does.
func reconcileBurst(t *testing.T, c client.Client) (reconcile.Result, *v1alpha1.Burst) {
	t.Helper()
	r := NewReconciler(&rfake.Manager{Client: c, Scheme: testScheme(t)}, c, logging.NewNopLogger(), event.NewNopRecorder(), time.Minute)
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	got := &v1alpha1.Burst{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}, got); err != nil {
		t.Fatal(err)
	}
	return res, got
}

func claimExists(t *testing.T, c client.Client) bool {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha2.ClaimGVK())
	return c.Get(context.Background(), types.NamespacedName{Namespace: "cloud", Name: "burst-0"}, u) == nil
}

type condition struct {
	Status corev1.ConditionStatus
	Reason xpv2.ConditionReason
}

func TestReconcile(t *testing.T) {
	noMatch := &interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if obj.GetObjectKind().GroupVersionKind() == v1alpha2.ClaimGVK() && key.Namespace == "cloud" {
			return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: v1alpha2.Group, Kind: v1alpha2.ClaimKind}, SearchedVersions: []string{v1alpha2.Version}}
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	type want struct {
		created     bool // the burst MiniCluster exists in the target (whoever made it)
		copied      bool // the certificate copy does
		recorded    bool // the stored Burst's status.atProvider.claimUID is the burst MiniCluster's uid
		synced      condition
		ready       condition
		requeue     time.Duration
		msgContains string
	}
	cases := map[string]struct {
		reason string
		burst  func(*v1alpha1.Burst)
		world  []client.Object // besides the default ClusterProviderConfig
		funcs  *interceptor.Funcs
		want   want
	}{
		"Creates": {
			reason: "A Burst whose root is up creates the burst MiniCluster in the target.",
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			want:   want{created: true, copied: true, recorded: true, synced: condition{corev1.ConditionTrue, xpv2.ReasonReconcileSuccess}, ready: condition{corev1.ConditionFalse, xpv2.ReasonCreating}},
		},
		"CreatePendingIsNoDeadlock": {
			reason: "The target objects are named by the Burst's spec, so a create that crashed before it was recorded (create-pending without create-succeeded) is safe to retry instead of needing the annotation removed by hand.",
			burst:  func(b *v1alpha1.Burst) { xpmeta.SetExternalCreatePending(b, time.Now().Add(-time.Minute)) },
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			want:   want{created: true, copied: true, recorded: true, synced: condition{corev1.ConditionTrue, xpv2.ReasonReconcileSuccess}, ready: condition{corev1.ConditionFalse, xpv2.ReasonCreating}},
		},
		"ObserveOnly": {
			reason: "With managementPolicies [Observe] the Burst only reads: nothing is created in the target.",
			burst: func(b *v1alpha1.Burst) {
				b.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
			},
			world: []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			want:  want{created: false, synced: condition{corev1.ConditionFalse, xpv2.ReasonReconcileError}, msgContains: "does not exist"},
		},
		"WaitsForTheLeadPod": {
			reason: "No scheduled lead pod yet is normal: Ready=False says what the Burst waits for, Synced stays True, and it looks again soon.",
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret()},
			want:   want{created: false, synced: condition{corev1.ConditionTrue, xpv2.ReasonReconcileSuccess}, ready: condition{corev1.ConditionFalse, ReasonWaitingForRoot}, requeue: waitPoll, msgContains: "lead broker pod to be scheduled"},
		},
		"WaitsForTheNodePort": {
			reason: "A lead broker Service without a node port yet is waited for, not an error.",
			world:  []client.Object{rootClaim(t), leadService(0), rootSecret()},
			want:   want{created: false, synced: condition{corev1.ConditionTrue, xpv2.ReasonReconcileSuccess}, ready: condition{corev1.ConditionFalse, ReasonWaitingForRoot}, requeue: waitPoll, msgContains: "node port"},
		},
		"TargetLacksTheMiniClusterAPI": {
			reason: "A target without the MiniCluster API gets a condition that says what to install, not a repeated error.",
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			funcs:  noMatch,
			want:   want{created: false, synced: condition{corev1.ConditionTrue, xpv2.ReasonReconcileSuccess}, ready: condition{corev1.ConditionFalse, ReasonTargetLacksAPI}, requeue: waitPoll, msgContains: "install Crossplane and the MiniCluster Configuration"},
		},
		"RefusedForeignClaim": {
			reason: "A MiniCluster of the burst claim's name that a tenant of the target namespace made first is Synced=False, naming it and the fix, and gets no certificate copy.",
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0)), tenantClaim()},
			want:   want{created: true, copied: false, synced: condition{corev1.ConditionFalse, xpv2.ReasonReconcileError}, msgContains: "MiniCluster cloud/burst-0 exists in the target cluster but was not made by this Burst"},
		},
		"RefusedForgedClaim": {
			reason: "A MiniCluster of the burst claim's name that a tenant of the target namespace made first, with the Burst's own labels, is refused the same: the Burst made none.",
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0)), forgedClaim(newBurst())},
			want:   want{created: true, copied: false, synced: condition{corev1.ConditionFalse, xpv2.ReasonReconcileError}, msgContains: "MiniCluster cloud/burst-0 exists in the target cluster but was not made by this Burst"},
		},
		"RefusedTargetNamespace": {
			reason: "A target namespace the ClusterProviderConfig does not allow is Synced=False, naming the field, and nothing is created anywhere.",
			burst:  func(b *v1alpha1.Burst) { b.Spec.ForProvider.TargetNamespace = "kube-system" },
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			want:   want{created: false, synced: condition{corev1.ConditionFalse, xpv2.ReasonReconcileError}, msgContains: `connect failed: spec.forProvider.targetNamespace "kube-system" is not one of ClusterProviderConfig default's spec.targetNamespaces (cloud)`},
		},
		"RefusedNoProviderConfigRef": {
			reason: "A Burst stored without spec.providerConfigRef (before the CRD required it) is Synced=False, saying to set it.",
			burst:  func(b *v1alpha1.Burst) { b.SetProviderConfigReference(nil) },
			world:  []client.Object{rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0))},
			want:   want{created: false, synced: condition{corev1.ConditionFalse, xpv2.ReasonReconcileError}, msgContains: "spec.providerConfigRef is not set"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := managedBurst()
			if tc.burst != nil {
				tc.burst(b)
			}
			c := apiClient(t, tc.funcs, append([]client.Object{sameCluster(), b}, tc.world...)...)
			res, got := reconcileBurst(t, c)
			if claimExists(t, c) != tc.want.created {
				t.Errorf("%s\nburst MiniCluster created: %t, want %t", tc.reason, !tc.want.created, tc.want.created)
			}
			if got := c.Get(context.Background(), types.NamespacedName{Namespace: "cloud", Name: "burst-0-curve-cert"}, &corev1.Secret{}) == nil; got != tc.want.copied {
				t.Errorf("%s\ncertificate copied: %t, want %t", tc.reason, got, tc.want.copied)
			}
			// The record Create writes must survive the reconciler's own
			// writes of the Burst after Create.
			uid := got.Status.AtProvider.ClaimUID
			if recorded := uid != "" && claimExists(t, c) && uid == string(getClaim(t, c).GetUID()); recorded != tc.want.recorded {
				t.Errorf("%s\nstatus.atProvider.claimUID %q: recorded %t, want %t", tc.reason, uid, recorded, tc.want.recorded)
			}
			synced, ready := got.GetCondition(xpv2.TypeSynced), got.GetCondition(xpv2.TypeReady)
			if diff := cmp.Diff(tc.want.synced, condition{synced.Status, synced.Reason}); diff != "" {
				t.Errorf("%s\nSynced: -want, +got:\n%s (%s)", tc.reason, diff, synced.Message)
			}
			if tc.want.ready != (condition{}) {
				if diff := cmp.Diff(tc.want.ready, condition{ready.Status, ready.Reason}); diff != "" {
					t.Errorf("%s\nReady: -want, +got:\n%s (%s)", tc.reason, diff, ready.Message)
				}
			}
			if msg := synced.Message + ready.Message; !strings.Contains(msg, tc.want.msgContains) {
				t.Errorf("%s\nconditions say %q, want %q", tc.reason, msg, tc.want.msgContains)
			}
			if tc.want.requeue != 0 && res.RequeueAfter != tc.want.requeue {
				t.Errorf("%s\nrequeue after %v, want %v", tc.reason, res.RequeueAfter, tc.want.requeue)
			}
		})
	}
}

// TestProviderConfigInUse checks the provider config controllers: a config
// a Burst uses (it has a ProviderConfigUsage) cannot be deleted until the
// Burst is gone.
func TestProviderConfigInUse(t *testing.T) {
	cases := map[string]struct {
		reason string
		config client.Object
		kind   string
		key    types.NamespacedName
	}{
		"ProviderConfig": {
			reason: "A namespaced ProviderConfig counts the usages in its namespace.",
			config: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: "hpc", Finalizers: []string{"in-use.crossplane.io"}}},
			kind:   v1alpha1.ProviderConfigKind,
			key:    types.NamespacedName{Namespace: "hpc", Name: "cloud"},
		},
		"ClusterProviderConfig": {
			reason: "A ClusterProviderConfig counts the usages in every namespace.",
			config: &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Finalizers: []string{"in-use.crossplane.io"}}},
			kind:   v1alpha1.ClusterProviderConfigKind,
			key:    types.NamespacedName{Name: "cloud"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := managedBurst()
			b.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: tc.kind, Name: "cloud"})
			c := apiClient(t, nil, tc.config, b)
			// The Burst's connect records its usage, as every reconcile does.
			if err := resource.NewProviderConfigUsageTracker(c, &v1alpha1.ProviderConfigUsage{}).Track(ctx, b); err != nil {
				t.Fatal(err)
			}
			gv := v1alpha1.SchemeGroupVersion
			r := providerconfig.NewReconciler(&rfake.Manager{Client: c, Scheme: testScheme(t)}, resource.ProviderConfigKinds{
				Config: gv.WithKind(tc.kind), Usage: gv.WithKind(v1alpha1.ProviderConfigUsageKind), UsageList: gv.WithKind(v1alpha1.ProviderConfigUsageKind + "List"),
			})
			if err := c.Delete(ctx, tc.config); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: tc.key}); err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			pc := tc.config.DeepCopyObject().(resource.ProviderConfig)
			if err := c.Get(ctx, tc.key, pc); err != nil {
				t.Fatalf("%s\nthe provider config in use was deleted: %v", tc.reason, err)
			}
			if pc.GetUsers() != 1 {
				t.Errorf("%s\nusers %d, want 1", tc.reason, pc.GetUsers())
			}
			if c := pc.GetCondition(providerconfig.TypeTerminating); c.Status != corev1.ConditionTrue || c.Reason != providerconfig.ReasonInUse {
				t.Errorf("%s\nTerminating %s (%s), want True (InUse)", tc.reason, c.Status, c.Reason)
			}

			// The Burst goes, and its usage with it (garbage collection in a
			// real cluster); then the config may go.
			if err := c.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.InNamespace("hpc")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: tc.key}); err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			if err := c.Get(ctx, tc.key, pc); err == nil {
				t.Errorf("%s\nthe unused provider config was not released for deletion (finalizers %v)", tc.reason, pc.GetFinalizers())
			}
		})
	}
}

// TestDeleteRefused checks that a Burst the provider refuses can be
// deleted: the provider does nothing for it, not even delete, and nothing
// holds its finalizer.
func TestDeleteRefused(t *testing.T) {
	b := managedBurst()
	b.Spec.ForProvider.TargetNamespace = "kube-system"
	b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	c := apiClient(t, nil, sameCluster(), b)
	r := NewReconciler(&rfake.Manager{Client: c, Scheme: testScheme(t)}, c, logging.NewNopLogger(), event.NewNopRecorder(), time.Minute)
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	got := &v1alpha1.Burst{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}, got); err == nil {
		t.Errorf("the refused Burst is still there: finalizers %v, Synced %s", got.GetFinalizers(), got.GetCondition(xpv2.TypeSynced).Message)
	}
}

// TestDeleteWhileTargetLacksAPI checks that a Burst whose target does not
// serve the MiniCluster API can be deleted: it cannot have made anything
// there, so nothing may hold its finalizer.
func TestDeleteWhileTargetLacksAPI(t *testing.T) {
	claimGV := schema.GroupVersion{Group: v1alpha2.Group, Version: v1alpha2.Version}
	cases := map[string]struct {
		reason string
		err    error
	}{
		"NoKindMatch": {
			reason: "A REST mapper that knows the target's kinds says the kind has no match.",
			err:    &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: v1alpha2.Group, Kind: v1alpha2.ClaimKind}, SearchedVersions: []string{v1alpha2.Version}},
		},
		"DiscoveryFailed": {
			reason: "controller-runtime's lazy REST mapper, against an API server with aggregated discovery, says the group's discovery failed with a no-match inside.",
			err:    &apiutil.ErrResourceDiscoveryFailed{claimGV: &meta.NoResourceMatchError{PartialResource: claimGV.WithResource("")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			funcs := &interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if obj.GetObjectKind().GroupVersionKind() == v1alpha2.ClaimGVK() && key.Namespace == "cloud" {
					return tc.err
				}
				return c.Get(ctx, key, obj, opts...)
			}}
			b := managedBurst()
			b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			c := apiClient(t, funcs, sameCluster(), b, rootClaim(t), leadService(30093), rootSecret(),
				node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0)))
			r := NewReconciler(&rfake.Manager{Client: c, Scheme: testScheme(t)}, c, logging.NewNopLogger(), event.NewNopRecorder(), time.Minute)
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &v1alpha1.Burst{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "hpc", Name: "to-cloud"}, got); err == nil {
				t.Errorf("%s\nthe Burst is still there: finalizers %v, Synced %s", tc.reason, got.GetFinalizers(), got.GetCondition(xpv2.TypeSynced).Message)
			}
		})
	}
}
