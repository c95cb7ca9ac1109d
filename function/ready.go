package function

import (
	"encoding/base64"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// ready says whether a composed resource is ready, job being the observed
// Job already converted (nil when it was not observed or does not convert:
// RunFunction converts it once for readiness and status). The MiniCluster
// is Ready when all are; RunFunction reports that on the composite.
//   - The Job is ready once enough brokers are up (ready pods >= quorum),
//     and stays ready once it has succeeded (SuccessCriteriaMet, then
//     Complete), while the job controller stops the followers. A Job that
//     failed (FailureTarget, then Failed) is not ready, whatever pods are
//     still up: the phase and the Finished condition say why.
//   - The services Pod is ready when it runs (or ran) its containers.
//   - Everything else is ready as soon as it exists.
func ready(name string, o resource.ObservedComposed, job *batchv1.Job, quorum int32) resource.Ready {
	if o.Resource == nil {
		return resource.ReadyFalse
	}
	switch name {
	case render.KeyJob:
		if job == nil {
			return resource.ReadyFalse
		}
		switch {
		case jobFailed(job):
			return resource.ReadyFalse
		case jobSucceeded(job), job.Status.Ready != nil && *job.Status.Ready >= quorum:
			return resource.ReadyTrue
		}
		return resource.ReadyFalse
	case render.KeyServicesPod:
		pod := &corev1.Pod{}
		if err := fromObserved(o, pod); err != nil {
			return resource.ReadyFalse
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return resource.ReadyTrue
			}
		}
		if pod.Status.Phase == corev1.PodSucceeded {
			return resource.ReadyTrue
		}
		return resource.ReadyFalse
	default:
		return resource.ReadyTrue
	}
}

// observedJob is the observed Job, or nil when there is none or it does
// not convert.
func observedJob(observed map[resource.Name]resource.ObservedComposed) *batchv1.Job {
	return observedJobOf(observed[render.KeyJob])
}

func observedJobOf(o resource.ObservedComposed) *batchv1.Job {
	if o.Resource == nil {
		return nil
	}
	job := &batchv1.Job{}
	if err := fromObserved(o, job); err != nil {
		return nil
	}
	return job
}

func fromObserved(o resource.ObservedComposed, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(o.Resource.UnstructuredContent(), into)
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimSpace(s))
}
