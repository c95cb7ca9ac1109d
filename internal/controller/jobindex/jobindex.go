// Package jobindex labels every MiniCluster broker pod job-index=<its
// index>, the label the Flux Operator sets and its users select on (the
// lead broker as job-index: "0", e.g. upstream's bursting NodePort
// Service). A pod template cannot vary by index, so the label is copied
// from the Job controller's batch.kubernetes.io/job-completion-index once
// the pod exists, as the operator's own controller patches it.
package jobindex

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
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

// appFluxOperator is the value of the app label on every broker pod.
const appFluxOperator = "flux-operator"

// BrokerPod reports whether pod is a MiniCluster broker pod: the labels
// the function gives every broker pod, and the index the Job controller
// gives the pods of an Indexed Job.
func BrokerPod(l map[string]string) bool {
	_, indexed := l[plan.LabelCompletionIndex]
	_, selected := l[plan.LabelSelector]
	return indexed && selected && l[plan.LabelApp] == appFluxOperator
}

// Reconciler sets job-index on broker pods.
type Reconciler struct {
	Client client.Client
	Log    logging.Logger
}

// Reconcile labels the pod named by req, if it is a broker pod whose
// job-index is not its completion index. A merge patch of the one label
// leaves every other field to its owners.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
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

// Setup adds the job-index controller to mgr. It sees only broker pods
// that lack the right label, so other pods cost no reconcile.
func Setup(mgr ctrl.Manager, log logging.Logger, maxConcurrent int) error {
	r := &Reconciler{Client: mgr.GetClient(), Log: log.WithValues("controller", "job-index")}
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
