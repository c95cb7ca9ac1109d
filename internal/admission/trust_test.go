package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

func TestTrusted(t *testing.T) {
	cases := map[string]struct {
		reason   string
		self     Self
		observed map[string]*unstructured.Unstructured
		own      []string
		foreign  []string // parts of the one refusal; none: no refusal
	}{
		"Own": {
			reason:   "Objects this composite controls, in its namespace, are its own.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID), "service": object("Service", "tenant-a", "flux-sample", selfUID)},
			own:      []string{"job", "service"},
		},
		"Orphan": {
			reason:   "An orphan of a deleted MiniCluster (kubectl delete --cascade=orphan), named again in spec.crossplane.resourceRefs: refused, naming it and the field, never adopted.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "orph", ""), "service": object("Service", "tenant-a", "flux-sample", selfUID)},
			own:      []string{"service"},
			foreign:  []string{"spec.crossplane.resourceRefs", "Job tenant-a/orph (composition resource job) has no controller", "adopts none", "nothing was composed or changed"},
		},
		"AnotherComposites": {
			reason:   "An object another composite controls is not this one's.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"entrypoint": object("ConfigMap", "tenant-a", "other-entrypoint", otherUID)},
			foreign:  []string{"ConfigMap tenant-a/other-entrypoint", "is controlled by MiniCluster x (uid " + otherUID + "), not by this MiniCluster (uid " + selfUID + ")"},
		},
		"AnotherNamespace": {
			reason:   "Claims: a tenant's claim bound to an admin's composite, whose objects live in hpc-prod: Crossplane moved the composite's claim labels to the tenant's namespace, its objects did not move.",
			self:     claimSelf,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "hpc-prod", "flux-sample", selfUID)},
			foreign:  []string{"spec.resourceRefs of XMiniCluster flux-sample-x7k2p", "lives in namespace hpc-prod, not in this MiniCluster's namespace tenant-a", "delete this claim"},
		},
		"AnotherClaim": {
			reason:   "Claims: objects composed for another claim name it in their labels.",
			self:     claimSelf,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID, v1alpha2.LabelClaimName+"=admin", v1alpha2.LabelClaimNamespace+"=tenant-a")},
			foreign:  []string{"was composed for the claim tenant-a/admin, not for this MiniCluster tenant-a/flux-sample"},
		},
		"V2ClaimLabelsAreTheTenants": {
			reason:   "v2: labels on the tenant's own objects are whatever the tenant wrote; only the controller and the namespace count.",
			self:     v2Self,
			observed: map[string]*unstructured.Unstructured{"job": object("Job", "tenant-a", "flux-sample", selfUID, v1alpha2.LabelClaimName+"=admin")},
			own:      []string{"job"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := Trusted(tc.self, tc.observed)
			var own []string
			for k := range tr.Own {
				own = append(own, k)
			}
			if diff := cmp.Diff(tc.own, own, cmpSorted); diff != "" {
				t.Errorf("%s\nown: -want, +got:\n%s", tc.reason, diff)
			}
			var want []string
			if len(tc.foreign) > 0 {
				want = append([]string{ReasonForeignObject}, tc.foreign...)
			}
			checkRefused(t, tc.reason, tr.ForeignRefused(tc.self), want)
		})
	}
}

func TestAdmittedSize(t *testing.T) {
	job := func(queue string, suspend bool) *unstructured.Unstructured {
		u := object("Job", "tenant-a", "flux-sample", selfUID)
		if queue != "" {
			u.SetLabels(map[string]string{"kueue.x-k8s.io/queue-name": queue})
		}
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "parallelism")
		_ = unstructured.SetNestedField(u.Object, suspend, "spec", "suspend")
		return u
	}
	cases := map[string]struct {
		reason   string
		observed *unstructured.Unstructured
		self     Self
		want     int32
	}{
		"Admitted":   {reason: "Kueue admitted the own Job with 4 pods: the plan keeps 4.", observed: job("q", false), self: v2Self, want: 4},
		"Queued":     {reason: "A Job Kueue has not admitted yet takes the new size.", observed: job("q", true), self: v2Self},
		"NoKueue":    {reason: "Without Kueue the size follows spec.size.", observed: job("", false), self: v2Self},
		"NotTrusted": {reason: "An orphaned Job's parallelism is no fact about this MiniCluster.", observed: job("q", false), self: Self{UID: otherUID, Namespaced: true, Namespace: "tenant-a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Trusted(tc.self, map[string]*unstructured.Unstructured{render.KeyJob: tc.observed}).AdmittedSize(); got != tc.want {
				t.Errorf("%s\nAdmittedSize %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}
