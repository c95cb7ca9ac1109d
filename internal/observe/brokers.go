package observe

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Bounds that keep a condition message readable in kubectl describe.
const (
	maxCauses        = 3   // distinct causes listed
	maxPodsPerCause  = 4   // pods named for one cause
	maxCauseMessage  = 300 // characters of one Kubernetes message
	maxLastWordsSize = 600 // characters of the lead's termination message
)

// report is what the Brokers condition says while the brokers are not up.
type report struct {
	reason  v1alpha2.ConditionReason
	message string
}

// cause is why one pod is not up.
type cause struct {
	reason, message string
}

// causeGroup is one cause and the brokers it keeps from coming up.
type causeGroup struct {
	cause
	hosts []string
}

// brokersReport says how many of the brokers are up and why the others
// are not. It changes only when a cause does: no restart counts, times or
// generated pod names, and a stable order (by broker index).
//
// The count is the Job's ready count, as in status.job.ready and the
// phase, also when the pods were read: the job controller updates it at
// most about once a second, where counting the pods would change the
// status (and run the composition three times, and write the claim) for
// each broker of a slow start that comes up. The pods say only why.
func brokersReport(p *plan.Plan, job *batchv1.Job, pods []corev1.Pod, events []corev1.Event) report {
	byIndex := map[int][]*corev1.Pod{}
	for i := range pods {
		pod := &pods[i]
		if owner := ownerUID(pod); job.UID != "" && owner != job.UID {
			continue // an earlier Job's of the same name, still going
		}
		idx, err := strconv.Atoi(pod.Labels[plan.LabelCompletionIndex])
		if err != nil {
			continue
		}
		byIndex[idx] = append(byIndex[idx], pod)
	}
	head := upMessage(ptr.Deref(job.Status.Ready, 0), p.Size)

	indexes := make([]int, 0, len(byIndex))
	for idx := range byIndex {
		indexes = append(indexes, idx)
	}
	sort.Ints(indexes)
	causes := map[int]cause{}
	for _, idx := range indexes {
		if c, ok := indexCause(byIndex[idx]); ok {
			causes[idx] = c
		}
	}
	foldGangCauses(causes)
	var groups []*causeGroup
	seen := map[cause]*causeGroup{}
	for _, idx := range indexes {
		c, ok := causes[idx]
		if !ok {
			continue
		}
		g := seen[c]
		if g == nil {
			g = &causeGroup{cause: c}
			seen[c] = g
			groups = append(groups, g)
		}
		g.hosts = append(g.hosts, fmt.Sprintf("%s-%d", p.Names.Job, idx))
	}

	var parts []string
	reason := v1alpha2.ReasonBrokersStarting
	if msg := failedCreate(job, events); msg != "" {
		reason = v1alpha2.ReasonFailedCreate
		parts = append(parts, "the Job cannot create its pods: "+msg)
	}
	for i, g := range groups {
		if i == 0 && reason == v1alpha2.ReasonBrokersStarting {
			reason = v1alpha2.ConditionReason(g.reason)
		}
		if i == maxCauses {
			parts = append(parts, fmt.Sprintf("and %d more causes", len(groups)-maxCauses))
			break
		}
		hosts := g.hosts
		if len(hosts) > maxPodsPerCause {
			hosts = append(hosts[:maxPodsPerCause:maxPodsPerCause], fmt.Sprintf("and %d more", len(g.hosts)-maxPodsPerCause))
		}
		parts = append(parts, fmt.Sprintf("%s: %s: %s", strings.Join(hosts, ", "), g.reason, g.message))
	}
	if held := heldBrokers(byIndex); held > 0 && unschedulable(groups) {
		parts = append(parts, fmt.Sprintf("%d %s scheduled and waiting for the rest, which cannot be scheduled: %s (%s)",
			held, plural(held, "broker is", "brokers are"), holdingFix, HoldingDocs))
	}
	if len(parts) == 0 {
		return report{reason: reason, message: head}
	}
	return report{reason: reason, message: head + "; " + strings.Join(parts, "; ")}
}

// HoldingDocs is where a user reads how a MiniCluster starts, and what
// a platform turns on so that it starts whole.
const HoldingDocs = "docs/minicluster.md#how-a-minicluster-starts"

// holdingFix says what a MiniCluster that holds part of its brokers costs
// and what starts it whole. Flux's brokers wait for their quorum, so the
// ones that run do nothing while they keep their share of the nodes, and
// MiniClusters that each hold part of theirs wait for one another until
// their deadlines.
const holdingFix = "they keep their share of the nodes and do nothing until then, and MiniClusters that each hold part of theirs wait for one another; a platform starts brokers whole with gang scheduling (Kubernetes ≥ 1.37 with the GenericWorkload gate: the function composes a PodGroup for every new MiniCluster) or with Kueue, which admits a Job whole; else run fewer at once"

// heldBrokers counts the broker indexes whose newest pod is on a node and
// still runs: what the MiniCluster holds of the cluster.
func heldBrokers(byIndex map[int][]*corev1.Pod) int {
	held := 0
	for _, pods := range byIndex {
		var newest *corev1.Pod
		for _, p := range pods {
			if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
				newest = p
			}
		}
		if newest.Spec.NodeName != "" && newest.DeletionTimestamp == nil && newest.Status.Phase != corev1.PodSucceeded && newest.Status.Phase != corev1.PodFailed {
			held++
		}
	}
	return held
}

// unschedulable tells whether some broker waits because the scheduler
// finds no node for it.
func unschedulable(groups []*causeGroup) bool {
	for _, g := range groups {
		if g.reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// indexCause is why the broker of one index is not up: the newest of its
// pods that says why. A pod the Job replaces after a failure starts with no
// cause of its own, so the one it replaces speaks for it, and a crash loop
// keeps one message instead of flipping with each new pod.
func indexCause(pods []*corev1.Pod) (cause, bool) {
	sort.SliceStable(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return pods[i].Name > pods[j].Name
	})
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed {
			continue // stopping: a scale-down or a replacement, not a cause
		}
		if c, ok := podCause(pod); ok {
			return c, true
		}
		if podReady(pod) {
			return cause{}, false
		}
	}
	return cause{}, false
}

// gangWaits is how kube-scheduler's GangScheduling plugin (1.37) says that
// a pod of a gang is not placed because its gang cannot be: "minCount (4)
// cannot be satisfied: 0 scheduled, 3 remaining". The pod itself may fit;
// the cause is what another pod of the gang found.
var gangWaits = regexp.MustCompile(`^minCount \(\d+\) cannot be satisfied`)

// foldGangCauses gives the brokers that wait only for their gang the cause
// a broker of the gang is unschedulable for, when one says it: a user reads
// why the MiniCluster cannot start (a node selector, too little CPU), not
// that its gang is short. Without such a broker, the gang's own message
// stays.
func foldGangCauses(causes map[int]cause) {
	var why *cause
	idxs := make([]int, 0, len(causes))
	for idx := range causes {
		idxs = append(idxs, idx)
	}
	sort.Ints(idxs)
	for _, idx := range idxs {
		c := causes[idx]
		if c.reason == corev1.PodReasonUnschedulable && !gangWaits.MatchString(c.message) {
			why = &c
			break
		}
	}
	if why == nil {
		return
	}
	for idx, c := range causes {
		if c.reason == corev1.PodReasonUnschedulable && gangWaits.MatchString(c.message) {
			causes[idx] = *why
		}
	}
}

// waitingProgress are waiting reasons of a container on its way up.
var waitingProgress = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// podCause is why pod is not up, the way kubectl get pods names it
// (Init:<reason> for an init container), or false while it is on its way.
func podCause(pod *corev1.Pod) (cause, bool) {
	if pod.Status.Phase == corev1.PodSucceeded {
		return cause{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return cause{reason: c.Reason, message: bounded(c.Message, maxCauseMessage)}, true
		}
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if c, ok := containerCause(st); ok {
			c.reason = "Init:" + c.reason
			return c, true
		}
	}
	for _, st := range pod.Status.ContainerStatuses {
		if c, ok := containerCause(st); ok {
			return c, true
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		reason := pod.Status.Reason
		if reason == "" {
			reason = string(corev1.PodFailed)
		}
		return cause{reason: reason, message: bounded(pod.Status.Message, maxCauseMessage)}, true
	}
	return cause{}, false
}

// backOffPulling is how the kubelet prefixes the pull error it keeps
// between two attempts.
var backOffPulling = regexp.MustCompile(`^Back-off pulling image "[^"]*": (\w+): `)

func containerCause(st corev1.ContainerStatus) (cause, bool) {
	if w := st.State.Waiting; w != nil && !waitingProgress[w.Reason] {
		switch w.Reason {
		case "CrashLoopBackOff":
			// Its message counts the back-off up; the exit it backs off
			// from is the cause.
			if t := st.LastTerminationState.Terminated; t != nil {
				return cause{reason: w.Reason, message: exited(st.Name, t)}, true
			}
			return cause{reason: w.Reason, message: "container " + st.Name + " keeps exiting"}, true
		case "ImagePullBackOff":
			// The kubelet alternates ErrImagePull and ImagePullBackOff with
			// the same error: report it one way.
			if m := backOffPulling.FindStringSubmatch(w.Message); m != nil {
				return cause{reason: m[1], message: bounded(w.Message[len(m[0]):], maxCauseMessage)}, true
			}
		}
		return cause{reason: w.Reason, message: bounded(w.Message, maxCauseMessage)}, true
	}
	if t := st.State.Terminated; t != nil && t.ExitCode != 0 {
		reason := t.Reason
		if reason == "" {
			reason = "Error"
		}
		return cause{reason: reason, message: exited(st.Name, t)}, true
	}
	return cause{}, false
}

func exited(name string, t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("container %s exited with %d", name, t.ExitCode)
	if t.Signal != 0 {
		msg = fmt.Sprintf("container %s was killed by signal %d", name, t.Signal)
	}
	if words := oneLine(t.Message, maxCauseMessage); words != "" {
		msg += ": " + words
	}
	return msg
}

// eventPodName is the generated pod name in a FailedCreate message: each
// attempt has another, and the cause is the same.
var eventPodName = regexp.MustCompile(`^(Error creating: )?pods "[^"]*" is forbidden: `)

// failedCreate is why the job controller last failed to create one of
// job's pods, from its newest FailedCreate event, or "".
func failedCreate(job *batchv1.Job, events []corev1.Event) string {
	var newest *corev1.Event
	for i := range events {
		ev := &events[i]
		if ev.Reason != string(v1alpha2.ReasonFailedCreate) || ev.InvolvedObject.Kind != "Job" || ev.InvolvedObject.Name != job.Name {
			continue
		}
		if job.UID != "" && ev.InvolvedObject.UID != job.UID {
			continue
		}
		if newest == nil || eventTime(ev).After(eventTime(newest)) || (eventTime(ev).Equal(eventTime(newest)) && ev.Name > newest.Name) {
			newest = ev
		}
	}
	if newest == nil {
		return ""
	}
	msg := eventPodName.ReplaceAllString(newest.Message, "")
	msg = strings.TrimPrefix(msg, "Error creating: ")
	return bounded(msg, maxCauseMessage)
}

// eventTime is when an Event last happened, whichever API wrote it.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	}
	return ev.CreationTimestamp.Time
}

// leadWords is what the lead's runner said on the way out: its termination
// message (the job's exit code and the job's own last lines), its exit
// code, and where the whole log is.
type leadWords struct {
	words                  string
	code                   int32
	namespace, pod, runner string
}

// lastWords is the lead's termination message from the newest lead pod
// that has one, and the runner's exit code.
func lastWords(pods []corev1.Pod) leadWords {
	var best *corev1.ContainerStateTerminated
	var lw leadWords
	for i := range pods {
		if pods[i].Labels[plan.LabelCompletionIndex] != "0" {
			continue
		}
		for _, st := range pods[i].Status.ContainerStatuses {
			t := st.State.Terminated
			if t == nil || strings.TrimSpace(t.Message) == "" {
				continue
			}
			if best == nil || t.FinishedAt.After(best.FinishedAt.Time) {
				best = t
				lw = leadWords{namespace: pods[i].Namespace, pod: pods[i].Name, runner: st.Name}
			}
		}
	}
	if best == nil {
		return leadWords{}
	}
	lw.words, lw.code = oneLine(best.Message, maxLastWordsSize), best.ExitCode
	return lw
}

// finishedMessage is the Finished message of a finished job, with the
// lead's last words after the claim's terms, then where the whole log is,
// before the Job's own reason and message. The runner's exit code says
// whether the cluster ended for a reason other than the job.
func finishedMessage(job *batchv1.Job, lw leadWords) string {
	msg, detail := failedMessage(job), ""
	if lw.code == entrypoint.ViewDoesNotFitExitCode {
		msg = "the Flux view cannot run in the application image" + strings.TrimPrefix(msg, "the job on the lead broker failed")
	}
	c := endCondition(job, batchv1.JobFailed, batchv1.JobFailureTarget)
	if !failed(job) {
		msg = succeededMessage(job)
		c = endCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet)
	}
	if c != nil {
		detail = jobDetail(c)
	}
	where := ""
	if lw.pod != "" {
		where = fmt.Sprintf("; the whole log: kubectl logs -n %s %s -c %s", lw.namespace, lw.pod, lw.runner)
	}
	return strings.TrimSuffix(msg, detail) + ": " + lw.words + where + detail
}

// oneLine joins a multi-line message into one line for a condition,
// keeping its first line and as much of its end as fits.
func oneLine(s string, limit int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return bounded(strings.Join(lines, " | "), limit)
}

// bounded cuts s to at most limit bytes, keeping its start and its end
// (where a log's last words are).
func bounded(s string, limit int) string {
	s = strings.TrimSpace(s)
	if len(s) <= limit {
		return s
	}
	const gap = " … "
	keep := limit - len(gap)
	head := keep / 3
	return strings.ToValidUTF8(s[:head], "") + gap + strings.ToValidUTF8(s[len(s)-(keep-head):], "")
}

// upMessage counts the brokers up. A full cluster's needs no count (its
// status has size and job.ready), which keeps the steady response the same
// size whatever the cluster's.
func upMessage(up, size int32) string {
	if up == size {
		return "all brokers up"
	}
	return fmt.Sprintf("%d of %d brokers up", up, size)
}

func ownerUID(pod *corev1.Pod) types.UID {
	for _, o := range pod.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}
