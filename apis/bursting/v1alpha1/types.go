// Package v1alpha1 is the API of the MiniCluster burst controller: a Burst
// realises one of a root MiniCluster's bursting clusters as a burst
// MiniCluster claim in a target cluster, and keeps its lead broker address
// true; a ProviderConfig says how to reach the target cluster.
//
// +kubebuilder:object:generate=true
// +groupName=bursting.flux-framework.org
// +versionName=v1alpha1
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Group and version of the bursting API.
const (
	Group   = "bursting.flux-framework.org"
	Version = "v1alpha1"
)

// Kinds of the bursting API.
const (
	BurstKind                 = "Burst"
	ProviderConfigKind        = "ProviderConfig"
	ClusterProviderConfigKind = "ClusterProviderConfig"
	ProviderConfigUsageKind   = "ProviderConfigUsage"
)

// SchemeGroupVersion of the bursting API.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// BurstGroupVersionKind is the GVK of a Burst.
var BurstGroupVersionKind = SchemeGroupVersion.WithKind(BurstKind)

// BurstParameters say which burst cluster to realise and where.
type BurstParameters struct {
	// Root is the root MiniCluster claim, in the Burst's namespace. It must
	// declare the cluster in spec.flux.bursting.clusters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Root string `json:"root"`

	// Cluster is the entry of the root's spec.flux.bursting.clusters this
	// Burst realises; the burst MiniCluster is named after it, so its pods'
	// hostnames are those the root's host list declares.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Cluster string `json:"cluster"`

	// TargetNamespace is where the burst MiniCluster and its copy of the
	// CURVE certificate are created in the target cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	TargetNamespace string `json:"targetNamespace"`

	// Address at which the target cluster reaches the root's nodes. By
	// default, the ExternalIP (else the InternalIP) of the node running the
	// root's lead broker.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Address string `json:"address,omitempty"`

	// Template is the burst MiniCluster's spec: its containers, pod and
	// logging settings. size, flux.bursting and flux.curveCertSecret are set
	// by the controller.
	Template v1alpha2.MiniClusterSpec `json:"template"`
}

// BurstObservation is what the controller last saw and did.
type BurstObservation struct {
	// Address and Port at which the burst reaches the lead broker.
	Address string `json:"address,omitempty"`
	Port    int32  `json:"port,omitempty"`
	// Node running the root's lead broker.
	Node string `json:"node,omitempty"`
	// Claim is the burst MiniCluster, as namespace/name in the target.
	Claim string `json:"claim,omitempty"`
	// ClaimReady is the burst MiniCluster's Ready condition.
	ClaimReady bool `json:"claimReady,omitempty"`
	// CurveCertSecret is the copy of the root's certificate in the target.
	CurveCertSecret string `json:"curveCertSecret,omitempty"`
}

// BurstSpec is the desired state of a Burst.
type BurstSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              BurstParameters `json:"forProvider"`
}

// BurstStatus is the observed state of a Burst.
type BurstStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 BurstObservation `json:"atProvider,omitempty"`
}

// A Burst joins one burst cluster, in another Kubernetes cluster or another
// namespace, to a root MiniCluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flux}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="ROOT",type="string",JSONPath=".spec.forProvider.root"
// +kubebuilder:printcolumn:name="CLUSTER",type="string",JSONPath=".spec.forProvider.cluster"
// +kubebuilder:printcolumn:name="LEAD",type="string",JSONPath=".status.atProvider.address"
// +kubebuilder:printcolumn:name="PORT",type="integer",JSONPath=".status.atProvider.port"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type Burst struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BurstSpec   `json:"spec"`
	Status BurstStatus `json:"status,omitempty"`
}

// BurstList is a list of Bursts.
//
// +kubebuilder:object:root=true
type BurstList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Burst `json:"items"`
}

// ProviderConfigSpec says how to reach the target cluster.
type ProviderConfigSpec struct {
	// Credentials for the target cluster: a kubeconfig in a Secret
	// (source: Secret, secretRef), or InjectedIdentity for the cluster the
	// controller runs in, with the controller's own service account (None
	// is an alias of InjectedIdentity, kept for configs written before it).
	Credentials ProviderCredentials `json:"credentials"`
}

// ProviderCredentials of the target cluster.
type ProviderCredentials struct {
	// Source of the credentials.
	// +kubebuilder:validation:Enum=InjectedIdentity;None;Secret
	Source xpv2.CredentialsSource `json:"source"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// A ProviderConfig says how Bursts in its namespace reach their target
// cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,flux}
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfigs.
//
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// A ClusterProviderConfig says how Bursts in any namespace reach their
// target cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,flux}
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ClusterProviderConfigList is a list of ClusterProviderConfigs.
//
// +kubebuilder:object:root=true
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// A ProviderConfigUsage records that a Burst uses a provider config, so the
// config cannot be deleted from under it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,flux}
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// ProviderConfigUsageList is a list of ProviderConfigUsages.
//
// +kubebuilder:object:root=true
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}

// AddToScheme registers the bursting API.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&Burst{}, &BurstList{},
		&ProviderConfig{}, &ProviderConfigList{},
		&ClusterProviderConfig{}, &ClusterProviderConfigList{},
		&ProviderConfigUsage{}, &ProviderConfigUsageList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
