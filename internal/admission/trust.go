package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// Self is the MiniCluster as the room knows it: its composite and where
// its objects live.
type Self struct {
	// UID of the composite resource.
	UID string
	// Kind and Name of the composite resource.
	Kind, Name string
	// Namespaced: a Crossplane v2 composite, the tenant's own object;
	// else the claim shape's cluster-scoped composite.
	Namespaced bool
	// MiniCluster is the tenant's name for it (the claim's, or the v2
	// composite's own), and Namespace where every object of it lives.
	MiniCluster, Namespace string
}

// refsField is the field through which Crossplane observes the
// composite's objects, which is the field a tenant names them in.
func (s Self) refsField() string {
	if s.Namespaced {
		return "spec.crossplane.resourceRefs"
	}
	return fmt.Sprintf("spec.resourceRefs of XMiniCluster %s (the composite this claim is bound to, spec.resourceRef)", s.Name)
}

// Trust is what the room trusts of the objects Crossplane observes: only
// what this composite controls, in its namespace, composed for its claim.
type Trust struct {
	// Own are the observed objects that are this MiniCluster's, by
	// composition resource name.
	Own map[string]*unstructured.Unstructured
	// Foreign says, for each observed object that is not, why not.
	Foreign []string
	// Job is the own Job, nil when there is none (or it does not decode).
	Job *batchv1.Job
}

// Trusted sorts what Crossplane observes (composition resource name ->
// object) into this MiniCluster's own objects and the rest. Crossplane
// observes whatever the composite's resource references name, and a
// tenant writes those (spec.crossplane.resourceRefs of a v2 composite): an
// object orphaned from a deleted MiniCluster (kubectl delete
// --cascade=orphan keeps it, its composition-resource-name annotation
// with it), another composite's, or a composite an admin made whose
// objects live in another namespace. Crossplane would adopt the one
// without a controller and apply over it. An object is this MiniCluster's
// only when its controller reference is this composite's uid (Crossplane
// makes every composed resource controlled by exactly one composite), it
// lives in this MiniCluster's namespace, and its claim label, where it
// has one, names this claim.
func Trusted(self Self, observed map[string]*unstructured.Unstructured) Trust {
	t := Trust{Own: map[string]*unstructured.Unstructured{}}
	for _, key := range slices.Sorted(maps.Keys(observed)) {
		o := observed[key]
		if o == nil {
			continue
		}
		if why := foreign(self, o); why != "" {
			t.Foreign = append(t.Foreign, fmt.Sprintf("%s %s/%s (composition resource %s) %s", o.GetKind(), o.GetNamespace(), o.GetName(), key, why))
			continue
		}
		t.Own[key] = o
	}
	if o, ok := t.Own[render.KeyJob]; ok {
		job := &batchv1.Job{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), job) == nil {
			t.Job = job
		}
	}
	return t
}

// foreign says why o is not self's, "" when it is.
func foreign(self Self, o *unstructured.Unstructured) string {
	owner := metav1.GetControllerOf(o)
	switch {
	case owner == nil:
		return "has no controller (an orphan of a deleted MiniCluster, or made by hand)"
	case string(owner.UID) != self.UID:
		return fmt.Sprintf("is controlled by %s %s (uid %s), not by this MiniCluster (uid %s)", owner.Kind, owner.Name, owner.UID, self.UID)
	case o.GetNamespace() != self.Namespace:
		return fmt.Sprintf("lives in namespace %s, not in this MiniCluster's namespace %s", o.GetNamespace(), self.Namespace)
	}
	l := o.GetLabels()
	if n, ns := l[v1alpha2.LabelClaimName], l[v1alpha2.LabelClaimNamespace]; !self.Namespaced && ((n != "" && n != self.MiniCluster) || (ns != "" && ns != self.Namespace)) {
		return fmt.Sprintf("was composed for the claim %s/%s, not for this MiniCluster %s/%s", ns, n, self.Namespace, self.MiniCluster)
	}
	return ""
}

// ForeignRefused is the refusal of a MiniCluster that observes objects
// that are not its own, nil when it observes none.
func (t Trust) ForeignRefused(self Self) *Refused {
	if len(t.Foreign) == 0 {
		return nil
	}
	fix := "remove them from " + self.refsField() + "; an orphaned object stays as it is until its owner deletes it (kubectl delete), and this MiniCluster then composes its own"
	if !self.Namespaced {
		fix = "delete this claim and create it without spec.resourceRef: a claim composes its own objects in its own namespace; a cluster admin who made the XMiniCluster by hand sets its spec.claimRef (docs/security.md)"
	}
	return &Refused{Reason: ReasonForeignObject, Message: fmt.Sprintf("%s: Crossplane observes objects that are not this MiniCluster's: %s. The function composes only objects this MiniCluster controls and adopts none; %s%s",
		self.refsField(), strings.Join(t.Foreign, "; "), fix, nothingComposed)}
}

// AdmittedSize is the size Kueue admitted the MiniCluster's own Job with,
// 0 when Kueue admitted none: the plan keeps it (plan.Facts.AdmittedSize,
// observe.AdmittedMessage says why). Only a Job Trusted keeps a size: an
// orphaned Job's parallelism is no fact about this MiniCluster.
func (t Trust) AdmittedSize() int32 {
	if !observe.Admitted(t.Job) || t.Job.Spec.Parallelism == nil {
		return 0
	}
	return *t.Job.Spec.Parallelism
}

// running is the number of pods the own Job runs (its parallelism), 0
// when there is none.
func (t Trust) running() int32 {
	switch {
	case t.Job == nil:
		return 0
	case t.Job.Spec.Parallelism != nil && *t.Job.Spec.Parallelism > 0:
		return *t.Job.Spec.Parallelism
	}
	return 1
}
