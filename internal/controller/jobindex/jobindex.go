// Package jobindex labels MiniCluster broker pods job-index=<index>, the
// label the Flux Operator sets and its users select on (the lead broker as
// job-index: "0", e.g. upstream's bursting NodePort Service). A pod
// template cannot vary by index, so the label is copied from the Job
// controller's batch.kubernetes.io/job-completion-index once the pod
// exists, as the operator's own controller patches it.
//
// It is opt-in, per MiniCluster: only pods labelled
// flux-framework.org/job-index: "true" (spec.pod.labels) are watched and
// patched. The provider thus neither watches every pod of the cluster nor
// patches pods nobody asked it to; its pod cache holds only the pods that
// opted in (PodCache).
package jobindex

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// LabelJobIndex is the Flux Operator's label of a broker pod's index.
const LabelJobIndex = "job-index"

// LabelOptIn is the pod label (value "true") by which a MiniCluster asks
// for job-index, through spec.pod.labels.
const LabelOptIn = "flux-framework.org/job-index"

// appFluxOperator is the value of the app label on every broker pod.
const appFluxOperator = "flux-operator"

// BrokerPod reports whether pod is a MiniCluster broker pod that asked for
// job-index: the labels the function gives every broker pod, the index the
// Job controller gives the pods of an Indexed Job, and the opt-in label.
func BrokerPod(l map[string]string) bool {
	_, indexed := l[plan.LabelCompletionIndex]
	_, selected := l[plan.LabelSelector]
	return indexed && selected && l[plan.LabelApp] == appFluxOperator && l[LabelOptIn] == "true"
}

// PodCache restricts the manager's pod cache (and so the job-index
// controller's watch) to the pods that opted in: the API server filters
// them, so the provider neither receives nor holds any other pod.
func PodCache() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelOptIn: "true"})}
}

// Reconciler sets job-index on broker pods. It reads pods from Reader (the
// manager's cache, holding only opted-in pods) and patches them with Client.
type Reconciler struct {
	Reader client.Reader
	Client client.Client
	Log    logging.Logger
}

// Reconcile labels the pod named by req, if it is a broker pod whose
// job-index is not its completion index. A merge patch of the one label
// leaves every other field to its owners.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Reader.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(err), "cannot get pod")
	}
	index := pod.Labels[plan.LabelCompletionIndex]
	if !BrokerPod(pod.Labels) || pod.Labels[LabelJobIndex] == index || pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Labels[LabelJobIndex] = index
	if err := r.Client.Patch(ctx, pod, patch); err != nil {
		return reconcile.Result{}, errors.Wrapf(client.IgnoreNotFound(err), "cannot label pod %s %s=%s", req.NamespacedName, LabelJobIndex, index)
	}
	r.Log.Debug("Labelled broker pod", "pod", req.String(), LabelJobIndex, index)
	return reconcile.Result{}, nil
}

// Setup adds the job-index controller to mgr, whose cache must hold pods
// as PodCache says. It sees only opted-in broker pods that lack the right
// label, so other pods cost no reconcile.
func Setup(mgr ctrl.Manager, log logging.Logger, maxConcurrent int) error {
	r := &Reconciler{Reader: mgr.GetCache(), Client: mgr.GetClient(), Log: log.WithValues("controller", "job-index")}
	unlabelled := predicate.NewPredicateFuncs(func(o client.Object) bool {
		l := o.GetLabels()
		return BrokerPod(l) && l[LabelJobIndex] != l[plan.LabelCompletionIndex]
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("job-index").
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrent}).
		For(&corev1.Pod{}, builder.WithPredicates(unlabelled)).
		Complete(r)
	return errors.Wrap(err, "cannot set up the job-index controller")
}
