// Package v1alpha2 holds the MiniCluster API (flux-framework.org/v1alpha2):
// the same manifests tenants used with the Flux Operator, served here as a
// Crossplane composite resource claim.
//
// The types are the single source of truth: the XRD schema is generated from
// them (see compositions/), and Default and Validate give the function the
// same rules the API server enforces, because `crossplane composition render`
// and upstream YAML never pass through an API server.
//
// +kubebuilder:object:generate=true
// +groupName=flux-framework.org
// +versionName=v1alpha2
package v1alpha2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and version of the MiniCluster API.
const (
	Group   = "flux-framework.org"
	Version = "v1alpha2"
)

// Kinds served by the XRD: the namespaced claim keeps the upstream kind, the
// cluster-scoped composite gets the conventional X prefix.
const (
	ClaimKind     = "MiniCluster"
	CompositeKind = "XMiniCluster"
)

// Labels Crossplane puts on a composite resource that a claim created: the
// function names what it composes after the claim, not the composite.
const (
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
)

// AnnotationJobSpecHash names, on the composed Job, a hash of the immutable
// part of the Job spec the function rendered for it: the function keeps a
// running Job's spec across upgrades by it, and trusts a running Job as
// admitted only while the MiniCluster's spec still renders that hash.
const AnnotationJobSpecHash = "minicluster.flux-framework.org/job-spec-hash"

// SchemeGroupVersion is the group version of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
