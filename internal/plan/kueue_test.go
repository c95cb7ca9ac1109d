package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestQueue: the queue of spec.jobLabels, else of spec.pod.labels; two
// different ones are refused, naming the pods' label and the fix.
func TestQueue(t *testing.T) {
	labels := func(job, pods string) func(*v1alpha2.MiniCluster) {
		return func(m *v1alpha2.MiniCluster) {
			if job != "" {
				m.Spec.JobLabels = map[string]string{LabelKueueQueueName: job}
			}
			if pods != "" {
				m.Spec.Pod.Labels = map[string]string{LabelKueueQueueName: pods}
			}
		}
	}
	type want struct {
		queue string
		err   string
	}
	cases := map[string]struct {
		reason string
		mc     *v1alpha2.MiniCluster
		want   want
	}{
		"None":     {reason: "No queue: Kueue is not involved.", mc: mc()},
		"Job":      {reason: "The Job's label is the queue.", mc: mc(labels("job-queue", "")), want: want{queue: "job-queue"}},
		"PodsOnly": {reason: "A queue named on the pods only is the Job's too.", mc: mc(labels("", "pods-queue")), want: want{queue: "pods-queue"}},
		"Same":     {reason: "The same queue twice is one queue.", mc: mc(labels("q", "q")), want: want{queue: "q"}},
		"Different": {
			reason: "Two queues: Kueue queues the Job and its pods in one.",
			mc:     mc(labels("job-queue", "pods-queue")),
			want:   want{err: `spec.pod.labels[kueue.x-k8s.io/queue-name]: Invalid value: "pods-queue": is another queue than spec.jobLabels[kueue.x-k8s.io/queue-name] "job-queue"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(tc.mc, Facts{Namespace: "tenant-a"})
			var got want
			if p != nil {
				got.queue = p.Queue
			}
			if len(errs) > 0 {
				got.err, _, _ = strings.Cut(errs.ToAggregate().Error(), ": Kueue queues")
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s\nNew: -want +got:\n%s", tc.reason, d)
			}
		})
	}
}
