package render

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// LeadIndex is the completion index of the lead broker (rank 0).
const LeadIndex = "0"

// KilledExitCode is a container's exit code when SIGKILL ended it (128 + 9),
// as the OOM killer does.
const KilledExitCode = 137

// Lifecycle is how the Job of a MiniCluster ends, in the fields of the Job
// API that are GA from Kubernetes 1.34, the oldest version the README names
// (podFailurePolicy since 1.31, successPolicy and backoffLimitPerIndex
// since 1.33, podReplacementPolicy since 1.34):
//
//   - The job fails on the lead: the lead's runner exits with
//     entrypoint.JobFailedExitCode, which the pod failure policy turns into a
//     failed Job (FailJob), so the MiniCluster ends Failed instead of
//     restarting a lead that would wait for followers that have exited.
//   - The job succeeds: the lead (index 0) succeeds, and the success policy
//     completes the Job even while followers are still shutting down.
//   - A broker crashes (any other failure of any pod): the job controller
//     replaces that pod, up to BackoffLimitPerIndex times for each index;
//     one more failure of that index fails the Job (MaxFailedIndexes 0): a
//     cluster that lost a broker for good would otherwise run until its
//     deadline.
//   - A pod is disrupted (node drain, preemption, eviction: the pod has the
//     DisruptionTarget condition): it is replaced and does not count.
//   - A runner is killed outright (KilledExitCode: an OOM kill): the Job
//     fails. Once the lead's instance has run, a replaced lead would wait
//     for followers that have left, and the runner had no chance to end well
//     (see entrypoint.LeadMessagePrefix for the endings it can map).
//
// spec.pod.restartPolicy says whether crashed brokers are replaced: OnFailure
// (the default) replaces each broker up to spec.backoffLimit times; Never
// does not replace it, so the first crash fails the Job. The Job's own
// backoffLimit (the total over all indexes) is left to the API server, which
// defaults it to the maximum when backoffLimitPerIndex is set.
type Lifecycle struct {
	BackoffLimitPerIndex *int32
	MaxFailedIndexes     *int32
	PodFailurePolicy     *batchv1.PodFailurePolicy
	PodReplacementPolicy *batchv1.PodReplacementPolicy
	SuccessPolicy        *batchv1.SuccessPolicy
}

// JobLifecycle returns the lifecycle fields of a MiniCluster's Job whose pods
// run containers (the runner among them, named by brokerContainer).
func JobLifecycle(mc *v1alpha2.MiniCluster, containers []corev1.Container) Lifecycle {
	s := &mc.Spec
	retries := int32(0)
	if s.Pod.RestartPolicy != string(corev1.RestartPolicyNever) && s.BackoffLimit != nil {
		retries = *s.BackoffLimit
	}
	var rules []batchv1.PodFailurePolicyRule
	if runner := RunnerName(mc, containers); runner != "" {
		// The job failed on the lead, or the Flux view cannot run in the
		// runner's image (no retry helps): one rule, as the Job API wants
		// its exit codes, ascending.
		rules = append(rules, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(runner),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:        []int32{entrypoint.JobFailedExitCode, entrypoint.ViewDoesNotFitExitCode},
			},
		})
	}
	rules = append(rules, batchv1.PodFailurePolicyRule{
		Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
			Type:   corev1.DisruptionTarget,
			Status: corev1.ConditionTrue,
		}},
	})
	if runner := RunnerName(mc, containers); runner != "" {
		// A runner killed outright (the kernel's OOM killer takes the whole
		// container) had no say in its exit code. A runner stops within
		// seconds of SIGTERM, so this is no grace period running out, and a
		// replaced lead would wait for followers that have left.
		rules = append(rules, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(runner),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:        []int32{KilledExitCode},
			},
		})
	}
	return Lifecycle{
		BackoffLimitPerIndex: ptr.To(retries),
		MaxFailedIndexes:     ptr.To[int32](0),
		PodFailurePolicy:     &batchv1.PodFailurePolicy{Rules: rules},
		// The only value a pod failure policy allows, stated because it
		// matters: a broker's replacement starts only once the old pod has
		// stopped, so two pods never claim the same host name.
		PodReplacementPolicy: ptr.To(batchv1.Failed),
		SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{
			SucceededIndexes: ptr.To(LeadIndex),
		}}},
	}
}

// RunnerName is the name of the Flux runner among a pod's containers (the
// rendered ones, in the order of spec.containers), or "" when there is none.
func RunnerName(mc *v1alpha2.MiniCluster, containers []corev1.Container) string {
	for i, c := range mc.Spec.Containers {
		if c.RunFlux && i < len(containers) {
			return containers[i].Name
		}
	}
	return ""
}
