package admission

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// LookupWorkloadAPI is the APIService of the Workload API
// (scheduling.k8s.io/v1beta1): the cluster serves Workloads and PodGroups
// when it is Available. The API server registers one APIService for every
// group version it serves, so this one object answers the question
// without discovery, which a function cannot do; Crossplane's watch on it
// wakes the MiniCluster when a platform turns the API on.
const LookupWorkloadAPI = "workload-api"

// WorkloadAPIService names the APIService LookupWorkloadAPI reads.
const WorkloadAPIService = "v1beta1.scheduling.k8s.io"

// GangDocs is where a platform reads what gang scheduling needs.
const GangDocs = "docs/install.md#gang-scheduling"

// Gang is whether the MiniCluster's brokers start as a gang, and what
// deciding it needs.
type Gang struct {
	// On: compose the Workload and the PodGroup, and put the brokers in
	// the PodGroup.
	On bool
	// MinCount is the gang size the MiniCluster's own PodGroup started
	// with, 0 when it has none yet (the plan's quorum then).
	MinCount int32
	// Lookups the decision needs, and Waiting while one is unanswered.
	Lookups []Lookup
	Waiting bool
	// Refused: the Composition requires gang scheduling and the cluster
	// cannot do it.
	Refused *Refused
}

// GangScheduling decides whether the MiniCluster's brokers start as a
// gang. A Job's pod template cannot change, so a MiniCluster whose Job
// exists keeps what that Job started with, whatever the mode or the
// cluster says now: its pods name their PodGroup (which stays composed,
// with the size it started with) or they do not. A new MiniCluster goes
// by the mode: Auto and Required read whether the cluster serves the
// Workload API; Required refuses it where it does not, since the Pod
// field that joins a gang is silently dropped there and the brokers would
// start one by one.
func GangScheduling(mode v1beta1.GangMode, t Trust, answer func(string) ([]*unstructured.Unstructured, bool)) Gang {
	if job, ok := t.Own[render.KeyJob]; ok {
		name, _, _ := unstructured.NestedString(job.Object, "spec", "template", "spec", "schedulingGroup", "podGroupName")
		return Gang{On: name != "", MinCount: ownMinCount(t)}
	}
	if mode == v1beta1.GangDisabled {
		return Gang{}
	}
	g := Gang{Lookups: []Lookup{{Name: LookupWorkloadAPI, APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Object: WorkloadAPIService}}}
	found, answered := answer(LookupWorkloadAPI)
	if !answered {
		g.Waiting = true
		return g
	}
	g.On = len(found) > 0 && available(found[0])
	g.MinCount = ownMinCount(t)
	if !g.On && mode == v1beta1.GangRequired {
		g.Refused = &Refused{Reason: ReasonGangUnavailable, Message: "the Composition requires gang scheduling (its function input's scheduling.gang: Required) and the cluster does not serve scheduling.k8s.io/v1beta1 (APIService " +
			WorkloadAPIService + " is not Available): a platform admin turns on the GenericWorkload feature gate on kube-apiserver, kube-scheduler and kube-controller-manager and the API version on kube-apiserver (Kubernetes ≥ 1.37, " + GangDocs + "), or sets scheduling.gang: Auto to start brokers one by one" + nothingComposed}
	}
	return g
}

// available tells whether an APIService's Available condition is True.
func available(svc *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Available" {
			return m["status"] == "True"
		}
	}
	return false
}

// ownMinCount is the gang size of the MiniCluster's own PodGroup.
func ownMinCount(t Trust) int32 {
	pg, ok := t.Own[render.KeyPodGroup]
	if !ok {
		return 0
	}
	v, _, _ := unstructured.NestedFieldNoCopy(pg.Object, "spec", "schedulingPolicy", "gang", "minCount")
	var n float64
	switch v := v.(type) {
	case int64:
		n = float64(v)
	case float64: // how Crossplane's request carries every number
		n = v
	}
	if n < 1 || n > math.MaxInt32 {
		return 0
	}
	return int32(n)
}
