package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MiniCluster is a Flux Framework cluster: an Indexed Job of Flux brokers
// with the services, configuration and certificate they need.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type MiniCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MiniClusterSpec   `json:"spec"`
	Status MiniClusterStatus `json:"status,omitempty"`
}

// MiniClusterList is a list of MiniClusters.
//
// +kubebuilder:object:root=true
type MiniClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MiniCluster `json:"items"`
}

// MiniClusterSpec is the desired state of a MiniCluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.maxSize) || self.maxSize == 0 || self.maxSize >= self.size",message="spec.maxSize must be at least spec.size: lower spec.size, or give a new MiniCluster a larger spec.maxSize (it cannot change once the MiniCluster exists: delete and re-create it to grow beyond it)",fieldPath=".maxSize"
// +kubebuilder:validation:XValidation:rule="!has(self.minSize) || self.minSize == 0 || self.minSize <= self.size",message="spec.minSize must not exceed spec.size: it is the number of brokers Flux waits for before starting",fieldPath=".minSize"
// +kubebuilder:validation:XValidation:rule="size(self.containers) == 1 || self.containers.exists_one(c, has(c.runFlux) && c.runFlux)",message="spec.containers must have exactly one container with runFlux: true (the Flux broker runner)",fieldPath=".containers"
// +kubebuilder:validation:XValidation:rule="!(has(self.shareProcessNamespace) && self.shareProcessNamespace && has(self.pod) && has(self.pod.hostPID) && self.pod.hostPID)",message="Kubernetes cannot share a pod's process namespace and the node's (spec.pod.hostPID) at once: drop one of them",fieldPath=".shareProcessNamespace"
//
// +kubebuilder:validation:XValidation:rule="has(self.services) == has(oldSelf.services)",message="spec.services is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.network) == has(oldSelf.network)",message="spec.network is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.jobLabels) == has(oldSelf.jobLabels)",message="spec.jobLabels is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.interactive) == has(oldSelf.interactive)",message="spec.interactive is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.logging) == has(oldSelf.logging)",message="spec.logging is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.archive) == has(oldSelf.archive)",message="spec.archive is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.shareProcessNamespace) == has(oldSelf.shareProcessNamespace)",message="spec.shareProcessNamespace is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.maxSize) == has(oldSelf.maxSize)",message="spec.maxSize is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.minSize) == has(oldSelf.minSize)",message="spec.minSize is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.backoffLimit) == has(oldSelf.backoffLimit)",message="spec.backoffLimit is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.pod) == has(oldSelf.pod)",message="spec.pod is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
type MiniClusterSpec struct {
	// Immutability: a transition rule on a field (self == oldSelf) runs only
	// when the old object has the field, so on its own it would let an update
	// add spec.pod (say) to a claim created without it, and the Job's
	// immutable pod template would then refuse the change. The has() rules
	// on this type, on FluxSpec and on Bursting close that gap; spec.flux and
	// spec.flux.bursting default to {} so that their own rules always run.

	// Containers of every pod of the Indexed Job. Exactly one of them is the
	// Flux runner (runFlux: true; implied when there is only one).
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.containers is immutable once the MiniCluster exists (the Job's pod template cannot change): delete and re-create the MiniCluster to change it"
	Containers []MiniClusterContainer `json:"containers"`

	// Services are containers of one extra Pod, <name>-services, that shares
	// the cluster's network (e.g. a database or web server next to Flux).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.services is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Services []ServiceContainer `json:"services,omitempty"`

	// Network settings of the cluster's Service.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.network is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Network Network `json:"network,omitempty"`

	// JobLabels are labels for the Job object only (not its pods), e.g.
	// kueue.x-k8s.io/queue-name.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.jobLabels is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	JobLabels map[string]string `json:"jobLabels,omitempty"`

	// Interactive runs every broker without an initial program
	// (-Sbroker.rc2_none): the cluster stays up until it is shut down.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.interactive is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Interactive bool `json:"interactive,omitempty"`

	// Flux configures the brokers, the Flux view and bursting.
	// +optional
	Flux FluxSpec `json:"flux,omitempty"`

	// Logging switches for the entrypoints and brokers.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.logging is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Logging LoggingSpec `json:"logging,omitempty"`

	// Archive restores the broker content store from a path, when it exists.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.archive is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Archive MiniClusterArchive `json:"archive,omitempty"`

	// ShareProcessNamespace shares one process namespace between the
	// containers of a pod.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.shareProcessNamespace is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	ShareProcessNamespace bool `json:"shareProcessNamespace,omitempty"`

	// Cleanup asks for the MiniCluster to be deleted when the lead broker's
	// pod has finished. A composition function cannot delete its own claim,
	// so this is reported in status (phase) and left to the user or a
	// policy controller.
	// +optional
	Cleanup bool `json:"cleanup,omitempty"`

	// Size is the number of pods (brokers). It may change while the cluster
	// runs, up to status.maximumSize.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	Size *int32 `json:"size,omitempty"`

	// MaxSize is the largest size the cluster may grow to; the broker
	// configuration declares this many hosts from the start. Defaults to size.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.maxSize is immutable once the MiniCluster exists: the broker configuration was sized for it"
	MaxSize int32 `json:"maxSize,omitempty"`

	// MinSize is the number of brokers Flux waits for before it starts
	// (-Sbroker.quorum).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.minSize is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	MinSize int32 `json:"minSize,omitempty"`

	// BackoffLimit of the Job. Defaults to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.backoffLimit is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// Tasks is the total number of tasks of the submitted command. 0 means
	// one task per node (-N <size> only).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.tasks is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Tasks *int32 `json:"tasks,omitempty"`

	// DeadlineSeconds is the Job's activeDeadlineSeconds (about a year by
	// default).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.deadlineSeconds is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	DeadlineSeconds *int64 `json:"deadlineSeconds,omitempty"`

	// Pod-level settings of every broker pod.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.pod is immutable once the MiniCluster exists (the Job's pod template cannot change): delete and re-create the MiniCluster to change it"
	Pod PodSpec `json:"pod,omitempty"`
}

// Network configures the cluster's Service.
type Network struct {
	// HeadlessName names the headless Service and the pods' subdomain.
	// Defaults to the MiniCluster's name ("" too).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	HeadlessName string `json:"headlessName,omitempty"`

	// DisableAffinity drops the soft rules that spread pods one per node and
	// keep them in one zone.
	// +optional
	DisableAffinity bool `json:"disableAffinity,omitempty"`
}

// MiniClusterArchive is a Flux content archive to restore at start.
type MiniClusterArchive struct {
	// Path of the archive inside the runner container; restored with
	// -Scontent.restore when the file exists.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Path string `json:"path,omitempty"`
}

// LoggingSpec selects what the entrypoints and brokers print.
type LoggingSpec struct {
	// Quiet leaves only the job's own output in the runner's log.
	// +optional
	Quiet bool `json:"quiet,omitempty"`

	// Strict stops an entrypoint at the first failing command
	// (set -eEu -o pipefail).
	// +optional
	Strict bool `json:"strict,omitempty"`

	// Debug adds -vvv to flux submit and flux batch.
	// +optional
	Debug bool `json:"debug,omitempty"`

	// Zeromq turns on ZeroMQ debugging in the brokers (-Stbon.zmqdebug=1).
	// +optional
	Zeromq bool `json:"zeromq,omitempty"`

	// Timed wraps flux start and the initial program with /usr/bin/time.
	// +optional
	Timed bool `json:"timed,omitempty"`
}

// PodSpec holds pod-level settings of the broker pods.
type PodSpec struct {
	// Annotations of every pod.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels of every pod.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`

	// Resources is kept for claims written for the Flux Operator, which made
	// it the pod's overhead, and is refused when set: Kubernetes admits pod
	// overhead only from the pods' RuntimeClass (runtimeClassName), which
	// sets it itself and refuses pods that set their own. Set resources on
	// the containers instead.
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(self) == 0",message="Kubernetes admits pod overhead only from the pods' RuntimeClass (spec.pod.runtimeClassName), which sets it itself, and refuses pods that set their own: remove spec.pod.resources and set resources on the containers instead",reason=FieldValueForbidden
	Resources ContainerResource `json:"resources,omitempty"`

	// ServiceAccountName of the pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="format.dns1123Subdomain().validate(self).value()[0]"
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// AutomountServiceAccountToken mounts the service account token (off by
	// default: Flux does not need the Kubernetes API).
	// +optional
	AutomountServiceAccountToken bool `json:"automountServiceAccountToken,omitempty"`

	// RestartPolicy of the pods. Defaults to OnFailure ("" too).
	// +optional
	// +kubebuilder:validation:Enum=OnFailure;Never;""
	RestartPolicy string `json:"restartPolicy,omitempty"`

	// RuntimeClassName of the pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="format.dns1123Subdomain().validate(self).value()[0]"
	RuntimeClassName string `json:"runtimeClassName,omitempty"`

	// SchedulerName of the Job's pods (e.g. a custom HPC scheduler).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="format.dns1123Subdomain().validate(self).value()[0]"
	SchedulerName string `json:"schedulerName,omitempty"`

	// NodeSelector of the pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// NodeAffinity requires every key to have one of the listed values.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	NodeAffinity map[string][]string `json:"nodeAffinity,omitempty"`

	// Tolerations of the Job's pods.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// DNSPolicy of the pods ("" is Kubernetes' default, ClusterFirst).
	// +optional
	// +kubebuilder:validation:Enum=ClusterFirst;ClusterFirstWithHostNet;Default;""
	DNSPolicy string `json:"dnsPolicy,omitempty"`

	// HostIPC shares the node's IPC namespace.
	// +optional
	HostIPC bool `json:"hostIPC,omitempty"`

	// HostPID shares the node's PID namespace.
	// +optional
	HostPID bool `json:"hostPID,omitempty"`

	// SecurityContext of the pods.
	// +optional
	SecurityContext PodSecurityContext `json:"securityContext,omitempty"`
}

// Toleration lets the pods run on tainted nodes.
type Toleration struct {
	// +optional
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute;""
	Effect string `json:"effect,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=Exists;Equal;""
	Operator string `json:"operator,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value,omitempty"`
}

// PodSecurityContext is the pod security context, as the Flux Operator
// takes it (Kubernetes' own, without the Windows options).
type PodSecurityContext struct {
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	FSGroup *int64 `json:"fsGroup,omitempty"`
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	RunAsUser *int64 `json:"runAsUser,omitempty"`
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`
	// +optional
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`

	// SupplementalGroupsPolicy: Merge adds the groups of the image's
	// /etc/group; Strict only those listed here.
	// +optional
	// +kubebuilder:validation:Enum=Merge;Strict
	SupplementalGroupsPolicy string `json:"supplementalGroupsPolicy,omitempty"`

	// FSGroupChangePolicy: OnRootMismatch skips the ownership change of
	// volumes whose root already matches fsGroup.
	// +optional
	// +kubebuilder:validation:Enum=OnRootMismatch;Always
	FSGroupChangePolicy string `json:"fsGroupChangePolicy,omitempty"`

	// SeccompProfile of every container that does not set its own.
	// +optional
	SeccompProfile *SeccompProfile `json:"seccompProfile,omitempty"`

	// SELinuxOptions of every container that does not set its own.
	// +optional
	SELinuxOptions *SELinuxOptions `json:"seLinuxOptions,omitempty"`

	// AppArmorProfile of every container that does not set its own.
	// +optional
	AppArmorProfile *AppArmorProfile `json:"appArmorProfile,omitempty"`

	// Sysctls set in the pods' namespaces.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Sysctls []Sysctl `json:"sysctls,omitempty"`
}

// Sysctl is a kernel parameter set in the pods' namespaces.
type Sysctl struct {
	// Name of the parameter, such as net.core.somaxconn.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Value of the parameter.
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// SeccompProfile is a seccomp profile.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Localhost' ? has(self.localhostProfile) && size(self.localhostProfile) > 0 : !has(self.localhostProfile)",message="localhostProfile is required with type Localhost and forbidden with any other type: name the profile file (relative to the kubelet's seccomp directory) with Localhost, or drop localhostProfile",fieldPath=".localhostProfile"
type SeccompProfile struct {
	// Type: RuntimeDefault (the container runtime's profile), Localhost (a
	// profile file on the node) or Unconfined (none).
	// +kubebuilder:validation:Enum=RuntimeDefault;Localhost;Unconfined
	Type string `json:"type"`
	// LocalhostProfile is the profile's path relative to the kubelet's
	// seccomp directory; only with type Localhost.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	LocalhostProfile *string `json:"localhostProfile,omitempty"`
}

// AppArmorProfile is an AppArmor profile.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Localhost' ? has(self.localhostProfile) && size(self.localhostProfile) > 0 : !has(self.localhostProfile)",message="localhostProfile is required with type Localhost and forbidden with any other type: name a profile loaded on the node with Localhost, or drop localhostProfile",fieldPath=".localhostProfile"
type AppArmorProfile struct {
	// Type: RuntimeDefault, Localhost (a profile loaded on the node) or
	// Unconfined.
	// +kubebuilder:validation:Enum=RuntimeDefault;Localhost;Unconfined
	Type string `json:"type"`
	// LocalhostProfile names a profile loaded on the node; only with type
	// Localhost.
	// +optional
	// +kubebuilder:validation:MaxLength=4095
	LocalhostProfile *string `json:"localhostProfile,omitempty"`
}

// SELinuxOptions are the SELinux labels of a container.
type SELinuxOptions struct {
	// +optional
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Role string `json:"role,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Type string `json:"type,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Level string `json:"level,omitempty"`
}

// FluxSpec configures Flux itself.
//
// +kubebuilder:validation:XValidation:rule="has(self.container) == has(oldSelf.container)",message="spec.flux.container is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.submitCommand) == has(oldSelf.submitCommand)",message="spec.flux.submitCommand is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.wrap) == has(oldSelf.wrap)",message="spec.flux.wrap is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.connectTimeout) == has(oldSelf.connectTimeout)",message="spec.flux.connectTimeout is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.optionFlags) == has(oldSelf.optionFlags)",message="spec.flux.optionFlags is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.minimalService) == has(oldSelf.minimalService)",message="spec.flux.minimalService is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.disableSocket) == has(oldSelf.disableSocket)",message="spec.flux.disableSocket is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.noWaitSocket) == has(oldSelf.noWaitSocket)",message="spec.flux.noWaitSocket is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.completeWorkers) == has(oldSelf.completeWorkers)",message="spec.flux.completeWorkers is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.topology) == has(oldSelf.topology)",message="spec.flux.topology is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.curveCert) == has(oldSelf.curveCert)",message="spec.flux.curveCert is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="!has(self.curveCert) || !has(oldSelf.curveCert) || self.curveCert == oldSelf.curveCert",message="spec.flux.curveCert is immutable once the MiniCluster exists: every broker must keep the same certificate",fieldPath=".curveCert"
// +kubebuilder:validation:XValidation:rule="has(self.curveCertSecret) == has(oldSelf.curveCertSecret)",message="spec.flux.curveCertSecret is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.scheduler) == has(oldSelf.scheduler)",message="spec.flux.scheduler is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.brokerConfig) == has(oldSelf.brokerConfig)",message="spec.flux.brokerConfig is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.environment) == has(oldSelf.environment)",message="spec.flux.environment is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.resources) == has(oldSelf.resources)",message="spec.flux.resources is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="!(has(self.curveCert) && size(self.curveCert) > 0 && has(self.curveCertSecret) && size(self.curveCertSecret) > 0)",message="set either curveCert or curveCertSecret, not both",fieldPath=".curveCertSecret"
// +kubebuilder:validation:XValidation:rule="!(has(self.minimalService) && self.minimalService && has(self.topology) && size(self.topology) > 0)",message="minimalService gives only the lead broker a DNS name, so the overlay must be flat: remove topology or minimalService",fieldPath=".topology"
// +kubebuilder:validation:XValidation:rule="!(has(self.topology) && size(self.topology) > 0 && has(self.bursting) && (has(self.bursting.leadBroker) || (has(self.bursting.clusters) && size(self.bursting.clusters) > 0)))",message="bursting works only with the flat default overlay: remove topology",fieldPath=".topology"
type FluxSpec struct {
	// Container is the init container that provides Flux (a spack view).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.container is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Container FluxContainer `json:"container,omitempty"`

	// Arch had an effect only in old operator releases; accepted and ignored.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Arch string `json:"arch,omitempty"`

	// SubmitCommand replaces "flux submit" in submit mode.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.submitCommand is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	SubmitCommand string `json:"submitCommand,omitempty"`

	// Wrap is passed to the lead broker as flux start --wrap=<wrap>.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.wrap is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Wrap string `json:"wrap,omitempty"`

	// ConnectTimeout of the brokers' overlay connections
	// (-Stbon.connect_timeout). "" leaves Flux's own default.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[0-9]+([.][0-9]+)?(ms|s|m|h|d)?$')",message=`must be a Flux duration such as 5s, 500ms or 1m ("" keeps Flux's default)`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.connectTimeout is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	ConnectTimeout *string `json:"connectTimeout,omitempty"`

	// OptionFlags are appended to flux submit / flux batch (e.g. -ompi=openmpi@5).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.optionFlags is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	OptionFlags string `json:"optionFlags,omitempty"`

	// MinimalService exposes only the lead broker (a ClusterIP Service on
	// 8050) instead of a headless Service for every pod.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.minimalService is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	MinimalService bool `json:"minimalService,omitempty"`

	// DisableSocket omits the broker's local URI (-Slocal-uri).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.disableSocket is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	DisableSocket bool `json:"disableSocket,omitempty"`

	// NoWaitSocket lets sidecars start without waiting for the broker socket.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.noWaitSocket is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	NoWaitSocket bool `json:"noWaitSocket,omitempty"`

	// CompleteWorkers lets a worker finish after its broker's first exit,
	// whatever the exit code, instead of restarting it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.completeWorkers is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	CompleteWorkers bool `json:"completeWorkers,omitempty"`

	// Topology of the broker overlay (-Stbon.topo), e.g. kary:2 or binomial.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^(kary:[0-9]+|binomial|mincrit(:[0-9]+)?|custom)$')",message="must be kary:<k>, binomial, mincrit[:<k>] or custom"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.topology is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Topology string `json:"topology,omitempty"`

	// LogLevel of the brokers' stderr log, 0 to 7 (-Slog-stderr-level).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=7
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.logLevel is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	LogLevel *int32 `json:"logLevel,omitempty"`

	// CurveCert is a CURVE certificate (ZPL text, as written by flux keygen)
	// to use instead of a generated one. It is stored only in the
	// <name>-curve-cert Secret. Its immutability rule is on FluxSpec (with
	// fieldPath .curveCert): on the string itself, the API server would quote
	// the new certificate, secret key included, in its error.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	CurveCert string `json:"curveCert,omitempty"`

	// CurveCertSecret names a Secret in the claim's namespace whose key
	// curve.cert holds the CURVE certificate (used by bursting, so the key
	// stays out of the claim).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.curveCertSecret is immutable once the MiniCluster exists: every broker must keep the same certificate"
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self).value()[0]"
	CurveCertSecret string `json:"curveCertSecret,omitempty"`

	// Scheduler settings of fluxion.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.scheduler is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Scheduler FluxScheduler `json:"scheduler,omitempty"`

	// MungeSecret had an effect only in v1alpha1; accepted and ignored.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	MungeSecret string `json:"mungeSecret,omitempty"`

	// Bursting joins this cluster with clusters elsewhere.
	// +optional
	Bursting Bursting `json:"bursting,omitempty"`

	// BrokerConfig is a broker.toml used verbatim instead of the generated one.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.brokerConfig is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	BrokerConfig string `json:"brokerConfig,omitempty"`

	// Environment is exported in <mountPath>/flux-view.sh for every Flux user.
	// +optional
	// +kubebuilder:validation:MaxProperties=128
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.environment is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Environment map[string]string `json:"environment,omitempty"`

	// Resources is what each broker offers Flux (its resource set, R). pod,
	// the default ("" too), is what the runner container was given: its CPU
	// limit, else its CPU request, rounded up to whole cores (the node's
	// cores when it has neither), and the GPUs of its nvidia.com/gpu,
	// amd.com/gpu and gpu.intel.com/<device> limits, numbered from 0. node is
	// the whole node as hwloc sees it (flux R encode --local), as the Flux
	// Operator does.
	// +optional
	// +kubebuilder:validation:Enum=pod;node;""
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.resources is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"
	Resources string `json:"resources,omitempty"`
}

// FluxScheduler configures fluxion.
type FluxScheduler struct {
	// Simple uses Flux's simple scheduler instead of fluxion.
	// +optional
	Simple bool `json:"simple,omitempty"`

	// QueuePolicy of fluxion's queue manager. Defaults to fcfs ("" too:
	// the operator's Python SDK sends "").
	// +optional
	// +kubebuilder:validation:Enum=fcfs;easy;hybrid;conservative;""
	QueuePolicy string `json:"queuePolicy,omitempty"`
}

// Bursting joins this MiniCluster with clusters elsewhere: a root declares
// the clusters that may join (clusters or hostlist); a burst names the
// root's lead broker (leadBroker).
//
// +kubebuilder:validation:XValidation:rule="!(has(self.hostlist) && size(self.hostlist) > 0 && has(self.clusters) && size(self.clusters) > 0)",message="spec.flux.bursting: set either hostlist or clusters, not both",fieldPath=".hostlist"
// +kubebuilder:validation:XValidation:rule="!(has(self.leadBroker) && has(self.hostlist) && size(self.hostlist) > 0)",message="a burst cluster (leadBroker set) takes its hosts from leadBroker and clusters: remove hostlist",fieldPath=".hostlist"
// +kubebuilder:validation:XValidation:rule="has(self.hostlist) == has(oldSelf.hostlist)",message="spec.flux.bursting.hostlist is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.clusters) == has(oldSelf.clusters)",message="spec.flux.bursting.clusters is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
// +kubebuilder:validation:XValidation:rule="has(self.leadBrokerService) == has(oldSelf.leadBrokerService)",message="spec.flux.bursting.leadBrokerService is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"
type Bursting struct {
	// LeadBroker is the root cluster's rank-0 broker, for a burst cluster.
	// The burst controller keeps its address and port up to date.
	// +optional
	LeadBroker *FluxBroker `json:"leadBroker,omitempty"`

	// Hostlist is used verbatim as the broker hosts and resources, for hosts
	// that do not follow the <name>-<index> convention.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.bursting.hostlist is immutable once the MiniCluster exists: ranks are positions in it"
	Hostlist string `json:"hostlist,omitempty"`

	// Clusters that may join, in rank order after this cluster's hosts.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.bursting.clusters is immutable once the MiniCluster exists: ranks are positions in the host list"
	Clusters []BurstedCluster `json:"clusters,omitempty"`

	// LeadBrokerService configures the NodePort Service composed for the
	// root of a burst (when clusters are declared).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.flux.bursting.leadBrokerService is immutable once the MiniCluster exists"
	LeadBrokerService LeadBrokerService `json:"leadBrokerService,omitempty"`
}

// LeadBrokerService configures the root's NodePort Service.
type LeadBrokerService struct {
	// NodePort to request; allocated by Kubernetes when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	NodePort int32 `json:"nodePort,omitempty"`
}

// BurstedCluster is a cluster that may join the root.
type BurstedCluster struct {
	// Name of the burst MiniCluster; its pods are <name>-<index>. Defaults to
	// burst-<position> ("" too: the operator's Python SDK sends "").
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	Name string `json:"name,omitempty"`

	// Size of the burst cluster. Defaults to this cluster's size.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Size int32 `json:"size,omitempty"`
}

// FluxBroker is the address of the root cluster's rank-0 broker.
//
// +kubebuilder:validation:XValidation:rule="size(self.address) > 0",message="the address (IP or DNS name) at which the root cluster's lead broker is reachable",fieldPath=".address",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="size(self.name) > 0",message="the root MiniCluster's name (its pods are <name>-<index>)",fieldPath=".name",reason=FieldValueRequired
type FluxBroker struct {
	// Address (IP or DNS name) at which the lead broker is reachable.
	// +kubebuilder:validation:MaxLength=253
	Address string `json:"address"`

	// Name of the root MiniCluster (its pods are <name>-<index>).
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Size of the root cluster's host range (its maximum size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	Size int32 `json:"size"`

	// Port of the lead broker (the root's NodePort).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// FluxContainer is the init container that provides Flux. Rules on a
// string that may be long are stated here, with fieldPath, so that the API
// server's message does not repeat the value.
//
// +kubebuilder:validation:XValidation:rule="!has(self.image) || self.image == self.image.trim()",message="must not have leading or trailing whitespace",fieldPath=".image"
// +kubebuilder:validation:XValidation:rule="!has(self.workingDir) || !self.workingDir.matches('[^/]{256}')",message="has an element (between two '/') of more than 255 bytes, which Linux cannot create, so the container runtime could not start the container: shorten it",fieldPath=".workingDir"
// +kubebuilder:validation:XValidation:rule="!has(self.mountPath) || !self.mountPath.matches('[^/]{256}')",message="has an element (between two '/') of more than 255 bytes, which Linux cannot create, so the container runtime could not start the container: shorten it",fieldPath=".mountPath"
type FluxContainer struct {
	// Disable the Flux view: the application image brings its own Flux. The
	// init container still writes the configuration.
	// +optional
	Disable bool `json:"disable,omitempty"`

	// Name of the init container and of the view volume. Defaults to flux-view.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Image of the Flux view; its OS must match the application image.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// WorkingDir of the init container.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == '' || self.startsWith('/')",message="must be an absolute path: the container runtime refuses to start a container in a relative one"
	WorkingDir string `json:"workingDir,omitempty"`

	// PythonPath replaces the detected site-packages of the view.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	PythonPath string `json:"pythonPath,omitempty"`

	// Resources of the init container.
	// +optional
	Resources ContainerResources `json:"resources,omitempty"`

	// ImagePullSecret for the view image; added to the pods' pull secrets.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self).value()[0]"
	ImagePullSecret string `json:"imagePullSecret,omitempty"`

	// PullAlways pulls the view image on every start.
	// +optional
	PullAlways bool `json:"pullAlways,omitempty"`

	// SecurityContext of the init container.
	// +optional
	SecurityContext SecurityContext `json:"securityContext,omitempty"`

	// MountPath of the view volume. Defaults to /mnt/flux.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._/-]*$`
	// +kubebuilder:validation:XValidation:rule="self != '/' && !self.matches('(^|/)[.][.](/|$)')",message="must be an absolute path other than /, without '..'"
	MountPath string `json:"mountPath,omitempty"`
}

// ServiceContainer is a container of the services Pod: a
// MiniClusterContainer with the rules that only services have.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="a service container needs a name",fieldPath=".name",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.commands) || !has(self.commands.pre) || size(self.commands.pre) == 0",message="service containers run their image's own entrypoint: broker hooks do not apply",fieldPath=".commands.pre",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.commands) || !has(self.commands.brokerPre) || size(self.commands.brokerPre) == 0",message="service containers run their image's own entrypoint: broker hooks do not apply",fieldPath=".commands.brokerPre",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.commands) || !has(self.commands.workerPre) || size(self.commands.workerPre) == 0",message="service containers run their image's own entrypoint: broker hooks do not apply",fieldPath=".commands.workerPre",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.runFlux) || !self.runFlux",message="service containers cannot run Flux: move this container to spec.containers",fieldPath=".runFlux",reason=FieldValueForbidden
type ServiceContainer struct {
	// A type of its own, with the same JSON: rules on it apply to
	// spec.services only and name spec.services[i], which a rule on the
	// list could not (fieldPath takes no list index).

	MiniClusterContainer `json:",inline"`
}

// MiniClusterContainer is a container of the broker pods (or of the
// services Pod).
//
// +kubebuilder:validation:XValidation:rule="!(has(self.launcher) && self.launcher && has(self.batch) && self.batch)",message="a container may set launcher or batch, not both",fieldPath=".batch"
// +kubebuilder:validation:XValidation:rule="!(has(self.command) && size(self.command) > 0 && has(self.commands) && has(self.commands.script) && size(self.commands.script) > 0)",message="a container may set command or commands.script, not both",fieldPath=".commands.script"
// +kubebuilder:validation:XValidation:rule="!(has(self.batchRaw) && self.batchRaw) || (has(self.batch) && self.batch)",message="batchRaw only applies to batch mode: set batch: true too",fieldPath=".batchRaw"
// +kubebuilder:validation:XValidation:rule="!has(self.image) || self.image == self.image.trim()",message="must not have leading or trailing whitespace",fieldPath=".image"
// +kubebuilder:validation:XValidation:rule="!has(self.workingDir) || !self.workingDir.matches('[^/]{256}')",message="has an element (between two '/') of more than 255 bytes, which Linux cannot create, so the container runtime could not start the container: shorten it",fieldPath=".workingDir"
type MiniClusterContainer struct {
	// Name of the container; required except for the Flux runner, whose
	// container is named after the MiniCluster. "" is unset, as the
	// operator takes it: its Python SDK sends every container's name.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	Name string `json:"name,omitempty"`

	// Image of the container.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// ImagePullSecret added to the pods' image pull secrets.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self).value()[0]"
	ImagePullSecret string `json:"imagePullSecret,omitempty"`

	// ImagePullPolicy overrides IfNotPresent (pullAlways wins; "" is unset).
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never;""
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`

	// PullAlways pulls the image on every start.
	// +optional
	PullAlways bool `json:"pullAlways,omitempty"`

	// WorkingDir of the container.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == '' || self.startsWith('/')",message="must be an absolute path: the container runtime refuses to start a container in a relative one"
	WorkingDir string `json:"workingDir,omitempty"`

	// Command: for the Flux runner, the job Flux runs (several lines in batch
	// mode); for other containers, what their wrapper runs.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Command string `json:"command,omitempty"`

	// RunFlux marks the container that runs the Flux broker.
	// +optional
	RunFlux bool `json:"runFlux,omitempty"`

	// NoWrapEntrypoint keeps a non-runner container's own entrypoint.
	// +optional
	NoWrapEntrypoint bool `json:"noWrapEntrypoint,omitempty"`

	// Launcher gives the command directly to flux start (it submits its own
	// jobs).
	// +optional
	Launcher bool `json:"launcher,omitempty"`

	// Batch submits every line of the command as a job of one flux batch.
	// +optional
	Batch bool `json:"batch,omitempty"`

	// BatchRaw writes the batch lines verbatim (no flux submit wrapping).
	// +optional
	BatchRaw bool `json:"batchRaw,omitempty"`

	// Logs is the directory for batch jobs' output (FLUX_OUTPUT_DIR).
	// Defaults to /tmp/fluxout.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Logs string `json:"logs,omitempty"`

	// Ports the container listens on; a non-runner container also gets a
	// Service named after it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	Ports []int32 `json:"ports,omitempty"`

	// Environment variables.
	// +optional
	// +kubebuilder:validation:MaxProperties=256
	Environment map[string]string `json:"environment,omitempty"`

	// Secrets become environment variables from secret keys (env name →
	// secret name and key).
	// +optional
	// +kubebuilder:validation:MaxProperties=128
	Secrets map[string]Secret `json:"secrets,omitempty"`

	// Volumes to mount, by volume name.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(k) <= 63)",message="volume names must be lowercase DNS labels (a-z, 0-9, '-'; at most 63 characters)"
	Volumes map[string]ContainerVolume `json:"volumes,omitempty"`

	// LifeCycle hooks, run through /bin/sh -c.
	// +optional
	LifeCycle LifeCycle `json:"lifeCycle,omitempty"`

	// Resources of the container.
	// +optional
	Resources ContainerResources `json:"resources,omitempty"`

	// Commands are hooks around the broker.
	// +optional
	Commands Commands `json:"commands,omitempty"`

	// SecurityContext of the container.
	// +optional
	SecurityContext SecurityContext `json:"securityContext,omitempty"`
}

// SecurityContext of a container: Kubernetes' container security context,
// as the Flux Operator takes it, with the legacy addCapabilities.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.allowPrivilegeEscalation) && !self.allowPrivilegeEscalation && has(self.privileged) && self.privileged)",message="a privileged container always escalates privileges: drop privileged, or allowPrivilegeEscalation: false",fieldPath=".allowPrivilegeEscalation"
// +kubebuilder:validation:XValidation:rule="!has(self.procMount) || self.procMount != 'Unmasked'",message="procMount Unmasked needs the pod in a user namespace (hostUsers: false), which a MiniCluster's pods do not use: drop procMount, or set it to Default",fieldPath=".procMount"
type SecurityContext struct {
	// Privileged runs the container privileged.
	// +optional
	Privileged bool `json:"privileged,omitempty"`

	// AddCapabilities adds Linux capabilities (the Flux Operator's older
	// spelling of capabilities.add; both may be given).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	AddCapabilities []Capability `json:"addCapabilities,omitempty"`

	// Capabilities to add to and drop from the container runtime's default
	// set.
	// +optional
	Capabilities *Capabilities `json:"capabilities,omitempty"`

	// AllowPrivilegeEscalation: false sets no_new_privs, so no process of
	// the container gains privileges (setuid binaries, file capabilities).
	// +optional
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation,omitempty"`

	// RunAsNonRoot: the kubelet refuses to start the container as uid 0.
	// +optional
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`

	// ReadOnlyRootFilesystem mounts the image read-only.
	// +optional
	ReadOnlyRootFilesystem *bool `json:"readOnlyRootFilesystem,omitempty"`

	// SeccompProfile of the container, over the pod's.
	// +optional
	SeccompProfile *SeccompProfile `json:"seccompProfile,omitempty"`

	// SELinuxOptions of the container, over the pod's.
	// +optional
	SELinuxOptions *SELinuxOptions `json:"seLinuxOptions,omitempty"`

	// AppArmorProfile of the container, over the pod's.
	// +optional
	AppArmorProfile *AppArmorProfile `json:"appArmorProfile,omitempty"`

	// ProcMount: Default masks parts of /proc; Unmasked needs a user
	// namespace, which a MiniCluster's pods do not have.
	// +optional
	// +kubebuilder:validation:Enum=Default;Unmasked
	ProcMount string `json:"procMount,omitempty"`

	// RunAsUser runs the container as this uid (Flux runs as whatever user
	// the container runs as).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// RunAsGroup runs the container as this gid.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0 && self <= 2147483647",message="must be between 0 and 2147483647"
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`
}

// Capabilities are Linux capabilities, named without CAP_ (SYS_ADMIN,
// NET_RAW) or ALL.
type Capabilities struct {
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Add []Capability `json:"add,omitempty"`
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Drop []Capability `json:"drop,omitempty"`
}

// Capability is a Linux capability as Kubernetes names it, without the CAP_
// prefix the container runtime adds (SYS_ADMIN, NET_RAW), or ALL; any case.
// The names are capabilities(7)'s, Linux 6.x: the runtime ignores any other
// without a word, so the user would not get what they asked for.
//
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="!self.upperAscii().startsWith('CAP_')",messageExpression="'must be written without the CAP_ prefix, which the container runtime adds: use ' + self.upperAscii().substring(4)"
// +kubebuilder:validation:XValidation:rule="self.upperAscii().startsWith('CAP_') || self.upperAscii() in ['ALL', 'AUDIT_CONTROL', 'AUDIT_READ', 'AUDIT_WRITE', 'BLOCK_SUSPEND', 'BPF', 'CHECKPOINT_RESTORE', 'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'IPC_LOCK', 'IPC_OWNER', 'KILL', 'LEASE', 'LINUX_IMMUTABLE', 'MAC_ADMIN', 'MAC_OVERRIDE', 'MKNOD', 'NET_ADMIN', 'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_RAW', 'PERFMON', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_CHROOT', 'SYS_MODULE', 'SYS_NICE', 'SYS_PACCT', 'SYS_PTRACE', 'SYS_RAWIO', 'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'SYSLOG', 'WAKE_ALARM']",message="must be a Linux capability name such as SYS_ADMIN or NET_RAW (or ALL): the container runtime ignores any other"
type Capability string

// LifeCycle hooks of a container.
type LifeCycle struct {
	// PostStartExec runs after the container starts.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	PostStartExec string `json:"postStartExec,omitempty"`

	// PreStopExec runs before the container stops.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	PreStopExec string `json:"preStopExec,omitempty"`
}

// Secret is a key of a Secret in the claim's namespace.
//
// +kubebuilder:validation:XValidation:rule="size(self.name) > 0",message="name the Secret to read the variable from",fieldPath=".name",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="size(self.key) > 0",message="name the key of the Secret to read the variable from",fieldPath=".key",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="size(self.name) == 0 || !format.dns1123Subdomain().validate(self.name).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self.name).value()[0]",fieldPath=".name"
type Secret struct {
	// Name of the Secret.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key in the Secret.
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// Commands are shell hooks of an entrypoint.
type Commands struct {
	// Prefix is put before the initial program inside flux start.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Prefix string `json:"prefix,omitempty"`

	// Init runs first, before Flux is set up.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Init string `json:"init,omitempty"`

	// Pre runs on every pod before the broker starts.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Pre string `json:"pre,omitempty"`

	// BrokerPre runs on the lead broker's pod only.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	BrokerPre string `json:"brokerPre,omitempty"`

	// WorkerPre runs on the workers' pods only.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	WorkerPre string `json:"workerPre,omitempty"`

	// Post runs after the broker exits.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Post string `json:"post,omitempty"`

	// ServicePre runs in a sidecar's wrapper before its command.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	ServicePre string `json:"servicePre,omitempty"`

	// Script is a whole script used as the command.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Script string `json:"script,omitempty"`
}

// ContainerResources are the limits and requests of a container.
type ContainerResources struct {
	// +optional
	Limits ContainerResource `json:"limits,omitempty"`

	// +optional
	Requests ContainerResource `json:"requests,omitempty"`
}

// ContainerResource maps a resource name (cpu, memory, vendor.example/gpu)
// to a quantity given as a string or an integer.
//
// +kubebuilder:validation:MaxProperties=16
type ContainerResource map[string]intstr.IntOrString

// ContainerVolume is an existing volume to mount. The first source set wins:
// csiDriver, secretName, emptyDir, hostPath, configMapName, claimName.
//
// +kubebuilder:validation:XValidation:rule="(has(self.csiDriver) && size(self.csiDriver) > 0 ? 1 : 0) + (has(self.secretName) && size(self.secretName) > 0 ? 1 : 0) + (has(self.emptyDir) && self.emptyDir ? 1 : 0) + (has(self.hostPath) && size(self.hostPath) > 0 ? 1 : 0) + (has(self.configMapName) && size(self.configMapName) > 0 ? 1 : 0) + (has(self.claimName) && size(self.claimName) > 0 ? 1 : 0) >= 1",message="a volume needs a source: set one of claimName, hostPath, configMapName, secretName, emptyDir or csiDriver (a path alone mounts nothing)",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="(has(self.csiDriver) && size(self.csiDriver) > 0 ? 1 : 0) + (has(self.secretName) && size(self.secretName) > 0 ? 1 : 0) + (has(self.emptyDir) && self.emptyDir ? 1 : 0) + (has(self.hostPath) && size(self.hostPath) > 0 ? 1 : 0) + (has(self.configMapName) && size(self.configMapName) > 0 ? 1 : 0) + (has(self.claimName) && size(self.claimName) > 0 ? 1 : 0) <= 1",message="a volume has exactly one source: set only one of claimName, hostPath, configMapName, secretName, emptyDir or csiDriver"
// +kubebuilder:validation:XValidation:rule="(has(self.path) && size(self.path) > 0) || (has(self.emptyDir) && self.emptyDir)",message="set the path to mount the volume at",fieldPath=".path",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.path) || !self.path.matches('[^/]{256}')",message="has an element (between two '/') of more than 255 bytes, which Linux cannot create, so the container runtime could not start the container: shorten it",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule="!has(self.items) || size(self.items) == 0 || (has(self.configMapName) && size(self.configMapName) > 0) || (has(self.secretName) && size(self.secretName) > 0)",message="items only apply to configMapName or secretName volumes",fieldPath=".items"
// +kubebuilder:validation:XValidation:rule="!has(self.configMapName) || size(self.configMapName) == 0 || !format.dns1123Subdomain().validate(self.configMapName).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self.configMapName).value()[0]",fieldPath=".configMapName"
// +kubebuilder:validation:XValidation:rule="!has(self.claimName) || size(self.claimName) == 0 || !format.dns1123Subdomain().validate(self.claimName).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self.claimName).value()[0]",fieldPath=".claimName"
// +kubebuilder:validation:XValidation:rule="!has(self.secretName) || size(self.secretName) == 0 || !format.dns1123Subdomain().validate(self.secretName).hasValue()",messageExpression="'must be the name of an object in the claim\\'s namespace: ' + format.dns1123Subdomain().validate(self.secretName).value()[0]",fieldPath=".secretName"
// +kubebuilder:validation:XValidation:rule="!has(self.emptyDirSizeLimit) || size(self.emptyDirSizeLimit) == 0 || (isQuantity(self.emptyDirSizeLimit) && !quantity(self.emptyDirSizeLimit).isLessThan(quantity('0')))",message="must be a non-negative quantity such as 64Mi or 1Gi",fieldPath=".emptyDirSizeLimit"
type ContainerVolume struct {
	// Path to mount the volume at (for emptyDir, defaults to /dev/shm).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == '' || (self.startsWith('/') && self != '/' && !self.contains(':') && !self.matches('(^|/)[.][.](/|$)'))",message="must be an absolute path other than /, without '..' or ':'"
	Path string `json:"path,omitempty"`

	// HostPath is a directory on the node.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == '' || (self.startsWith('/') && !self.matches('(^|/)[.][.](/|$)'))",message="must be an absolute path on the node, without '..'"
	HostPath string `json:"hostPath,omitempty"`

	// ConfigMapName is an existing ConfigMap.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName,omitempty"`

	// Items of the ConfigMap to project (key → path).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Items map[string]string `json:"items,omitempty"`

	// ClaimName is an existing PersistentVolumeClaim.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClaimName string `json:"claimName,omitempty"`

	// SecretName is an existing Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`

	// ReadOnly mounts the volume read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// EmptyDir makes a new empty directory for the pod.
	// +optional
	EmptyDir bool `json:"emptyDir,omitempty"`

	// EmptyDirMedium "memory" backs the emptyDir with RAM.
	// +optional
	// +kubebuilder:validation:Enum=memory;""
	EmptyDirMedium string `json:"emptyDirMedium,omitempty"`

	// EmptyDirSizeLimit caps the emptyDir (a quantity, e.g. 64Mi).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	EmptyDirSizeLimit string `json:"emptyDirSizeLimit,omitempty"`

	// CSIDriver is an inline CSI volume's driver (Kubernetes caps its
	// length at 63).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	CSIDriver string `json:"csiDriver,omitempty"`

	// CSIDriverAttributes are the CSI volume's attributes.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	CSIDriverAttributes map[string]string `json:"csiDriverAttributes,omitempty"`
}

// Values of spec.flux.resources: where each broker's resource set comes
// from.
const (
	// FluxResourcesPod is what the runner container was given.
	FluxResourcesPod = "pod"
	// FluxResourcesNode is the whole node, as hwloc sees it.
	FluxResourcesNode = "node"
)

// Phases of a MiniCluster, from its Job.
const (
	PhasePending = "Pending"
	// PhaseQueued: the Job waits in a Kueue queue (suspended, no pods).
	PhaseQueued    = "Queued"
	PhaseRunning   = "Running"
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
)

// MiniClusterStatus is the observed state of a MiniCluster.
type MiniClusterStatus struct {
	// Size is the number of pods the Job runs now.
	// +optional
	Size int32 `json:"size,omitempty"`

	// MaximumSize is the largest size the cluster can take, fixed when it is
	// created: max(size, maxSize).
	// +optional
	MaximumSize int32 `json:"maximumSize,omitempty"`

	// Selector selects the broker pods (for autoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`

	// Phase of the cluster: Pending, Queued (waiting for Kueue to admit
	// it), Running, Succeeded or Failed.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Job counts pods of the Indexed Job.
	// +optional
	Job JobStatus `json:"job,omitempty"`

	// LeadBroker is how burst clusters reach the lead broker.
	// +optional
	LeadBroker *LeadBrokerStatus `json:"leadBroker,omitempty"`
}

// JobStatus counts the Job's pods that tell how the cluster is doing. It
// has no count of pods created (the Job's status.active): that count
// changes as the job controller creates pods, and every change of the
// status costs a composition run and, with claims, a claim update.
type JobStatus struct {
	// Ready counts pods whose broker is up.
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
}

// LeadBrokerStatus is the root's lead broker as seen from outside.
type LeadBrokerStatus struct {
	// Service is the NodePort Service's name.
	// +optional
	Service string `json:"service,omitempty"`
	// NodePort allocated to it.
	// +optional
	NodePort int32 `json:"nodePort,omitempty"`
	// Address of the node running the lead broker, when known.
	// +optional
	Address string `json:"address,omitempty"`
}
