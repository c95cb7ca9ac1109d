package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
)

// input renders the hello-world plan (plantest.HelloPlan), changed by
// opts before defaulting.
func input(t *testing.T, opts ...func(*v1alpha2.MiniCluster)) Input {
	t.Helper()
	return Input{Plan: plantest.HelloPlan(t, opts...), CurveCert: []byte("cert")}
}

// services makes spec.services of cs.
func services(cs ...v1alpha2.MiniClusterContainer) []v1alpha2.ServiceContainer {
	out := make([]v1alpha2.ServiceContainer, 0, len(cs))
	for _, c := range cs {
		out = append(out, v1alpha2.ServiceContainer{MiniClusterContainer: c})
	}
	return out
}

// wantLifecycle is what the Job of flux-sample says about how it ends, with
// brokers replaced up to retries times each.
func wantLifecycle(runner string, retries int32) Lifecycle {
	return Lifecycle{
		BackoffLimitPerIndex: ptr.To(retries),
		MaxFailedIndexes:     ptr.To[int32](0),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To(runner),
					Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:        []int32{entrypoint.JobFailedExitCode, entrypoint.ViewDoesNotFitExitCode},
				},
			},
			{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			},
			{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To(runner),
					Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:        []int32{137},
				},
			},
		}},
		PodReplacementPolicy: ptr.To(batchv1.Failed),
		SuccessPolicy:        &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}},
	}
}

func lifecycleOf(job *batchv1.Job) Lifecycle {
	s := &job.Spec
	return Lifecycle{
		BackoffLimitPerIndex: s.BackoffLimitPerIndex,
		MaxFailedIndexes:     s.MaxFailedIndexes,
		PodFailurePolicy:     s.PodFailurePolicy,
		PodReplacementPolicy: s.PodReplacementPolicy,
		SuccessPolicy:        s.SuccessPolicy,
	}
}

func TestJobLifecycle(t *testing.T) {
	type want struct {
		lifecycle     Lifecycle
		restartPolicy corev1.RestartPolicy
		backoffLimit  *int32
	}
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   want
	}{
		"Defaults": {
			reason: "By default (restartPolicy OnFailure, backoffLimit 100) a crashed broker is replaced up to 100 times, the lead's failed job fails the Job, a disruption does not count, and the lead's success completes it. The Job's own backoffLimit is left to the API server.",
			want:   want{lifecycle: wantLifecycle("flux-sample", 100), restartPolicy: corev1.RestartPolicyNever},
		},
		"OnFailureBackoffLimit": {
			reason: "spec.backoffLimit is how many times each broker is replaced.",
			opts:   []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) { m.Spec.BackoffLimit = ptr.To[int32](3) }},
			want:   want{lifecycle: wantLifecycle("flux-sample", 3), restartPolicy: corev1.RestartPolicyNever},
		},
		"OnFailureBackoffLimitZero": {
			reason: "backoffLimit 0 replaces no broker: the first crash fails the Job.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.BackoffLimit = ptr.To[int32](0)
				m.Spec.Pod.RestartPolicy = "OnFailure"
			}},
			want: want{lifecycle: wantLifecycle("flux-sample", 0), restartPolicy: corev1.RestartPolicyNever},
		},
		"Never": {
			reason: "restartPolicy Never replaces no crashed broker, whatever spec.backoffLimit says; the pods still use Never.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.RestartPolicy = "Never"
				m.Spec.BackoffLimit = ptr.To[int32](7)
			}},
			want: want{lifecycle: wantLifecycle("flux-sample", 0), restartPolicy: corev1.RestartPolicyNever},
		},
		"RunnerAfterSidecar": {
			reason: "The exit code rule names the runner container (named after the MiniCluster), not the first container.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers = []v1alpha2.MiniClusterContainer{
					{Name: "sidecar", Image: "nginx"},
					{Name: "app", Image: "rockylinux:9", Command: "hostname", RunFlux: true},
				}
			}},
			want: want{lifecycle: wantLifecycle("flux-sample", 100), restartPolicy: corev1.RestartPolicyNever},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := Job(input(t, tc.opts...))
			got := want{lifecycle: lifecycleOf(job), restartPolicy: job.Spec.Template.Spec.RestartPolicy, backoffLimit: job.Spec.BackoffLimit}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nJob(...): -want, +got:\n%s", tc.reason, diff)
			}
			// The API server refuses a FailJob rule naming a container the
			// pods do not have.
			runner := *job.Spec.PodFailurePolicy.Rules[0].OnExitCodes.ContainerName
			found := false
			for _, c := range job.Spec.Template.Spec.Containers {
				found = found || c.Name == runner
			}
			if !found {
				t.Errorf("%s\nthe FailJob rule names container %q, which the pod template does not have", tc.reason, runner)
			}
		})
	}
}

func TestServicesPodRestartPolicy(t *testing.T) {
	cases := map[string]struct {
		reason        string
		restartPolicy string
		want          corev1.RestartPolicy
	}{
		"OnFailure": {
			reason:        "The services Pod is a plain Pod: the kubelet restarts its failed containers, as spec.pod.restartPolicy says.",
			restartPolicy: "OnFailure",
			want:          corev1.RestartPolicyOnFailure,
		},
		"Never": {
			reason:        "restartPolicy Never is the services Pod's too.",
			restartPolicy: "Never",
			want:          corev1.RestartPolicyNever,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.RestartPolicy = tc.restartPolicy
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
			})
			if got := ServicesPod(in).Spec.RestartPolicy; got != tc.want {
				t.Errorf("%s\nservices Pod restartPolicy %q, want %q", tc.reason, got, tc.want)
			}
			if got := Job(in).Spec.Template.Spec.RestartPolicy; got != corev1.RestartPolicyNever {
				t.Errorf("%s\nJob pods restartPolicy %q, want Never (the pod failure policy needs it)", tc.reason, got)
			}
		})
	}
}

func TestJob(t *testing.T) {
	type want struct {
		name, namespace   string
		labels            map[string]string
		completionMode    *batchv1.CompletionMode
		parallelism       *int32
		completions       *int32
		deadline          *int64
		podAnnotations    map[string]string
		containers        []string
		initContainers    []string
		podLabelsSelector string
	}
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   want
	}{
		"HelloWorld": {
			reason: "An Indexed Job named after the MiniCluster runs size pods at once (index i is rank i) until the default deadline; its pods carry the scale subresource's selector label.",
			want: want{
				name: "flux-sample", namespace: "tenant-a",
				completionMode: ptr.To(batchv1.IndexedCompletion), parallelism: ptr.To[int32](4), completions: ptr.To[int32](4),
				deadline:   ptr.To[int64](v1alpha2.DefaultDeadlineSeconds),
				containers: []string{"flux-sample"}, initContainers: []string{"flux-view"}, podLabelsSelector: "flux-sample",
			},
		},
		"Clamped": {
			reason: "A size over the maximum fixed at creation runs the maximum: hosts and resources were sized to it.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.MaxSize = 4
				m.Spec.Size = ptr.To[int32](6)
				m.Status.MaximumSize = 4
			}},
			want: want{
				name: "flux-sample", namespace: "tenant-a",
				completionMode: ptr.To(batchv1.IndexedCompletion), parallelism: ptr.To[int32](4), completions: ptr.To[int32](4),
				deadline:   ptr.To[int64](v1alpha2.DefaultDeadlineSeconds),
				containers: []string{"flux-sample"}, initContainers: []string{"flux-view"}, podLabelsSelector: "flux-sample",
			},
		},
		"ClaimSettings": {
			reason: "spec.jobLabels label the Job, spec.deadlineSeconds bounds it, spec.pod.annotations annotate its pods, and every container of spec.containers runs in order.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.JobLabels = map[string]string{"team": "hpc"}
				m.Spec.DeadlineSeconds = ptr.To[int64](600)
				m.Spec.Pod.Annotations = map[string]string{"example.com/owner": "hpc"}
				m.Spec.Containers = []v1alpha2.MiniClusterContainer{
					{Name: "web", Image: "nginx"},
					{Image: "rockylinux:9", Command: "hostname", RunFlux: true},
				}
			}},
			want: want{
				name: "flux-sample", namespace: "tenant-a", labels: map[string]string{"team": "hpc"},
				completionMode: ptr.To(batchv1.IndexedCompletion), parallelism: ptr.To[int32](4), completions: ptr.To[int32](4),
				deadline: ptr.To[int64](600), podAnnotations: map[string]string{"example.com/owner": "hpc"},
				containers: []string{"web", "flux-sample"}, initContainers: []string{"flux-view"}, podLabelsSelector: "flux-sample",
			},
		},
		"QueueOnThePodsOnly": {
			reason: "A Kueue queue named only on the pods labels the Job too: Kueue queues the Job and admits its pods together.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.Labels = map[string]string{plan.LabelKueueQueueName: "user-queue"}
			}},
			want: want{
				name: "flux-sample", namespace: "tenant-a", labels: map[string]string{plan.LabelKueueQueueName: "user-queue"},
				completionMode: ptr.To(batchv1.IndexedCompletion), parallelism: ptr.To[int32](4), completions: ptr.To[int32](4),
				deadline:   ptr.To[int64](v1alpha2.DefaultDeadlineSeconds),
				containers: []string{"flux-sample"}, initContainers: []string{"flux-view"}, podLabelsSelector: "flux-sample",
			},
		},
		"QueueInJobLabels": {
			reason: "A queue in spec.jobLabels is the Job's label as written.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.JobLabels = map[string]string{plan.LabelKueueQueueName: "user-queue", "team": "hpc"}
			}},
			want: want{
				name: "flux-sample", namespace: "tenant-a", labels: map[string]string{plan.LabelKueueQueueName: "user-queue", "team": "hpc"},
				completionMode: ptr.To(batchv1.IndexedCompletion), parallelism: ptr.To[int32](4), completions: ptr.To[int32](4),
				deadline:   ptr.To[int64](v1alpha2.DefaultDeadlineSeconds),
				containers: []string{"flux-sample"}, initContainers: []string{"flux-view"}, podLabelsSelector: "flux-sample",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := Job(input(t, tc.opts...))
			s := &job.Spec
			got := want{
				name: job.Name, namespace: job.Namespace, labels: job.Labels,
				completionMode: s.CompletionMode, parallelism: s.Parallelism, completions: s.Completions,
				deadline: s.ActiveDeadlineSeconds, podAnnotations: s.Template.Annotations,
				podLabelsSelector: s.Template.Labels[plan.LabelSelector],
			}
			for _, c := range s.Template.Spec.Containers {
				got.containers = append(got.containers, c.Name)
			}
			for _, c := range s.Template.Spec.InitContainers {
				got.initContainers = append(got.initContainers, c.Name)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nJob(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
