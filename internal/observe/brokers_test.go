package observe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
)

const jobUID = "0b6c1e2a-0000-4000-8000-000000000001"

// brokerPod is pod <index>-<suffix> of Job flux-sample, created at second
// created, with status st.
func brokerPod(index, suffix string, created int, st corev1.PodStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "flux-sample-" + index + "-" + suffix,
			Namespace:         "tenant-a",
			CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 1, 0, 0, created, 0, time.UTC)),
			Labels:            map[string]string{plan.LabelSelector: "flux-sample", plan.LabelCompletionIndex: index},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "flux-sample", UID: jobUID, Controller: ptr.To(true)}},
		},
		Status: st,
	}
}

// onNode is pod as the scheduler bound it.
func onNode(pod corev1.Pod) corev1.Pod {
	pod.Spec.NodeName = "node-1"
	return pod
}

var (
	podUp = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	// podCreating has been scheduled and waits for its containers.
	podCreating = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "flux-sample", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}
)

func waitingInit(reason, msg string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "flux-view", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
}

func waitingMain(reason, msg string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "flux-sample", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
}

func failedWith(init bool, code int32, msg string) corev1.PodStatus {
	st := corev1.PodStatus{Phase: corev1.PodFailed}
	cs := []corev1.ContainerStatus{{Name: "flux-sample", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", Message: msg}}}}
	if init {
		cs[0].Name = "flux-view"
		st.InitContainerStatuses = cs
	} else {
		st.ContainerStatuses = cs
	}
	return st
}

const neverPull = `Container image "app:missing" is not present with pull policy of Never`

func TestBrokersReport(t *testing.T) {
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
	}}}
	// What kube-scheduler 1.37's GangScheduling plugin says of a broker
	// that waits only for its gang.
	gangShort := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
	}}}
	quota := corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "flux-sample.17a", Namespace: "tenant-a"},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "flux-sample", UID: jobUID},
		Reason:         string(v1alpha2.ReasonFailedCreate),
		Message:        `Error creating: pods "flux-sample-0-x7k2p" is forbidden: failed quota: q: must specify limits.cpu for: flux-sample,flux-view`,
		LastTimestamp:  metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 9, 0, time.UTC)),
	}
	olderSA := quota
	olderSA.Name = "flux-sample.16f"
	olderSA.Message = `Error creating: pods "flux-sample-1-aaaaa" is forbidden: error looking up service account tenant-a/runner: serviceaccount "runner" not found`
	olderSA.LastTimestamp = metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 5, 0, time.UTC))
	otherJob := quota
	otherJob.InvolvedObject.UID = "another"

	cases := map[string]struct {
		reason string
		ready  int32 // the Job's ready count
		pods   []corev1.Pod
		events []corev1.Event
		want   report
	}{
		"Starting": {
			reason: "Pods on their way up have no cause: only the count.",
			ready:  1,
			pods:   []corev1.Pod{brokerPod("0", "a", 1, podUp), brokerPod("1", "b", 1, podCreating)},
			want:   report{reason: v1alpha2.ReasonBrokersStarting, message: "1 of 4 brokers up"},
		},
		"CountIsTheJobs": {
			reason: "The count is the Job's ready count, as in status.job.ready, not the pods already ready that the job controller has not counted yet: it changes at the job controller's pace, not with each pod.",
			ready:  1,
			pods:   []corev1.Pod{brokerPod("0", "a", 1, podUp), brokerPod("1", "b", 1, podUp), brokerPod("2", "c", 1, podUp), brokerPod("3", "d", 1, podCreating)},
			want:   report{reason: v1alpha2.ReasonBrokersStarting, message: "1 of 4 brokers up"},
		},
		"ErrImageNeverPull": {
			reason: "Every pod lacks its image: one cause, naming the pods by host name in index order.",
			ready:  1,
			pods: []corev1.Pod{
				brokerPod("2", "c", 1, waitingMain("ErrImageNeverPull", neverPull)),
				brokerPod("0", "a", 1, waitingMain("ErrImageNeverPull", neverPull)),
				brokerPod("1", "b", 1, waitingMain("ErrImageNeverPull", neverPull)),
				brokerPod("3", "d", 1, podUp),
			},
			want: report{reason: "ErrImageNeverPull", message: "1 of 4 brokers up; flux-sample-0, flux-sample-1, flux-sample-2: ErrImageNeverPull: " + neverPull},
		},
		"PullBackOffIsErrImagePull": {
			reason: "The kubelet alternates ErrImagePull and ImagePullBackOff: both read as the same cause, so the message does not flip.",
			pods: []corev1.Pod{
				brokerPod("0", "a", 1, waitingInit("ErrImagePull", "rpc error: not found")),
				brokerPod("1", "b", 1, waitingInit("ImagePullBackOff", `Back-off pulling image "view:x": ErrImagePull: rpc error: not found`)),
			},
			want: report{reason: "Init:ErrImagePull", message: "0 of 4 brokers up; flux-sample-0, flux-sample-1: Init:ErrImagePull: rpc error: not found"},
		},
		"Unschedulable": {
			reason: "The scheduler's reason and message.",
			pods:   []corev1.Pod{brokerPod("0", "a", 1, unschedulable)},
			want:   report{reason: "Unschedulable", message: "0 of 4 brokers up; flux-sample-0: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."},
		},
		"HoldsPartOfItsBrokers": {
			reason: "Two brokers run on a node while the other two cannot be scheduled: the MiniCluster says it holds them, why the rest wait, and what starts it whole.",
			ready:  2,
			pods: []corev1.Pod{
				onNode(brokerPod("0", "a", 1, podUp)), onNode(brokerPod("1", "b", 1, podUp)),
				brokerPod("2", "c", 1, unschedulable), brokerPod("3", "d", 1, unschedulable),
			},
			want: report{reason: "Unschedulable", message: "2 of 4 brokers up; flux-sample-2, flux-sample-3: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.; " +
				"2 brokers are scheduled and waiting for the rest, which cannot be scheduled: " + holdingFix + " (" + HoldingDocs + ")"},
		},
		"HoldsOneStillCreating": {
			reason: "A broker on its node but not up yet is held too.",
			pods:   []corev1.Pod{onNode(brokerPod("0", "a", 1, podCreating)), brokerPod("1", "b", 1, unschedulable)},
			want: report{reason: "Unschedulable", message: "0 of 4 brokers up; flux-sample-1: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.; " +
				"1 broker is scheduled and waiting for the rest, which cannot be scheduled: " + holdingFix + " (" + HoldingDocs + ")"},
		},
		"HoldsNothing": {
			reason: "None scheduled: nothing is held, the scheduler's reason alone.",
			pods:   []corev1.Pod{brokerPod("0", "a", 1, unschedulable), brokerPod("1", "b", 1, unschedulable)},
			want:   report{reason: "Unschedulable", message: "0 of 4 brokers up; flux-sample-0, flux-sample-1: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."},
		},
		"GangWaitsForOne": {
			reason: "With gang scheduling the scheduler says why one broker does not fit and that the others wait for their gang: every waiting broker gets the cause.",
			pods:   []corev1.Pod{brokerPod("0", "a", 1, unschedulable), brokerPod("1", "b", 1, gangShort)},
			want:   report{reason: "Unschedulable", message: "0 of 4 brokers up; flux-sample-0, flux-sample-1: Unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."},
		},
		"GangOnly": {
			reason: "When no broker says why, the gang's own message stays.",
			pods:   []corev1.Pod{brokerPod("0", "a", 1, gangShort), brokerPod("1", "b", 1, gangShort)},
			want:   report{reason: "Unschedulable", message: "0 of 4 brokers up; flux-sample-0, flux-sample-1: Unschedulable: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"},
		},
		"InitError": {
			reason: "The Flux view's init container failed: Init:Error with its exit code and termination message.",
			pods:   []corev1.Pod{brokerPod("0", "a", 1, failedWith(true, 1, "cp: cannot create /mnt/flux\nread-only file system\n"))},
			want:   report{reason: "Init:Error", message: "0 of 4 brokers up; flux-sample-0: Init:Error: container flux-view exited with 1: cp: cannot create /mnt/flux | read-only file system"},
		},
		"CrashLoop": {
			reason: "A broker fails and the Job replaces it: the replacement, still starting, has no cause of its own, so the failed pod's stands; the message does not change with each new pod.",
			pods: []corev1.Pod{
				brokerPod("0", "a", 1, failedWith(false, 1, "commands.pre failed")),
				brokerPod("0", "b", 20, podCreating),
			},
			want: report{reason: "Error", message: "0 of 4 brokers up; flux-sample-0: Error: container flux-sample exited with 1: commands.pre failed"},
		},
		"CrashLoopBackOff": {
			reason: "A container the kubelet restarts: the exit it backs off from, not the back-off's growing delay.",
			pods: []corev1.Pod{brokerPod("0", "a", 1, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "sidecar", RestartCount: 7,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container=sidecar"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}},
			}}})},
			want: report{reason: "CrashLoopBackOff", message: "0 of 4 brokers up; flux-sample-0: CrashLoopBackOff: container sidecar exited with 2"},
		},
		"FailedCreate": {
			reason: "No pod at all: the job controller's newest FailedCreate event for this Job, without the generated pod name.",
			events: []corev1.Event{olderSA, quota, otherJob},
			want:   report{reason: v1alpha2.ReasonFailedCreate, message: "0 of 4 brokers up; the Job cannot create its pods: failed quota: q: must specify limits.cpu for: flux-sample,flux-view"},
		},
		"OtherJobsPodsIgnored": {
			reason: "A pod of an earlier Job of the same name, still going, is not one of these brokers.",
			pods: func() []corev1.Pod {
				p := brokerPod("0", "old", 1, waitingMain("ErrImageNeverPull", neverPull))
				p.OwnerReferences[0].UID = "earlier"
				return []corev1.Pod{p}
			}(),
			want: report{reason: v1alpha2.ReasonBrokersStarting, message: "0 of 4 brokers up"},
		},
		"CappedCauses": {
			reason: "More distinct causes than listed: the rest are counted.",
			pods: []corev1.Pod{
				brokerPod("0", "a", 1, waitingMain("ErrImagePull", "a")),
				brokerPod("1", "b", 1, waitingMain("ErrImagePull", "b")),
				brokerPod("2", "c", 1, waitingMain("ErrImagePull", "c")),
				brokerPod("3", "d", 1, waitingMain("ErrImagePull", "d")),
			},
			want: report{reason: "ErrImagePull", message: "0 of 4 brokers up; flux-sample-0: ErrImagePull: a; flux-sample-1: ErrImagePull: b; flux-sample-2: ErrImagePull: c; and 1 more causes"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			job := observetest.Job(tc.ready)
			job.UID = jobUID
			got := brokersReport(p, job, tc.pods, tc.events)
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(report{})); d != "" {
				t.Errorf("%s\nbrokersReport(...): -want +got:\n%s", tc.reason, d)
			}
		})
	}
}

func TestFinishedMessageCarriesLastWords(t *testing.T) {
	leadExit := func(suffix string, at int, code int32, msg string) corev1.Pod {
		return brokerPod("0", suffix, at, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "flux-sample", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Message: msg, FinishedAt: metav1.NewTime(time.Date(2024, 1, 1, 0, 1, at, 0, time.UTC)),
			}},
		}}})
	}
	lead := func(suffix string, at int, msg string) corev1.Pod { return leadExit(suffix, at, 42, msg) }
	cases := map[string]struct {
		reason string
		job    *batchv1.Job
		pods   []corev1.Pod
		want   string
	}{
		"Failed": {
			reason: "The user's exit code and the lead's last lines, between the claim's terms and the Job's reason.",
			job:    observetest.Job(0, [3]string{"FailureTarget", "PodFailurePolicy", observetest.FailJobMessage}),
			pods:   []corev1.Pod{lead("a", 1, "flux job on flux-sample-0 exited with 3\nno such file: data.csv\n"), brokerPod("1", "b", 1, failedWith(false, 1, "follower"))},
			want:   "the job on the lead broker failed: flux job on flux-sample-0 exited with 3 | no such file: data.csv; the whole log: kubectl logs -n tenant-a flux-sample-0-a -c flux-sample (PodFailurePolicy: " + observetest.FailJobMessage + ")",
		},
		"NewestLead": {
			reason: "A lead that was replaced: the newest one's words.",
			job:    observetest.Job(0, [3]string{"Failed", "PodFailurePolicy", observetest.FailJobMessage}),
			pods:   []corev1.Pod{lead("b", 30, "second"), lead("a", 10, "first")},
			want:   "the job on the lead broker failed: second; the whole log: kubectl logs -n tenant-a flux-sample-0-b -c flux-sample (PodFailurePolicy: " + observetest.FailJobMessage + ")",
		},
		"ViewDoesNotFit": {
			reason: "A runner that ended because the view cannot run in its image: the message says so, not that the job failed.",
			job:    observetest.Job(0, [3]string{"FailureTarget", "PodFailurePolicy", observetest.FailJobMessage}),
			pods:   []corev1.Pod{leadExit("a", 1, entrypoint.ViewDoesNotFitExitCode, "the Flux view v does not run in the application image a")},
			want:   "the Flux view cannot run in the application image: the Flux view v does not run in the application image a; the whole log: kubectl logs -n tenant-a flux-sample-0-a -c flux-sample (PodFailurePolicy: " + observetest.FailJobMessage + ")",
		},
		"Succeeded": {
			reason: "A lead that says something on success.",
			job:    observetest.Job(0, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}),
			pods:   []corev1.Pod{lead("a", 1, "done")},
			want:   "the job on the lead broker succeeded: done; the whole log: kubectl logs -n tenant-a flux-sample-0-a -c flux-sample (SuccessPolicy: Matched rules at index 0)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := finishedMessage(tc.job, lastWords(tc.pods)); got != tc.want {
				t.Errorf("%s\nfinishedMessage: -want +got:\n%s", tc.reason, cmp.Diff(tc.want, got))
			}
		})
	}
}

func TestBounded(t *testing.T) {
	long := strings.Repeat("a", 100) + strings.Repeat("z", 100)
	got := bounded(long, 60)
	if len(got) > 60 || !strings.HasPrefix(got, "aaaa") || !strings.HasSuffix(got, "zzzz") {
		t.Errorf("bounded(200 chars, 60) = %q: want at most 60 bytes, keeping the start and the end", got)
	}
	if got := bounded(" short ", 60); got != "short" {
		t.Errorf("bounded(short) = %q, want it trimmed and whole", got)
	}
}
