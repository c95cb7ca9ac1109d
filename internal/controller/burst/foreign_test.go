package burst

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// The uids of the objects these tests put in the target beforehand: the
// API server's, which no tenant chooses.
const (
	tenantClaimUID  = "a7e2c0de-0000-4000-8000-00000000000a"
	tenantSecretUID = "a7e2c0de-0000-4000-8000-00000000000b" //nolint:gosec // G101: a uid, not a credential
	ownClaimUID     = "0b5e55ed-0000-4000-8000-00000000000c"
)

// tenantClaim is a MiniCluster a tenant of the target namespace made under
// the burst claim's name: its pods would mount burst-0-curve-cert.
func tenantClaim() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"image": "tenant/exfiltrate:latest"}},
		"flux":       map[string]any{"curveCertSecret": "burst-0-curve-cert"}, //nolint:gosec // G101: a Secret's name, not its content
	}}}
	u.SetGroupVersionKind(v1alpha2.ClaimGVK())
	u.SetNamespace("cloud")
	u.SetName("burst-0")
	u.SetUID(tenantClaimUID)
	return u
}

// forgedClaim is tenantClaim with the labels the burst controller puts on
// its own burst MiniCluster for b: a tenant reads them off the genuine one,
// or off the docs.
func forgedClaim(b *v1alpha1.Burst) *unstructured.Unstructured {
	u := tenantClaim()
	u.SetLabels(labels(b))
	return u
}

// tenantSecret is a Secret a tenant of the target namespace made under the
// certificate copy's name.
func tenantSecret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "burst-0-curve-cert", Namespace: "cloud", UID: tenantSecretUID},
		Data:       map[string][]byte{v1alpha2.CurveCertKey: []byte("the tenant's own")},
	}
}

// ourClaim and ourSecret are what a Burst made earlier (recordedBurst
// records ourClaim's uid); the Secret holds a certificate the root has
// since replaced, so Update would rewrite it.
func ourClaim(b *v1alpha1.Burst) *unstructured.Unstructured {
	u := forgedClaim(b)
	u.SetUID(ownClaimUID)
	return u
}

func ourSecret(b *v1alpha1.Burst) *corev1.Secret {
	return DesiredSecret(b, []byte("an older certificate"))
}

// recordedBurst is a Burst that made ourClaim, as its status records.
func recordedBurst() *v1alpha1.Burst {
	b := newBurst()
	b.Status.AtProvider.ClaimUID = ownClaimUID
	return b
}

// kindOf names obj's kind whether or not its type meta is set.
func kindOf(obj client.Object) string {
	if _, ok := obj.(*corev1.Secret); ok {
		return "Secret"
	}
	return obj.GetObjectKind().GroupVersionKind().Kind
}

// recordingTarget is a target cluster holding objs that records every
// write the controller asks of it. race, if set, is created by "a tenant"
// just before the controller's create of an object of the same kind and
// name, as if the tenant won a race between Observe (or find) and Create.
func recordingTarget(t *testing.T, race client.Object, objs ...client.Object) (client.Client, *[]string) {
	t.Helper()
	var writes []string
	record := func(verb string, obj client.Object) {
		writes = append(writes, verb+" "+kindOf(obj)+" "+obj.GetNamespace()+"/"+obj.GetName())
	}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record("create", obj)
			if race != nil && kindOf(race) == kindOf(obj) && race.GetName() == obj.GetName() {
				if err := createWithUID(ctx, c, race.DeepCopyObject().(client.Object)); err != nil {
					t.Fatalf("the tenant's racing create: %v", err)
				}
			}
			return createWithUID(ctx, c, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			record("update", obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			record("patch", obj)
			return c.Patch(ctx, obj, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			record("delete", obj)
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	return c, &writes
}

// targetState is what the target's namespace cloud holds, by kind and name:
// labels and contents, what a tenant's MiniCluster would see.
func targetState(t *testing.T, c client.Client) map[string]any {
	t.Helper()
	state := map[string]any{}
	secrets := &corev1.SecretList{}
	if err := c.List(context.Background(), secrets, client.InNamespace("cloud")); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		state["Secret/"+s.Name] = map[string]any{"labels": s.Labels, "data": s.Data}
	}
	claims := &unstructured.UnstructuredList{}
	claims.SetGroupVersionKind(v1alpha2.SchemeGroupVersion.WithKind(v1alpha2.ClaimKind + "List"))
	if err := c.List(context.Background(), claims, client.InNamespace("cloud")); err != nil {
		t.Fatal(err)
	}
	for _, u := range claims.Items {
		state["MiniCluster/"+u.GetName()] = map[string]any{"labels": u.GetLabels(), "spec": u.Object["spec"]}
	}
	return state
}

// TestExternalWritesNothingOverForeignObjects is issue 33: a tenant of the
// target namespace who creates a MiniCluster (or a Secret) under the name a
// Burst writes must not get the root's CURVE certificate. Whichever step
// of the reconcile meets the foreign object refuses, naming it and the
// fix, and the target is left as the tenant made it, less the Burst's own
// copy of the certificate where one was next to a foreign MiniCluster.
func TestExternalWritesNothingOverForeignObjects(t *testing.T) {
	observe := func(e *external, b *v1alpha1.Burst) error { _, err := e.Observe(context.Background(), b); return err }
	create := func(e *external, b *v1alpha1.Burst) error { _, err := e.Create(context.Background(), b); return err }
	update := func(e *external, b *v1alpha1.Burst) error { _, err := e.Update(context.Background(), b); return err }
	fix := "delete it, or choose another cluster name (spec.forProvider.cluster) or target namespace (spec.forProvider.targetNamespace)"
	claimRefused := []string{"MiniCluster cloud/burst-0 exists in the target cluster but was not made by this Burst", fix}
	secretRefused := []string{"Secret cloud/burst-0-curve-cert exists in the target cluster but was not made by this Burst", fix}
	cases := map[string]struct {
		reason     string
		recorded   bool // the Burst made ourClaim earlier
		target     func(b *v1alpha1.Burst) []client.Object
		race       client.Object
		op         func(*external, *v1alpha1.Burst) error
		wantErr    []string
		wantWrites []string
		taken      []string // what of the target's state the Burst takes back
	}{
		"ObserveForeignClaim": {
			reason:  "A foreign MiniCluster without the Secret must not read as 'nothing exists yet', which sends the reconciler to Create.",
			target:  func(*v1alpha1.Burst) []client.Object { return []client.Object{tenantClaim()} },
			op:      observe,
			wantErr: claimRefused,
		},
		"CreateForeignClaim": {
			reason:  "Create looks again before it writes, and writes nothing next to a foreign MiniCluster.",
			target:  func(*v1alpha1.Burst) []client.Object { return []client.Object{tenantClaim()} },
			op:      create,
			wantErr: claimRefused,
		},
		"ObserveForeignSecret": {
			reason:  "A foreign Secret of the copy's name without the claim is refused too, not created over.",
			target:  func(*v1alpha1.Burst) []client.Object { return []client.Object{tenantSecret()} },
			op:      observe,
			wantErr: secretRefused,
		},
		"CreateForeignSecret": {
			reason:  "Create does not take an existing foreign Secret for its own and go on to create the MiniCluster that would mount it.",
			target:  func(*v1alpha1.Burst) []client.Object { return []client.Object{tenantSecret()} },
			op:      create,
			wantErr: secretRefused,
		},
		"UpdateForeignClaim": {
			reason:     "A tenant who replaced the burst MiniCluster with its own after Observe gets neither the refreshed certificate nor a patch, and the copy the Burst wrote for its own MiniCluster is taken back.",
			recorded:   true,
			target:     func(b *v1alpha1.Burst) []client.Object { return []client.Object{tenantClaim(), ourSecret(b)} },
			op:         update,
			wantErr:    claimRefused,
			wantWrites: []string{"delete Secret cloud/burst-0-curve-cert"},
			taken:      []string{"Secret/burst-0-curve-cert"},
		},
		"UpdateForeignSecret": {
			reason:   "The root's certificate is never written into a Secret this Burst did not make.",
			recorded: true,
			target:   func(b *v1alpha1.Burst) []client.Object { return []client.Object{ourClaim(b), tenantSecret()} },
			op:       update,
			wantErr:  secretRefused,
		},
		"CreateRacedByClaim": {
			reason:     "A tenant who creates the MiniCluster between Create's look and its create is refused on AlreadyExists, before any certificate is written.",
			race:       tenantClaim(),
			op:         create,
			wantErr:    claimRefused,
			wantWrites: []string{"create MiniCluster cloud/burst-0"},
		},
		"CreateRacedBySecret": {
			reason:     "Someone who creates the Secret between Create's look and its create is refused on AlreadyExists, and the MiniCluster just made, which would mount it, is taken back.",
			race:       tenantSecret(),
			op:         create,
			wantErr:    secretRefused,
			wantWrites: []string{"create MiniCluster cloud/burst-0", "create Secret cloud/burst-0-curve-cert", "delete MiniCluster cloud/burst-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBurst()
			if tc.recorded {
				b = recordedBurst()
			}
			var objs []client.Object
			if tc.target != nil {
				objs = tc.target(b)
			}
			target, writes := recordingTarget(t, tc.race, objs...)
			want := targetState(t, target)
			if tc.race != nil {
				want = targetState(t, localClient(t, append([]client.Object{tc.race.DeepCopyObject().(client.Object)}, objs...)...))
			}
			for _, k := range tc.taken {
				delete(want, k)
			}
			err := tc.op(newExternal(rootWorld(t, b.DeepCopy()), target), b)
			if err == nil {
				t.Fatalf("%s\ngot no error, want one saying %q", tc.reason, tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s\nerror %q, want it to contain %q", tc.reason, err, w)
				}
			}
			if diff := cmp.Diff(tc.wantWrites, *writes); diff != "" {
				t.Errorf("%s\nwrites to the target: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(want, targetState(t, target)); diff != "" {
				t.Errorf("%s\nthe target is not as the tenant left it: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
