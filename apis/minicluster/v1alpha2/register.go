package v1alpha2

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeBuilder registers the MiniCluster types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the MiniCluster types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &MiniCluster{}, &MiniClusterList{})
	s.AddKnownTypeWithName(SchemeGroupVersion.WithKind(CompositeKind), &MiniCluster{})
	return nil
}

// GroupVersionKind of the claim.
func ClaimGVK() schema.GroupVersionKind { return SchemeGroupVersion.WithKind(ClaimKind) }
