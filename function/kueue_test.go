package function

import (
	"strings"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// TestQueueName: the queue of jobLabels, else of the pods' labels; two
// different ones are an error.
func TestQueueName(t *testing.T) {
	mc := &v1alpha2.MiniCluster{}
	mc.Spec.Pod.Labels = map[string]string{plan.LabelKueueQueueName: "pods-queue"}
	if q := QueueName(mc); q != "pods-queue" {
		t.Errorf("from the pods' labels: %q", q)
	}
	mc.Spec.JobLabels = map[string]string{plan.LabelKueueQueueName: "job-queue"}
	if q := QueueName(mc); q != "job-queue" {
		t.Errorf("from jobLabels: %q", q)
	}
	if msg := queueConflict(mc); !strings.Contains(msg, "spec.pod.labels[kueue.x-k8s.io/queue-name]") {
		t.Errorf("conflict: %q", msg)
	}
}
