package admission

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// NameField is the claim field the name of the composed resource key
// derives from: the field a tenant changes to resolve a name collision.
func NameField(mc *v1alpha2.MiniCluster, key string) string {
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

// Conflict is an existing object of a name this MiniCluster composes,
// which is not its own.
type Conflict struct {
	Kind, Name, Namespace string
	// Owner is the object's controller, nil when it has none.
	Owner *metav1.OwnerReference
	// ComposedFor is the object's crossplane.io/composite label, set when
	// Crossplane composed it, and ClaimName its claim's name. In the v2
	// shape the composite is a MiniCluster of flux-framework.org/v1alpha2,
	// the Flux Operator's kind: the label tells them apart.
	ComposedFor, ClaimName string
	// Field makes the name on this MiniCluster's side (NameField).
	Field string
}

// Message says whose the object is and what the tenant can do; self is
// this MiniCluster's name. Names from metadata.name cannot change, so the
// fix for them is to re-create the MiniCluster under another name.
func (c Conflict) Message(self string) string {
	where := fmt.Sprintf("%s %s/%s already exists", c.Kind, c.Namespace, c.Name)
	fix := fmt.Sprintf("change %s", c.Field)
	if strings.HasPrefix(c.Field, "metadata.name") || c.Field == "spec.network.headlessName" {
		fix = fmt.Sprintf("delete this MiniCluster and create it again with another %s", c.Field)
	}
	const untouched = "; nothing was changed, and the existing object is untouched"
	switch {
	case c.Owner == nil:
		return where + fmt.Sprintf(" and no MiniCluster controls it: this MiniCluster cannot compose its own %s of that name (from %s). Delete that %s, or %s", c.Kind, c.Field, c.Kind, fix) + untouched
	case c.ComposedFor != "" && (c.ClaimName == self || c.Owner.Name == self):
		return where + fmt.Sprintf(", composed by Crossplane for %s %s (uid %s), not for this MiniCluster: typically an earlier MiniCluster of this name, still being deleted. It goes with that one, and this MiniCluster composes its own once it is gone; nothing was changed", c.Owner.Kind, c.Owner.Name, c.Owner.UID)
	case c.ComposedFor != "":
		other := c.Owner.Name
		if c.ClaimName != "" {
			other = c.ClaimName
		}
		return where + fmt.Sprintf(" and belongs to MiniCluster %s: its name comes from this MiniCluster's %s. Two MiniClusters in one namespace cannot compose objects of the same name: %s", other, c.Field, fix) + untouched
	case c.Owner.Kind == v1alpha2.ClaimKind && c.Owner.APIVersion == v1alpha2.SchemeGroupVersion.String():
		return where + fmt.Sprintf(", made by the Flux Operator for its MiniCluster %s (uid %s), not by this MiniCluster for Crossplane: the operator's %s keeps running untouched. Once the operator is gone, delete the MiniCluster (kubectl delete minicluster %s -n %s) and apply it again (docs/migration.md)", c.Owner.Name, c.Owner.UID, c.Kind, c.Owner.Name, c.Namespace)
	default:
		return where + fmt.Sprintf(", controlled by %s %s (%s): this MiniCluster cannot compose its own %s of that name (from %s). Delete that %s, or %s", c.Owner.Kind, c.Owner.Name, c.Owner.APIVersion, c.Kind, c.Field, c.Kind, fix) + untouched
	}
}
