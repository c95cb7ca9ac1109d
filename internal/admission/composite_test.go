package admission

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestComposite(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   []string // parts of the refusal, with its reason first; none: no refusal
	}{
		"Claimed": {
			reason: "Crossplane's claim controller sets the claim labels and spec.claimRef together.",
			xr:     xr(map[string]any{"labels": claimLabels("flux-sample", "tenant-a")}, map[string]any{"claimRef": claimRef("flux-sample", "tenant-a")}),
		},
		"ClaimRefOnly": {
			reason: "A claim reference without labels names the claim too.",
			xr:     xr(nil, map[string]any{"claimRef": claimRef("flux-sample", "tenant-a")}),
		},
		"HandMadeWithLabels": {
			reason: "An admin's XMiniCluster with claim labels only is bindable by any tenant's claim (spec.resourceRef): refused before it composes anything.",
			xr:     xr(map[string]any{"labels": claimLabels("admin", "hpc-prod")}, nil),
			want:   []string{ReasonUnclaimed, "spec.claimRef: XMiniCluster x was not made by a MiniCluster claim", "set spec.claimRef", "nothing was composed or changed"},
		},
		"LabelsDisagree": {
			reason: "Labels naming another claim than spec.claimRef were not written by Crossplane.",
			xr:     xr(map[string]any{"labels": claimLabels("admin", "hpc-prod")}, map[string]any{"claimRef": claimRef("grab", "team-a")}),
			want:   []string{ReasonUnclaimed, "bound to claim team-a/grab (spec.claimRef) but its labels", "name hpc-prod/admin"},
		},
		"V2": {
			reason: "A namespaced composite is the tenant's own object: no claim binds it.",
			xr:     xr(map[string]any{"namespace": "tenant-a"}, nil),
		},
		"PinnedRevision": {
			reason: "A revision of the Composition picked by hand runs the policy of another time.",
			xr:     xr(map[string]any{"namespace": "tenant-a"}, map[string]any{"crossplane": map[string]any{"compositionUpdatePolicy": "Manual"}}),
			want:   []string{ReasonPolicy, "spec.crossplane.compositionUpdatePolicy: refused by the platform's policy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkRefused(t, tc.reason, Composite(tc.xr), tc.want)
		})
	}
}

func xr(metadata, spec map[string]any) map[string]any {
	md := map[string]any{"name": "x"}
	for k, v := range metadata {
		md[k] = v
	}
	s := map[string]any{"size": int64(1)}
	for k, v := range spec {
		s[k] = v
	}
	return map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "XMiniCluster", "metadata": md, "spec": s}
}

func claimLabels(name, ns string) map[string]any {
	return map[string]any{v1alpha2.LabelClaimName: name, v1alpha2.LabelClaimNamespace: ns}
}

func claimRef(name, ns string) map[string]any {
	return map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "name": name, "namespace": ns}
}
