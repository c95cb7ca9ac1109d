package driver

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/function"
)

func TestParseShape(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   Shape
		err    string
	}{
		"Default": {reason: "No shape is the claim shape, the README's default.", in: "", want: ShapeClaims},
		"Claims":  {reason: "claims names the claim shape.", in: "claims", want: ShapeClaims},
		"V2":      {reason: "v2 names the Crossplane v2 shape.", in: "v2", want: ShapeV2},
		"Unknown": {reason: "Another name is refused, listing the valid ones.", in: "v1", err: `unknown shape "v1": want claims (claims, the default) or v2`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseShape(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("%s\nerror %v, want one containing %q", tc.reason, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%s\ngot %q, %v; want %q", tc.reason, got, err, tc.want)
			}
		})
	}
}

func TestCompositeOf(t *testing.T) {
	const claim = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, labels: {team: hpc}}
spec: {size: 2, containers: [{image: rockylinux:9}]}
status: {maximumSize: 2}
`
	const composite = `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata: {name: flux-sample}
spec: {size: 2}
`
	cases := map[string]struct {
		reason string
		in     string
		shape  Shape
		want   string // YAML of the composite
		err    string
	}{
		"Claims": {
			reason: "Claims: a cluster-scoped XMiniCluster named after the claim, with the claim's labels, Crossplane's claim labels and spec.claimRef.",
			in:     claim,
			shape:  ShapeClaims,
			want:   claimsComposite,
		},
		"DefaultShape": {
			reason: "No shape is the claim shape.",
			in:     claim,
			want:   claimsComposite,
		},
		"V2": {
			reason: "v2: the MiniCluster itself, as written, in the default namespace kubectl would put it in.",
			in:     claim,
			shape:  ShapeV2,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: default, labels: {team: hpc}}
spec: {size: 2, containers: [{image: rockylinux:9}]}
status: {maximumSize: 2}
`,
		},
		"V2KeepsNamespace": {
			reason: "v2: a MiniCluster's own namespace is kept.",
			in:     strings.Replace(claim, "name: flux-sample,", "name: flux-sample, namespace: tenant-a,", 1),
			shape:  ShapeV2,
			want: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample, namespace: tenant-a, labels: {team: hpc}}
spec: {size: 2, containers: [{image: rockylinux:9}]}
status: {maximumSize: 2}
`,
		},
		"ClaimsComposite": {
			reason: "Claims: an XMiniCluster passes unchanged.",
			in:     composite,
			shape:  ShapeClaims,
			want:   composite,
		},
		"V2Composite": {
			reason: "v2: there is no XMiniCluster; say what to render instead.",
			in:     composite,
			shape:  ShapeV2,
			err:    `flux-framework.org/v1alpha2 XMiniCluster "flux-sample": an XMiniCluster is the claim shape's composite resource; in the v2 shape the MiniCluster is the composite itself: render the MiniCluster`,
		},
		"UnknownShape": {
			reason: "An unknown shape is refused.",
			in:     claim,
			shape:  "v3",
			err:    `unknown shape "v3"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc, err := ReadMiniCluster([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := CompositeOf(mc, tc.shape)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("%s\nerror %v, want one containing %q", tc.reason, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			want, err := ReadMiniCluster([]byte(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRunV2 renders hello-world in the v2 shape: the request names the
// namespaced composite, and the objects are the claim shape's, in the
// MiniCluster's namespace.
func TestRunV2(t *testing.T) {
	claim := strings.Replace(helloWorld(t), "namespace: default", "namespace: tenant-a", 1)
	out := map[Shape]*Output{}
	for _, shape := range Shapes {
		o, err := Run(context.Background(), function.New(), Options{Claim: []byte(claim), Shape: shape})
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		if o.Fatal {
			t.Fatalf("%s: refused: %v", shape, o.Results)
		}
		out[shape] = o
	}
	for _, o := range out[ShapeV2].Objects {
		if o.GetNamespace() != "tenant-a" {
			t.Errorf("%s %s is in namespace %q, want the MiniCluster's, tenant-a", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	if got := out[ShapeV2].Composite; got.GetKind() != "MiniCluster" || got.GetNamespace() != "tenant-a" || got.GetName() != "flux-sample" {
		t.Errorf("desired composite %s %s/%s, want the MiniCluster tenant-a/flux-sample", got.GetKind(), got.GetNamespace(), got.GetName())
	}
	// The certificate is new on every run, and each shape's objects are
	// controlled by its composite: compare everything else.
	strip := func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		var res []*unstructured.Unstructured
		for _, o := range objs {
			o = o.DeepCopy()
			if o.GetKind() == "Secret" {
				unstructured.RemoveNestedField(o.Object, "data")
			}
			o.SetOwnerReferences(nil) // each shape's composite controls its own
			res = append(res, o)
		}
		return res
	}
	if diff := cmp.Diff(strip(out[ShapeClaims].Objects), strip(out[ShapeV2].Objects)); diff != "" {
		t.Errorf("objects differ between shapes (-claims, +v2):\n%s", diff)
	}
	if diff := cmp.Diff(out[ShapeClaims].Composite.Object["status"], out[ShapeV2].Composite.Object["status"]); diff != "" {
		t.Errorf("status differs between shapes (-claims, +v2):\n%s", diff)
	}
}

// claimsComposite is the composite of the claim shape for the claim of
// TestCompositeOf's cases.
const claimsComposite = `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample
  labels: {team: hpc, crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: default}
spec:
  size: 2
  containers: [{image: rockylinux:9}]
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, name: flux-sample, namespace: default}
status: {maximumSize: 2}
`
