package function

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// What the function reads of Kueue to explain the status.
const (
	kueueAPIVersion = "kueue.x-k8s.io/v1beta2"
	// labelKueueJobUID is the label Kueue puts on the Workload of a Job:
	// the Job's UID.
	labelKueueJobUID = "kueue.x-k8s.io/job-uid"
)

// observedOf converts what the composite observes of its own objects
// (admission.Trusted), once: the composed objects observe reads, and the
// Finished condition the composite has.
func observedOf(xr map[string]any, own map[string]*unstructured.Unstructured) observe.Observed {
	o := observe.Observed{Composed: map[string]bool{}}
	for name := range own {
		o.Composed[name] = true
	}
	if job := (&batchv1.Job{}); convertObserved(own[render.KeyJob], job) {
		o.Job = job
	}
	if svc := (&corev1.Service{}); convertObserved(own[render.KeyLeadBroker], svc) {
		o.LeadBroker = svc
	}
	if pod := (&corev1.Pod{}); convertObserved(own[render.KeyServicesPod], pod) {
		o.ServicesPod = pod
	}
	o.Finished = conditionOf(xr, v1alpha2.ConditionFinished)
	o.Written = writtenOf(xr)
	return o
}

// conditionOf is the composite's condition of type typ, nil when it has
// none.
func conditionOf(xr map[string]any, typ v1alpha2.ConditionType) *observe.Condition {
	c := observedCondition(xr, string(typ))
	if c == nil {
		return nil
	}
	reason, _ := c["reason"].(string)
	msg, _ := c["message"].(string)
	return &observe.Condition{Type: typ, True: c["status"] == string(corev1.ConditionTrue), Reason: v1alpha2.ConditionReason(reason), Message: msg}
}

// writtenOf is what the composite's status said when it was last written,
// nil when it does not convert (then every change is news).
func writtenOf(xr map[string]any) *observe.Written {
	w := &observe.Written{Brokers: conditionOf(xr, v1alpha2.ConditionBrokers)}
	if st, ok := xr["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(st, &w.Status); err != nil {
			return nil
		}
	}
	if c := observedCondition(xr, string(xpv2.TypeReady)); c != nil {
		w.Ready = ptr.To(c["status"] == string(corev1.ConditionTrue))
	}
	return w
}

// requeueJitter is how far Crossplane moves a response's TTL either way
// when it requeues the composite (composite.jitter in Crossplane 2.4:
// ±10 %).
const requeueJitter = 0.1

// lookAgainTTL is the TTL that brings the next run no sooner than after:
// a run Crossplane's jitter brought early would find the brokers' grace
// not yet over, read nothing, and ask again a moment later, one more run
// of no-op applies. It comes at most about a fifth of after late.
func lookAgainTTL(after time.Duration) time.Duration {
	return time.Duration(float64(after) / (1 - requeueJitter))
}

// readForStatus asks Crossplane for what observe needs beyond the composed
// objects at now, and adds to o what Crossplane answered. Each requirement
// is a watch Crossplane keeps while the function asks (its cached client
// serves them, and a change to a read object runs the composition again).
// While observe waits to see whether the brokers come up, the response's
// TTL brings the next run when it wants to look.
func readForStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, o *observe.Observed, now time.Time) error {
	reads := observe.ReadsFor(p, *o, now)
	if after := lookAgainTTL(reads.LookAgainAfter); after > 0 && after < rsp.GetMeta().GetTtl().AsDuration() {
		rsp.Meta.Ttl = durationpb.New(after)
	}
	ns := ptr.To(p.Namespace)
	if reads.Pods {
		found, err := requireAll(req, rsp, requiredPods, &fnv1.ResourceSelector{
			ApiVersion: "v1", Kind: "Pod", Namespace: ns,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{plan.LabelSelector: p.MiniCluster.Name}}},
		})
		if err != nil {
			return errors.Wrap(err, "cannot read the broker pods Crossplane returned")
		}
		for _, r := range found {
			pod := corev1.Pod{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Resource.UnstructuredContent(), &pod); err != nil {
				return errors.Wrapf(err, "cannot read pod %s", r.Resource.GetName())
			}
			o.Pods = append(o.Pods, pod)
		}
	}
	if reads.Events {
		// The only place the job controller says why it cannot create a
		// pod; FailedCreate events carry no labels to select by.
		found, err := requireAll(req, rsp, requiredEvents, &fnv1.ResourceSelector{
			ApiVersion: "v1", Kind: "Event", Namespace: ns,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
		})
		if err != nil {
			return errors.Wrap(err, "cannot read the Events Crossplane returned")
		}
		for _, r := range found {
			ev := corev1.Event{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Resource.UnstructuredContent(), &ev); err != nil {
				continue // an Event is a hint: one that does not decode says nothing
			}
			o.Events = append(o.Events, ev)
		}
	}
	if reads.Queue {
		if o.Job.UID != "" {
			found, err := requireAll(req, rsp, requiredWorkloads, &fnv1.ResourceSelector{
				ApiVersion: kueueAPIVersion, Kind: "Workload", Namespace: ns,
				Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{labelKueueJobUID: string(o.Job.UID)}}},
			})
			if err != nil {
				return errors.Wrap(err, "cannot read the Kueue Workloads Crossplane returned")
			}
			for _, r := range found {
				o.Workloads = append(o.Workloads, &unstructured.Unstructured{Object: r.Resource.Object})
			}
		}
		found, err := requireAll(req, rsp, requiredLocalQueue, &fnv1.ResourceSelector{
			ApiVersion: kueueAPIVersion, Kind: "LocalQueue", Namespace: ns,
			Match: &fnv1.ResourceSelector_MatchName{MatchName: o.Job.Labels[plan.LabelKueueQueueName]},
		})
		if err != nil {
			return errors.Wrap(err, "cannot read the Kueue LocalQueue Crossplane returned")
		}
		if len(found) > 0 {
			o.LocalQueue = &unstructured.Unstructured{Object: found[0].Resource.Object}
		}
	}
	return nil
}

// convertObserved converts an observed composed resource into a typed
// object, false when it was not observed or does not convert.
func convertObserved(o *unstructured.Unstructured, into any) bool {
	return o != nil && runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), into) == nil
}

// observedCondition is the condition of type typ of the composite xr as
// observed, nil if it has none.
func observedCondition(xr map[string]any, typ string) map[string]any {
	st, _ := xr["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}
