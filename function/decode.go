package function

import (
	"encoding/json"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Decode reads the MiniCluster and the namespace its objects go to from a
// composite resource of either shape:
//
//   - Crossplane v2 (a namespaced XR: metadata.namespace is set): the
//     tenant's MiniCluster is the composite itself, so its name and
//     namespace are the XR's own. Claim labels on it are ignored: on a
//     namespaced XR they are whatever the tenant wrote.
//   - claims (a cluster-scoped XR): the name and namespace of its claim,
//     from the labels Crossplane sets, else spec.claimRef.
//
// The namespace always comes from where the tenant's object lives, so a
// tenant cannot place objects in another namespace.
func Decode(xr map[string]any) (*v1alpha2.MiniCluster, string, error) {
	b, err := json.Marshal(xr)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot encode composite resource")
	}
	mc := &v1alpha2.MiniCluster{}
	if err := json.Unmarshal(b, mc); err != nil {
		return nil, "", errors.Wrap(err, "cannot decode composite resource as a MiniCluster: check the types of its spec fields")
	}
	if ns := mc.GetNamespace(); ns != "" {
		if mc.GetName() == "" {
			return nil, "", errors.Errorf("composite resource in namespace %q has no metadata.name", ns)
		}
		return mc, ns, nil
	}
	labels := mc.GetLabels()
	name, ns := labels[v1alpha2.LabelClaimName], labels[v1alpha2.LabelClaimNamespace]
	if name == "" || ns == "" {
		var ref struct {
			Spec struct {
				ClaimRef *struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"claimRef"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(b, &ref); err == nil && ref.Spec.ClaimRef != nil {
			name, ns = ref.Spec.ClaimRef.Name, ref.Spec.ClaimRef.Namespace
		}
	}
	if name == "" || ns == "" {
		return nil, "", errors.Errorf("composite resource %q has no claim and no namespace: create a MiniCluster in a namespace (the cluster's objects live in the MiniCluster's namespace)", mc.GetName())
	}
	mc.Name = name
	mc.Namespace = ns
	return mc, ns, nil
}
