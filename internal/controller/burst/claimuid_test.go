package burst

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// copyKey is the certificate copy's key in the target.
var copyKey = types.NamespacedName{Namespace: "cloud", Name: "burst-0-curve-cert"}

// binding is how a certificate copy is tied to a burst MiniCluster, and
// what the Burst recorded of it.
type binding struct {
	Recorded   string // the Burst's status.atProvider.claimUID, on the API server
	Annotation string // the copy's claim-uid annotation
	Owners     []metav1.OwnerReference
}

func bindingOf(t *testing.T, local client.Client, b *v1alpha1.Burst, sec *corev1.Secret) binding {
	t.Helper()
	stored := &v1alpha1.Burst{}
	if err := local.Get(context.Background(), client.ObjectKeyFromObject(b), stored); err != nil {
		t.Fatal(err)
	}
	return binding{Recorded: stored.Status.AtProvider.ClaimUID, Annotation: sec.Annotations[v1alpha2.AnnotationBurstClaimUID], Owners: sec.OwnerReferences}
}

// TestCreateBindsTheCopyToTheClaimItMade checks the order of a Create: the
// burst MiniCluster first, its uid recorded in the Burst's status on the
// API server, and only then the copy of the root's certificate, annotated
// with that uid and owned by that MiniCluster. At the moment the copy is
// written the record already names the MiniCluster the copy is for.
func TestCreateBindsTheCopyToTheClaimItMade(t *testing.T) {
	ctx := context.Background()
	b := newBurst()
	local := rootWorld(t, b)
	var writes []string
	var atCopy binding // what the API server held as the copy was written
	target := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes = append(writes, "create "+kindOf(obj)+" "+obj.GetName())
			if sec, ok := obj.(*corev1.Secret); ok {
				atCopy = bindingOf(t, local, b, sec)
			}
			return createWithUID(ctx, c, obj, opts...)
		},
	}).Build()

	if _, err := newExternal(local, target).Create(ctx, b); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if diff := cmp.Diff([]string{"create MiniCluster burst-0", "create Secret burst-0-curve-cert"}, writes); diff != "" {
		t.Errorf("the burst MiniCluster comes first, so the copy can be written for it alone; writes: -want, +got:\n%s", diff)
	}
	claim := getClaim(t, target)
	if claim.GetUID() == "" {
		t.Fatal("the target gave the burst MiniCluster no uid")
	}
	sec := &corev1.Secret{}
	if err := target.Get(ctx, copyKey, sec); err != nil {
		t.Fatalf("the certificate copy: %v", err)
	}
	uid := string(claim.GetUID())
	want := binding{Recorded: uid, Annotation: uid, Owners: []metav1.OwnerReference{{
		APIVersion: "flux-framework.org/v1alpha2", Kind: "MiniCluster", Name: "burst-0", UID: claim.GetUID(),
	}}}
	if diff := cmp.Diff(want, atCopy); diff != "" {
		t.Errorf("as the copy was written: the Burst's record (on the API server) and the copy's annotation and owner: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(want, bindingOf(t, local, b, sec)); diff != "" {
		t.Errorf("after Create: -want, +got:\n%s", diff)
	}
	if string(sec.Data[v1alpha2.CurveCertKey]) != "certificate text" {
		t.Errorf("the copy holds %q, want the root's certificate", sec.Data[v1alpha2.CurveCertKey])
	}
}

// TestCreateTakesBackAClaimItCannotRecord checks that a burst MiniCluster
// whose uid the Burst could not record gets no certificate copy and is
// deleted: unrecorded, it would be foreign to the Burst from then on.
func TestCreateTakesBackAClaimItCannotRecord(t *testing.T) {
	b := newBurst()
	local := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(rootClaim(t), leadService(30093), rootSecret(), node("node-a", "10.0.0.1", "34.1.1.1"), leadPod("flux-sample-0-abcde", "node-a", time.Unix(100, 0)), b).
		WithStatusSubresource(&v1alpha1.Burst{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return kerrors.NewServiceUnavailable("the API server is going away")
		}}).Build()
	target, writes := recordingTarget(t, nil)
	_, err := newExternal(local, target).Create(context.Background(), b)
	if err == nil || !strings.Contains(err.Error(), "cannot record the uid of burst MiniCluster cloud/burst-0 in Burst hpc/to-cloud's status.atProvider.claimUID") {
		t.Errorf("Create: %v, want an error saying the uid could not be recorded", err)
	}
	if diff := cmp.Diff([]string{"create MiniCluster cloud/burst-0", "delete MiniCluster cloud/burst-0"}, *writes); diff != "" {
		t.Errorf("writes to the target: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{}, targetState(t, target)); diff != "" {
		t.Errorf("the target: -want, +got:\n%s", diff)
	}
}

// TestForgedLabelsGetNothing is a tenant of the target namespace, with
// MiniCluster rights only, who makes burst-0 before the Burst does and puts
// the Burst's own labels on it. Labels are the tenant's to write: the
// Burst, which made no MiniCluster yet, refuses it, writes no certificate
// for it, and neither patches nor deletes it.
func TestForgedLabelsGetNothing(t *testing.T) {
	refused := "MiniCluster cloud/burst-0 exists in the target cluster but was not made by this Burst (uid " + tenantClaimUID + "; this Burst has made none; labels do not make a MiniCluster the Burst's)"
	cases := map[string]struct {
		reason  string
		op      func(context.Context, *external, *v1alpha1.Burst) error
		wantErr string
	}{
		"Observe": {
			reason: "Observe must not take it for the Burst's and report the copy missing, which sends the reconciler to Create.",
			op: func(ctx context.Context, e *external, b *v1alpha1.Burst) error {
				_, err := e.Observe(ctx, b)
				return err
			},
			wantErr: refused,
		},
		"Create": {
			reason: "Create writes no copy of the root's certificate next to it.",
			op: func(ctx context.Context, e *external, b *v1alpha1.Burst) error {
				_, err := e.Create(ctx, b)
				return err
			},
			wantErr: refused,
		},
		"Update": {
			reason: "Update neither patches it nor writes a copy for it.",
			op: func(ctx context.Context, e *external, b *v1alpha1.Burst) error {
				_, err := e.Update(ctx, b)
				return err
			},
			wantErr: refused,
		},
		"Delete": {
			reason: "Deleting the Burst leaves the tenant's MiniCluster: the Burst did not make it.",
			op: func(ctx context.Context, e *external, b *v1alpha1.Burst) error {
				_, err := e.Delete(ctx, b)
				return err
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBurst()
			target, writes := recordingTarget(t, nil, forgedClaim(b))
			want := targetState(t, target)
			err := tc.op(context.Background(), newExternal(rootWorld(t, b.DeepCopy()), target), b)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s\n%s: %v", tc.reason, name, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%s\n%s: %v, want an error saying %q", tc.reason, name, err, tc.wantErr)
			}
			if len(*writes) > 0 {
				t.Errorf("%s\nwrites to the target: %v, want none", tc.reason, *writes)
			}
			if diff := cmp.Diff(want, targetState(t, target)); diff != "" {
				t.Errorf("%s\nthe target is not as the tenant left it: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRecreatedClaimGetsNoCopy is a tenant of the target namespace who
// deletes the Burst's genuine burst-0 and makes its own under the name,
// with the Burst's labels. Whether the garbage collector has taken the
// copy with the genuine MiniCluster or the copy lingers, every step of the
// reconcile refuses the new MiniCluster, naming it, and no Secret is
// written or updated for it; a lingering copy is deleted.
func TestRecreatedClaimGetsNoCopy(t *testing.T) {
	cases := map[string]struct {
		reason string
		gc     bool // the garbage collector deleted the copy with its owner
	}{
		"CopyCollected": {reason: "With the copy gone, nothing must read as 'the Burst's MiniCluster lacks its copy', which Create would write.", gc: true},
		"CopyLingers":   {reason: "A copy still there (the garbage collector has not got to it) is taken back, never rebound to the new MiniCluster.", gc: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := newBurst()
			local := rootWorld(t, b)
			target, writes := recordingTarget(t, nil)
			e := newExternal(local, target)
			if _, err := e.Create(ctx, b); err != nil {
				t.Fatalf("Create: %v", err)
			}
			genuine := getClaim(t, target)

			// The tenant, between two reconciles.
			if err := target.Delete(ctx, genuine); err != nil {
				t.Fatal(err)
			}
			if tc.gc {
				if err := target.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copyKey.Namespace, Name: copyKey.Name}}); err != nil {
					t.Fatal(err)
				}
			}
			forged := forgedClaim(b)
			forged.SetUID("")
			if err := target.Create(ctx, forged); err != nil {
				t.Fatal(err)
			}
			made := targetState(t, target)["MiniCluster/burst-0"]
			*writes = nil

			refused := "MiniCluster cloud/burst-0 exists in the target cluster but was not made by this Burst (uid " + string(forged.GetUID()) + ", not " + string(genuine.GetUID()) + ", the one this Burst made (status.atProvider.claimUID)"
			steps := []struct {
				name string
				op   func() error
			}{
				{"Observe", func() error { _, err := e.Observe(ctx, b); return err }},
				{"Create", func() error { _, err := e.Create(ctx, b); return err }},
				{"Update", func() error { _, err := e.Update(ctx, b); return err }},
			}
			for _, s := range steps {
				if err := s.op(); err == nil || !strings.Contains(err.Error(), refused) {
					t.Errorf("%s\n%s: %v, want an error saying %q", tc.reason, s.name, err, refused)
				}
			}
			var wantWrites []string
			if !tc.gc {
				wantWrites = []string{"delete Secret cloud/burst-0-curve-cert"}
			}
			if diff := cmp.Diff(wantWrites, *writes); diff != "" {
				t.Errorf("%s\nwrites to the target: -want, +got:\n%s", tc.reason, diff)
			}
			if err := target.Get(ctx, copyKey, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				t.Errorf("%s\nthe certificate copy next to the tenant's MiniCluster: %v, want not found", tc.reason, err)
			}
			if diff := cmp.Diff(map[string]any{"MiniCluster/burst-0": made}, targetState(t, target)); diff != "" {
				t.Errorf("%s\nthe target: -want, +got:\n%s", tc.reason, diff)
			}

			// Once the tenant's MiniCluster is gone, the Burst makes its
			// own again, records it, and binds a new copy to it.
			if err := target.Delete(ctx, forged); err != nil {
				t.Fatal(err)
			}
			if obs, err := e.Observe(ctx, b); err != nil || obs.ResourceExists {
				t.Fatalf("after the tenant's MiniCluster went: %+v, %v; want nothing of the Burst's there", obs, err)
			}
			if _, err := e.Create(ctx, b); err != nil {
				t.Fatalf("Create: %v", err)
			}
			again := getClaim(t, target)
			if again.GetUID() == genuine.GetUID() || again.GetUID() == forged.GetUID() {
				t.Fatalf("the new burst MiniCluster has uid %s, an old one's", again.GetUID())
			}
			sec := &corev1.Secret{}
			if err := target.Get(ctx, copyKey, sec); err != nil {
				t.Fatal(err)
			}
			if got := bindingOf(t, local, b, sec); got.Recorded != string(again.GetUID()) || got.Annotation != string(again.GetUID()) {
				t.Errorf("the Burst made burst-0 again: %+v, want it recorded and the copy annotated with its uid %s", got, again.GetUID())
			}
		})
	}
}

// TestStaleCacheIsNoRefusal checks a reconcile of a Burst read from the
// manager's cache before the record of its burst MiniCluster reached it:
// the MiniCluster is the Burst's (the API server says so), so nothing is
// refused or deleted.
func TestStaleCacheIsNoRefusal(t *testing.T) {
	ctx := context.Background()
	b := newBurst()
	local := rootWorld(t, b)
	target, writes := recordingTarget(t, nil)
	e := newExternal(local, target)
	if _, err := e.Create(ctx, b); err != nil {
		t.Fatalf("Create: %v", err)
	}
	*writes = nil
	stale := newBurst() // as it was before Create
	obs, err := e.Observe(ctx, stale)
	if err != nil || !obs.ResourceExists || !obs.ResourceUpToDate {
		t.Errorf("Observe of the Burst as the cache held it before Create: %+v, %v; want existing and up to date", obs, err)
	}
	if len(*writes) > 0 {
		t.Errorf("writes to the target: %v, want none", *writes)
	}
	if got, want := stale.Status.AtProvider.ClaimUID, string(getClaim(t, target).GetUID()); got != want {
		t.Errorf("status.atProvider.claimUID %q, want the API server's %q", got, want)
	}
}

// TestDeleteTakesOnlyTheRecordedClaim checks that deleting a Burst deletes
// the burst MiniCluster whose uid it recorded, and leaves one of the same
// name and labels that it did not make.
func TestDeleteTakesOnlyTheRecordedClaim(t *testing.T) {
	cases := map[string]struct {
		reason string
		claim  func(b *v1alpha1.Burst) *unstructured.Unstructured
		want   []string
	}{
		"Recorded": {
			reason: "The MiniCluster the Burst made goes, with its copy.",
			claim:  ourClaim,
			want:   []string{"delete MiniCluster cloud/burst-0", "delete Secret cloud/burst-0-curve-cert"},
		},
		"Forged": {
			reason: "A MiniCluster with the Burst's labels and another uid stays; the copy, the Burst's, goes.",
			claim:  forgedClaim,
			want:   []string{"delete Secret cloud/burst-0-curve-cert"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := recordedBurst()
			target, writes := recordingTarget(t, nil, tc.claim(b), ourSecret(b))
			if _, err := newExternal(rootWorld(t, b.DeepCopy()), target).Delete(context.Background(), b); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if diff := cmp.Diff(tc.want, *writes); diff != "" {
				t.Errorf("%s\nwrites to the target: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
