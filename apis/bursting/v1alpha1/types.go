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
	// ClaimUID is the uid of the burst MiniCluster this Burst created in
	// the target, recorded as it created it. The controller takes a
	// MiniCluster of the claim's name for its own only when its uid is
	// this one (labels are any tenant's to write), and writes the root's
	// certificate only for it. It is status, which tenants of the target
	// namespace (and those of the Burst's, without bursts/status) cannot
	// write.
	ClaimUID string `json:"claimUID,omitempty"`
}

// BurstSpec spells out crossplane-runtime's ManagedResourceSpec rather
// than embedding it: that type defaults providerConfigRef to the
// ClusterProviderConfig "default", so a Burst that named no config would
// silently use whatever the platform team called "default" (typically the
// provider's own identity). A Burst must name its config.

// BurstSpec is the desired state of a Burst.
//
// +kubebuilder:validation:XValidation:rule="has(self.providerConfigRef)",message="spec.providerConfigRef is required: name a ProviderConfig of this namespace (kind: ProviderConfig, a kubeconfig Secret of your own) or a ClusterProviderConfig the platform team made for this namespace (kind: ClusterProviderConfig); there is no implicit default"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="spec.providerConfigRef.kind must be ProviderConfig or ClusterProviderConfig"
type BurstSpec struct {
	// WriteConnectionSecretToReference is unused (a Burst has no
	// connection details); kept for the managed resource contract.
	// +optional
	WriteConnectionSecretToReference *xpv2.LocalSecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ProviderConfigReference names the config that says how to reach the
	// target cluster: a ProviderConfig of the Burst's namespace, or a
	// ClusterProviderConfig whose allowedNamespaces or namespaceSelector
	// admit the Burst's namespace. Required: there is no default.
	// +optional
	ProviderConfigReference *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// ManagementPolicies specify the array of actions Crossplane is allowed
	// to take on the managed and external resources.
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	ForProvider BurstParameters `json:"forProvider"`
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

// ProviderConfigSpec says how Bursts of the ProviderConfig's namespace
// reach their target cluster: with a kubeconfig in a Secret of that
// namespace, and only so. The provider's own identity (InjectedIdentity)
// is the platform team's to hand out, through a ClusterProviderConfig that
// names the namespaces it serves and may write.
//
// +kubebuilder:validation:XValidation:rule="self.credentials.source == 'Secret'",message="a namespaced ProviderConfig reaches a cluster only with a kubeconfig Secret of its own namespace (credentials.source: Secret, credentials.secretRef): the provider's own identity (InjectedIdentity, None) is the platform team's to grant; ask them for a ClusterProviderConfig that allows this namespace"
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'Secret' || has(self.credentials.secretRef)",message="credentials.source Secret needs credentials.secretRef: the name and key of a Secret of this namespace holding the target cluster's kubeconfig"
type ProviderConfigSpec struct {
	// Credentials for the target cluster: a kubeconfig in a Secret of the
	// ProviderConfig's own namespace (source: Secret, secretRef; whatever
	// secretRef.namespace says, the Secret is read from the
	// ProviderConfig's namespace). The kubeconfig must carry its
	// credentials inline: one that reads a file, runs a program or names
	// a proxy is refused.
	Credentials ProviderCredentials `json:"credentials"`
}

// ClusterProviderConfigSpec says how Bursts of the namespaces it allows
// reach their target cluster, and where they may write there.
//
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'Secret' || has(self.credentials.secretRef)",message="credentials.source Secret needs credentials.secretRef: the namespace, name and key of a Secret holding the target cluster's kubeconfig"
type ClusterProviderConfigSpec struct {
	// Credentials for the target cluster: InjectedIdentity for the
	// cluster the controller runs in, with the controller's own service
	// account (None is an alias of InjectedIdentity, kept for configs
	// written before it), or a kubeconfig in a Secret (source: Secret,
	// secretRef with its namespace).
	Credentials ProviderCredentials `json:"credentials"`

	// AllowedNamespaces are the namespaces whose Bursts may use this
	// config. A Burst of any other namespace (and not matched by
	// namespaceSelector) is refused: with neither field set, no Burst may
	// use it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// NamespaceSelector admits, besides allowedNamespaces, the Bursts of
	// every namespace whose labels it matches (an empty selector, {},
	// matches every namespace). The provider gets the Burst's namespace
	// to check it.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// TargetNamespaces are the namespaces of the target cluster a Burst
	// using this config may write its burst MiniCluster and certificate
	// Secret in. Empty: the Burst's own namespace only.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
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

// A ClusterProviderConfig says how Bursts of the namespaces it allows reach
// their target cluster, and which target namespaces they may write: the
// platform team's way to lend the provider's own identity
// (InjectedIdentity) or a kubeconfig of theirs to tenants.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,flux}
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="NAMESPACES",type="string",JSONPath=".spec.allowedNamespaces"
// +kubebuilder:printcolumn:name="TARGETS",type="string",JSONPath=".spec.targetNamespaces"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
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
