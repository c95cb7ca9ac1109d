package admission

// What the tests of this package share: the composite the run is for
// (v2Self, claimSelf), observed objects, and the checks of a refusal.

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	claimUID = "5c2d7e11-1b2c-4d3e-8f40-112233445566"
	selfUID  = "3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55"
	otherUID = "99999999-2222-4333-8444-555555555555"
	jobHash  = "0123456789abcdef"
)

var v2Self = Self{UID: selfUID, Kind: "MiniCluster", Name: "flux-sample", Namespaced: true, MiniCluster: "flux-sample", Namespace: "tenant-a"}

var claimSelf = Self{UID: selfUID, Kind: "XMiniCluster", Name: "flux-sample-x7k2p", MiniCluster: "flux-sample", Namespace: "tenant-a"}

// object is an object of kind named name in namespace ns, controlled by
// the composite of uid ("" for no controller), with labels (k=v).
func object(kind, ns, name, uid string, labels ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	if kind == "Job" {
		u.SetAPIVersion("batch/v1")
	}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if uid != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "flux-framework.org/v1alpha2", Kind: "MiniCluster", Name: "x", UID: types.UID(uid), Controller: ptr.To(true)}})
	}
	if len(labels) > 0 {
		l := map[string]string{}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
		u.SetLabels(l)
	}
	return u
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkRefused checks a refusal: none when want is empty, else one of the
// reason want[0] whose message contains each of want[1:].
func checkRefused(t *testing.T, why string, r *Refused, want []string) {
	t.Helper()
	if len(want) == 0 {
		if r != nil {
			t.Errorf("%s\nrefused: %s", why, r.Message)
		}
		return
	}
	if r == nil || r.Reason != want[0] {
		t.Fatalf("%s\nrefusal %+v, want reason %s", why, r, want[0])
	}
	for _, part := range want[1:] {
		if !strings.Contains(r.Message, part) {
			t.Errorf("%s\nmessage %q, want it to contain %q", why, r.Message, part)
		}
	}
}
