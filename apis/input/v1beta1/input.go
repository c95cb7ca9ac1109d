// Package v1beta1 is the input of the MiniCluster composition function: the
// defaults a platform team sets once, in the Composition, for every tenant's
// MiniCluster, where a claim's own values win, and the policy it enforces,
// which no claim can change.
//
// +kubebuilder:object:generate=true
// +groupName=minicluster.fn.flux-framework.org
// +versionName=v1beta1
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// SchemeGroupVersion of the input.
var SchemeGroupVersion = schema.GroupVersion{Group: "minicluster.fn.flux-framework.org", Version: "v1beta1"}

// Input is the function's input.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Defaults for every MiniCluster composed with this Composition.
	// +optional
	Defaults Defaults `json:"defaults,omitempty"`

	// Policy enforced on every MiniCluster composed with this Composition;
	// left out, the secure defaults apply (Policy.Effective).
	// +optional
	Policy Policy `json:"policy,omitempty"`

	// Scheduling says how the brokers of every MiniCluster composed with
	// this Composition are placed on the nodes.
	// +optional
	Scheduling Scheduling `json:"scheduling,omitempty"`
}

// Scheduling of a MiniCluster's brokers.
type Scheduling struct {
	// Gang says whether a MiniCluster's brokers start whole: with gang
	// scheduling the function composes a Workload and a PodGroup
	// (scheduling.k8s.io/v1beta1, Kubernetes 1.37 with the GenericWorkload
	// feature gate) whose minCount is the quorum the MiniCluster starts
	// with (spec.minSize, else spec.size), and kube-scheduler places that
	// many brokers at once or none, so a MiniCluster never holds part of
	// the nodes while it waits for the rest. Auto (the default) does so
	// where the cluster serves the API (its APIService
	// v1beta1.scheduling.k8s.io is Available) and changes nothing where it
	// does not; Required composes nothing until the API is served;
	// Disabled never composes them. A running MiniCluster keeps what it
	// started with: a Job's pod template cannot change.
	// +kubebuilder:validation:Enum=Auto;Required;Disabled
	// +optional
	Gang GangMode `json:"gang,omitempty"`
}

// GangMode is Scheduling.Gang.
type GangMode string

// Gang modes.
const (
	GangAuto     GangMode = "Auto"
	GangRequired GangMode = "Required"
	GangDisabled GangMode = "Disabled"
)

// Effective is the mode, Auto when left out.
func (s Scheduling) Effective() GangMode {
	if s.Gang == "" {
		return GangAuto
	}
	return s.Gang
}

// Defaults a platform team sets for its tenants.
type Defaults struct {
	// FluxViewImage replaces the default Flux view image (e.g. a mirror in
	// the platform's registry): the view of a MiniCluster that names none
	// and whose runner's image no entry of fluxViews matches. Setting it
	// leaves the built-in view table out unless builtinFluxViews is true:
	// the platform chose its views.
	// +optional
	FluxViewImage string `json:"fluxViewImage,omitempty"`

	// FluxViews pick the Flux view of a MiniCluster that names none
	// (spec.flux.container.image) by its Flux runner's image: the view's
	// binaries run with that image's C library, so the two must share an
	// OS. They are tried in order before the built-in table
	// (DefaultFluxViews), so an entry for an image the table knows replaces
	// its view (a registry mirror, an arm view); the first match wins.
	// +optional
	FluxViews []FluxView `json:"fluxViews,omitempty"`

	// BuiltinFluxViews says whether the built-in view table picks views
	// after fluxViews: by default only when fluxViewImage is not set.
	// +optional
	BuiltinFluxViews *bool `json:"builtinFluxViews,omitempty"`

	// ConnectTimeout replaces the default broker connect timeout.
	// +optional
	ConnectTimeout *string `json:"connectTimeout,omitempty"`

	// NodeSelector for pods of claims that set none.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations for pods of claims that set none.
	// +optional
	Tolerations []v1alpha2.Toleration `json:"tolerations,omitempty"`

	// ImagePullSecrets added to every pod.
	// +optional
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
}

// PlatformDefaults converts the input for the API's defaulting.
func (d Defaults) PlatformDefaults() v1alpha2.PlatformDefaults {
	return v1alpha2.PlatformDefaults{
		ViewImage:        d.FluxViewImage,
		ConnectTimeout:   d.ConnectTimeout,
		NodeSelector:     d.NodeSelector,
		Tolerations:      d.Tolerations,
		ImagePullSecrets: d.ImagePullSecrets,
	}
}

// AddToScheme registers the input.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &Input{})
	return nil
}
