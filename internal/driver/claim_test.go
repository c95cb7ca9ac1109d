package driver

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/claim"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured/composite"
)

func TestComposite(t *testing.T) {
	cases := map[string]struct {
		reason string
		claim  string
		want   string // YAML of the composite
	}{
		"ClaimFields": {
			reason: "A claim's own fields stay on the claim: its writeConnectionSecretToRef (a name only, which the composite's schema would refuse), resourceRef and compositeDeletePolicy. The composite is the one resourceRef names.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: tenant-a}
spec:
  size: 2
  writeConnectionSecretToRef: {name: flux-sample-connection}
  compositeDeletePolicy: Foreground
  resourceRef: {apiVersion: flux-framework.org/v1alpha2, kind: XMiniCluster, name: flux-sample-x7k2p}
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample-x7k2p
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: tenant-a}
spec:
  size: 2
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: tenant-a}
`,
		},
		"CompositeMachinery": {
			reason: "Fields only Crossplane sets on a composite are never copied from a claim: a claimRef naming another tenant's claim, resourceRefs naming another's objects, a compositionRevisionRef under the Automatic policy. The claimRef is the claim's own.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: tenant-a}
spec:
  size: 2
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: victim, namespace: tenant-b}
  resourceRefs: [{apiVersion: batch/v1, kind: Job, name: victim, namespace: tenant-b}]
  compositionRevisionRef: {name: miniclusters.flux-framework.org-abc1234}
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: tenant-a}
spec:
  size: 2
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: tenant-a}
`,
		},
		"CompositionFields": {
			reason: "The composition's selector, revision selector and update policy go to the composite; compositionRef does not, as the XRD enforces the Composition.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: tenant-a}
spec:
  size: 2
  compositionRef: {name: another-composition}
  compositionSelector: {matchLabels: {shape: claims}}
  compositionRevisionSelector: {matchLabels: {channel: stable}}
  compositionUpdatePolicy: Automatic
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: tenant-a}
spec:
  size: 2
  compositionSelector: {matchLabels: {shape: claims}}
  compositionRevisionSelector: {matchLabels: {channel: stable}}
  compositionUpdatePolicy: Automatic
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: tenant-a}
`,
		},
		"ManualRevision": {
			reason: "Under the Manual update policy the claim decides the composite's revision: compositionRevisionRef is copied.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: tenant-a}
spec:
  size: 2
  compositionUpdatePolicy: Manual
  compositionRevisionRef: {name: miniclusters.flux-framework.org-abc1234}
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: tenant-a}
spec:
  size: 2
  compositionUpdatePolicy: Manual
  compositionRevisionRef: {name: miniclusters.flux-framework.org-abc1234}
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: tenant-a}
`,
		},
		"Metadata": {
			reason: "The claim's labels and annotations go along, but those of a kubernetes.io or k8s.io domain; Crossplane's claim labels name the claim whatever the claim's labels say.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: tenant-a
  labels:
    team: hpc
    app.kubernetes.io/name: flux
    crossplane.io/claim-name: someone-else
  annotations:
    example.org/owner: hpc
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    example.k8s.io/note: x
spec: {size: 2}
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {team: hpc, crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: tenant-a}
  annotations: {example.org/owner: hpc}
spec:
  size: 2
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: tenant-a}
`,
		},
		"DefaultNamespace": {
			reason: "A claim that names no namespace is in kubectl's default one, and so are its claim label and claimRef.",
			claim: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample}
spec: {size: 2}
`,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: default}
spec:
  size: 2
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: default}
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc, err := ReadMiniCluster([]byte(tc.claim))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Composite(mc)
			if err != nil {
				t.Fatalf("%s\nComposite: %v", tc.reason, err)
			}
			want, err := ParseObjects([]byte(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[0].Object, got.Object); diff != "" {
				t.Errorf("%s\nComposite: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCompositeClaimRef holds spec.claimRef to what Crossplane's own
// claim and composite types make of the claim (the claim controller sets
// the one's reference on the other): the function refuses a composite of
// the claim shape without it, and every example must carry it.
func TestCompositeClaimRef(t *testing.T) {
	mc, err := ReadMiniCluster([]byte(helloWorldClaim))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(context.Background(), mc, ShapeClaims); err != nil {
		t.Fatal(err)
	}
	if mc.GetNamespace() == "" {
		mc.SetNamespace("default")
	}
	want := composite.New(composite.WithSchema(composite.SchemaLegacy))
	want.SetClaimReference((&claim.Unstructured{Unstructured: *mc}).GetReference())
	xr, err := Composite(mc)
	if err != nil {
		t.Fatal(err)
	}
	got := &composite.Unstructured{Unstructured: *xr, Schema: composite.SchemaLegacy}
	if diff := cmp.Diff(want.GetClaimReference(), got.GetClaimReference()); diff != "" {
		t.Errorf("spec.claimRef: -Crossplane's, +Composite's:\n%s", diff)
	}
	wantRef, _, _ := unstructured.NestedMap(want.Object, "spec", "claimRef")
	gotRef, _, _ := unstructured.NestedMap(xr.Object, "spec", "claimRef")
	if diff := cmp.Diff(wantRef, gotRef); diff != "" {
		t.Errorf("spec.claimRef as written: -Crossplane's, +Composite's:\n%s", diff)
	}
}
