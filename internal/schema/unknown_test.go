package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnknown(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"HelloWorld": {
			reason: "hello-world has no unknown fields.",
			obj:    helloWorld,
		},
		//nolint:misspell // "nmae" is one of the typos under test
		"Typos": {
			reason: "Unknown fields are named by path, metadata's too, sorted.",
			obj: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: x, lables: {a: b}, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: u, nmae: x}]}
spec:
  sise: 4
  contaners: []
  containers: [{image: a, comand: x}]
  flux: {curveCerts: x}
status: {phse: Running}
`,
			want: []string{"metadata.lables", "metadata.ownerReferences[0].nmae", "spec.containers[0].comand", "spec.contaners", "spec.flux.curveCerts", "spec.sise", "status.phse"},
		},
		"CrossplaneClaimFields": {
			reason: "Fields Crossplane adds to claims are known.",
			obj: helloWorld + `  compositionRef: {name: c}
  compositionSelector: {matchLabels: {a: b}}
  compositionRevisionRef: {name: r}
  compositionRevisionSelector: {matchLabels: {a: b}}
  compositionUpdatePolicy: Manual
  compositeDeletePolicy: Foreground
  resourceRef: {apiVersion: flux-framework.org/v1alpha2, kind: XMiniCluster, name: x}
  writeConnectionSecretToRef: {name: s}
status:
  conditions: [{type: Ready, status: "True", reason: Available, lastTransitionTime: "2026-01-01T00:00:00Z", message: m, observedGeneration: 1}]
  connectionDetails: {lastPublishedTime: "2026-01-01T00:00:00Z"}
  claimConditionTypes: [Ready]
  phase: Running
`,
		},
		"CrossplaneCompositeFields": {
			reason: "Fields Crossplane adds to composite resources are known.",
			obj: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata: {name: x}
spec:
  containers: [{image: a}]
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, namespace: default, name: x}
  compositionRef: {name: c}
  compositionSelector: {matchLabels: {a: b}}
  compositionRevisionRef: {name: r}
  compositionRevisionSelector: {matchLabels: {a: b}}
  compositionUpdatePolicy: Manual
  resourceRefs: [{apiVersion: v1, kind: Service, name: x, namespace: default}]
  writeConnectionSecretToRef: {name: s, namespace: default}
status:
  conditions: [{type: Synced, status: "True", reason: ReconcileSuccess, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  connectionDetails: {lastPublishedTime: "2026-01-01T00:00:00Z"}
  claimConditionTypes: [Ready]
`,
		},
		"ClaimOnlyFieldOnComposite": {
			reason: "A claim's field is unknown on the composite and the other way round.",
			obj:    "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x}\nspec:\n  containers: [{image: a}]\n  resourceRef: {name: x}\n",
			want:   []string{"spec.resourceRef"},
		},
		"OtherKind": {
			reason: "Other kinds are not this package's.",
			obj:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.obj)
			before := decode(t, tc.obj)
			got := Claims.Unknown(obj)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUnknown: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, obj); diff != "" {
				t.Errorf("Unknown changed its argument:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, Claims.Prune(obj)); diff != "" {
				t.Errorf("%s\nPrune: -want, +got:\n%s", tc.reason, diff)
			}
			if got := Claims.Unknown(obj); len(got) != 0 {
				t.Errorf("after Prune, Unknown = %v", got)
			}
		})
	}
}
