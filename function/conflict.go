package function

import (
	"fmt"
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
			c := conflict{
				kind: gvk.Kind, name: m.GetName(), namespace: p.Namespace, owner: owner,
				composedFor: existing.GetLabels()[labelComposite],
				claimName:   existing.GetLabels()[v1alpha2.LabelClaimName],
				field:       nameField(p.MiniCluster, o.Name),
			}
			if o.Name == render.KeyJob {
				// The Job first: after a migration from the Flux
				// Operator it is the one that matters.
				msgs = append([]string{c.message(p.MiniCluster.Name)}, msgs...)
				jobTaken = true
				continue
			}
			msgs = append(msgs, c.message(p.MiniCluster.Name))
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

// nameField is the claim field the name of the composed resource key
// derives from: the field a tenant changes to resolve a name collision.
func nameField(mc *v1alpha2.MiniCluster, key string) string {
	switch {
	case key == render.KeyService && mc.Spec.Network.HeadlessName != mc.Name: // defaulted to the name
		return "spec.network.headlessName"
	case key == render.KeyCurveCert:
		return "metadata.name (the Secret is <name>-curve-cert)"
	case key == render.KeyEntrypoint:
		return "metadata.name (the ConfigMap is <name>-entrypoint)"
	case key == render.KeyLeadBroker:
		return "metadata.name (a burst's lead broker Service is <name>-lead-broker)"
	case key == render.KeyServicesPod:
		return "metadata.name (the services Pod is <name>-services)"
	case strings.HasPrefix(key, render.KeyContainerServicePrefix):
		name := strings.TrimPrefix(key, render.KeyContainerServicePrefix)
		for i, c := range mc.Spec.Containers {
			if c.Name == name {
				return fmt.Sprintf("spec.containers[%d].name (a container with ports gets a Service of its name)", i)
			}
		}
	}
	return "metadata.name"
}

// conflict is an existing object of a name this MiniCluster composes.
type conflict struct {
	kind, name, namespace string
	owner                 *metav1.OwnerReference
	// composedFor is the object's labelComposite, set when Crossplane
	// composed it, and claimName its claim's name. In the v2 shape the
	// composite is a MiniCluster of flux-framework.org/v1alpha2, the Flux
	// Operator's kind: the label tells them apart.
	composedFor, claimName string
	// field makes the name on this MiniCluster's side.
	field string
}

// message says whose the object is and what the tenant can do; self is
// this MiniCluster's name. Names from metadata.name cannot change, so the
// fix for them is to re-create the MiniCluster under another name.
func (c conflict) message(self string) string {
	where := fmt.Sprintf("%s %s/%s already exists", c.kind, c.namespace, c.name)
	fix := fmt.Sprintf("change %s", c.field)
	if strings.HasPrefix(c.field, "metadata.name") || c.field == "spec.network.headlessName" {
		fix = fmt.Sprintf("delete this MiniCluster and create it again with another %s", c.field)
	}
	const untouched = "; nothing was changed, and the existing object is untouched"
	switch {
	case c.owner == nil:
		return where + fmt.Sprintf(" and no MiniCluster controls it: this MiniCluster cannot compose its own %s of that name (from %s). Delete that %s, or %s", c.kind, c.field, c.kind, fix) + untouched
	case c.composedFor != "" && (c.claimName == self || c.owner.Name == self):
		return where + fmt.Sprintf(", composed by Crossplane for %s %s (uid %s), not for this MiniCluster: typically an earlier MiniCluster of this name, still being deleted. It goes with that one, and this MiniCluster composes its own once it is gone; nothing was changed", c.owner.Kind, c.owner.Name, c.owner.UID)
	case c.composedFor != "":
		other := c.owner.Name
		if c.claimName != "" {
			other = c.claimName
		}
		return where + fmt.Sprintf(" and belongs to MiniCluster %s: its name comes from this MiniCluster's %s. Two MiniClusters in one namespace cannot compose objects of the same name: %s", other, c.field, fix) + untouched
	case c.owner.Kind == v1alpha2.ClaimKind && c.owner.APIVersion == v1alpha2.SchemeGroupVersion.String():
		return where + fmt.Sprintf(", made by the Flux Operator for its MiniCluster %s (uid %s), not by this MiniCluster for Crossplane: the operator's %s keeps running untouched. Once the operator is gone, delete the MiniCluster (kubectl delete minicluster %s -n %s) and apply it again (docs/migration.md)", c.owner.Name, c.owner.UID, c.kind, c.owner.Name, c.namespace)
	default:
		return where + fmt.Sprintf(", controlled by %s %s (%s): this MiniCluster cannot compose its own %s of that name (from %s). Delete that %s, or %s", c.owner.Kind, c.owner.Name, c.owner.APIVersion, c.kind, c.field, c.kind, fix) + untouched
	}
}
