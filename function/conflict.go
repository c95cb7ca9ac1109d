package function

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// requiredExisting + a composed resource's name (render.Key*) names the
// requirement for an existing object of the name that resource takes.
const requiredExisting = "existing-"

// requiredJob is the requirement of the Job.
const requiredJob = requiredExisting + render.KeyJob

// labelComposite is the label Crossplane puts on every object it composes,
// naming the composite resource.
const labelComposite = "crossplane.io/composite"

// foreignObjects tells whether an object this MiniCluster is about to
// compose already exists and is not its own: the Flux Operator's Job of a
// MiniCluster of the same name, after this project's XRD took over the
// operator's CRD; another MiniCluster's object whose name this one's
// derives to (a bursting `a` composes Service `a-lead-broker` while
// another MiniCluster is named `a-lead-broker`); or an object a tenant made
// by hand. Crossplane would apply over it — failing on a second
// controller, or taking over a hand-made object — and say so only in
// events; this says whose object it is and which field of this
// MiniCluster makes the name.
//
// It asks only for the objects the composite does not observe yet, so a
// running MiniCluster's reconciles cost nothing: each request is a
// requirement Crossplane answers by calling the function again, and ""
// means there is nothing to report (not asked, not answered, or no
// conflict). The refusal's reason is JobExists when the Job's name is
// among them (typically the Flux Operator's Job, after a migration), else
// NameTaken.
func foreignObjects(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, objs []render.Object, observed map[resource.Name]resource.ObservedComposed, compositeUID string) error {
	var msgs []string
	jobTaken := false
	for _, o := range objs {
		if _, ok := observed[resource.Name(o.Name)]; ok {
			continue
		}
		m, err := meta.Accessor(o.Object)
		if err != nil {
			return errors.Wrapf(err, "cannot read the name of %s", o)
		}
		gvk := o.Object.GetObjectKind().GroupVersionKind()
		want := requiredExisting + o.Name
		require(rsp, want, &fnv1.ResourceSelector{
			ApiVersion: gvk.GroupVersion().String(),
			Kind:       gvk.Kind,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: m.GetName()},
			Namespace:  ptr.To(p.Namespace),
		})
		found, answered, err := request.GetRequiredResource(req, want)
		if err != nil {
			return errors.Wrapf(err, "cannot read the existing %s Crossplane returned", gvk.Kind)
		}
		if !answered {
			continue
		}
		for _, r := range found {
			existing := r.Resource
			owner := metav1.GetControllerOf(existing)
			if owner != nil && owner.UID == types.UID(compositeUID) {
				continue // ours: its composite lost track of it, and finds it again
			}
			c := observe.Conflict{
				Kind: gvk.Kind, Name: m.GetName(), Namespace: p.Namespace, Owner: owner,
				ComposedFor: existing.GetLabels()[labelComposite],
				ClaimName:   existing.GetLabels()[v1alpha2.LabelClaimName],
				Field:       observe.NameField(p.MiniCluster, o.Name),
			}
			if o.Name == render.KeyJob {
				// The Job first: after a migration from the Flux
				// Operator it is the one that matters.
				msgs = append([]string{c.Message(p.MiniCluster.Name)}, msgs...)
				jobTaken = true
				continue
			}
			msgs = append(msgs, c.Message(p.MiniCluster.Name))
		}
	}
	switch {
	case len(msgs) == 0:
		return nil
	case jobTaken:
		return &invalidError{reason: "JobExists", msg: strings.Join(msgs, "; ")}
	}
	return &invalidError{reason: "NameTaken", msg: strings.Join(msgs, "; ")}
}
