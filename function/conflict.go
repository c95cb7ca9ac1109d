package function

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// requiredJob names the requirement for an existing Job of the name the
// MiniCluster composes.
const requiredJob = "existing-job"

// foreignJob tells whether a Job of the name this MiniCluster composes
// already exists and is controlled by something else: typically the Flux
// Operator's MiniCluster of the same name, after this project's XRD took
// over the operator's CRD. Crossplane could not apply the composed Job over
// it (a Job has one controller and an immutable template) and would only
// say so in events; the message says whose Job it is and what to do.
//
// It asks only until the composite observes a Job of its own, so a running
// MiniCluster's reconciles cost nothing: the request for the Job is a
// requirement Crossplane answers by calling the function again with it,
// and "" means there is nothing to report yet (not asked, or not answered).
func foreignJob(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, compositeUID string) (string, error) {
	require(rsp, requiredJob, &fnv1.ResourceSelector{
		ApiVersion: "batch/v1",
		Kind:       "Job",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: p.Names.Job},
		Namespace:  ptr.To(p.Namespace),
	})
	found, answered, err := request.GetRequiredResource(req, requiredJob)
	if err != nil {
		return "", errors.Wrap(err, "cannot read the existing Job Crossplane returned")
	}
	if !answered {
		return "", nil
	}
	for _, r := range found {
		job := r.Resource
		owner := metav1.GetControllerOf(job)
		if owner != nil && owner.UID == types.UID(compositeUID) {
			continue // ours: its composite lost track of it, and finds it again
		}
		return foreignJobMessage(p, owner, job.GetLabels()[labelComposite]), nil
	}
	return "", nil
}

// labelComposite is the label Crossplane puts on every object it composes,
// naming the composite resource.
const labelComposite = "crossplane.io/composite"

// foreignJobMessage says whose the Job is. composedFor is the Job's
// labelComposite: set when Crossplane composed it, for another composite.
// In the v2 shape that composite is a MiniCluster of
// flux-framework.org/v1alpha2, the Flux Operator's kind: the label tells
// them apart.
func foreignJobMessage(p *plan.Plan, owner *metav1.OwnerReference, composedFor string) string {
	where := fmt.Sprintf("Job %s/%s already exists", p.Namespace, p.Names.Job)
	switch {
	case owner == nil:
		return where + " and no MiniCluster controls it: this MiniCluster cannot compose its own Job over it. Delete that Job, or give the MiniCluster another name; nothing was changed"
	case composedFor != "":
		return where + fmt.Sprintf(", composed by Crossplane for %s %s (uid %s), not for this MiniCluster: typically an earlier MiniCluster of this name, still being deleted. It goes with that one, and this MiniCluster composes its own Job once it is gone; nothing was changed", owner.Kind, owner.Name, owner.UID)
	case owner.Kind == v1alpha2.ClaimKind && owner.APIVersion == v1alpha2.SchemeGroupVersion.String():
		return where + fmt.Sprintf(", made by the Flux Operator for its MiniCluster %s (uid %s), not by this MiniCluster for Crossplane: the operator's Job keeps running untouched. Once the operator is gone, delete the MiniCluster (kubectl delete minicluster %s -n %s) and apply it again (docs/migration.md)", owner.Name, owner.UID, owner.Name, p.Namespace)
	default:
		return where + fmt.Sprintf(", controlled by %s %s (%s): this MiniCluster cannot compose its own Job over it. Delete that Job, or give the MiniCluster another name; nothing was changed", owner.Kind, owner.Name, owner.APIVersion)
	}
}
