package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Gang scheduling (Kubernetes 1.37, scheduling.k8s.io/v1beta1 behind the
// GenericWorkload gate). The project's k8s.io/api is the one client-go
// and controller-runtime build with, which has neither kind nor the Pod
// field, so both are written as the API server reads them.
//
// kube-scheduler reads only the PodGroup: it holds the brokers until
// minCount of them exist, then places minCount at once or none. The
// Workload is what the PodGroup is an instance of: the API's record of
// the MiniCluster as one workload, which the scheduler's later
// workload-aware features (and kubectl) read. The Job controller's own
// gang support (the alpha spec.scheduling) skips Jobs that have a
// controller, as every Job Crossplane composes does, so the function
// composes both itself, as JobSet documents for Jobs it does not manage.
const (
	// WorkloadAPIVersion is the API of Workloads and PodGroups.
	WorkloadAPIVersion = "scheduling.k8s.io/v1beta1"
	// GangTemplate is the Workload's one pod group template: the brokers.
	GangTemplate = "brokers"
)

// Workload is the MiniCluster as a workload of one gang.
func Workload(in Input) *unstructured.Unstructured {
	mc := in.MiniCluster
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": WorkloadAPIVersion,
		"kind":       "Workload",
		"metadata":   gangMeta(in),
		"spec": map[string]any{
			"controllerRef": map[string]any{
				"apiGroup": v1alpha2.SchemeGroupVersion.Group, "kind": v1alpha2.ClaimKind, "name": mc.Name,
			},
			"podGroupTemplates": []any{map[string]any{
				"name":             GangTemplate,
				"schedulingPolicy": gangPolicy(in),
			}},
		},
	}}
}

// PodGroup is the brokers' gang.
func PodGroup(in Input) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": WorkloadAPIVersion,
		"kind":       "PodGroup",
		"metadata":   gangMeta(in),
		"spec": map[string]any{
			"workloadRef":      map[string]any{"workloadName": in.Gang.PodGroup, "templateName": GangTemplate},
			"schedulingPolicy": gangPolicy(in),
		},
	}}
}

// JoinGang is the broker pods' place in the PodGroup: a field of the Job's
// pod template (Object.Beyond).
func JoinGang(in Input) Field {
	return Field{Path: []string{"spec", "template", "spec", "schedulingGroup"}, Value: map[string]any{"podGroupName": in.Gang.PodGroup}}
}

func gangPolicy(in Input) map[string]any {
	return map[string]any{"gang": map[string]any{"minCount": int64(in.Gang.MinCount)}}
}

// gangMeta names the MiniCluster in a label, as its pods' labels do.
func gangMeta(in Input) map[string]any {
	return map[string]any{
		"name": in.Gang.PodGroup, "namespace": in.Namespace,
		"labels": map[string]any{plan.LabelName: in.MiniCluster.Name},
	}
}
