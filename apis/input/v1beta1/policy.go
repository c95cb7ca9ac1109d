package v1beta1

import (
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Labels a platform team sets on objects of the cluster to open them to
// MiniClusters under the default policy. Tenants who may only create
// MiniClusters cannot set labels on Namespaces, Secrets or ServiceAccounts,
// so a label is the platform's (or the namespace owner's) decision.
const (
	// LabelAllowed on a Secret or a ServiceAccount lets the MiniClusters
	// of its namespace read it (Secrets) or run as it (ServiceAccounts).
	LabelAllowed = "minicluster.flux-framework.org/allowed"
	// LabelNodePorts on a Namespace lets its MiniClusters open NodePorts
	// (the root of a burst).
	LabelNodePorts = "minicluster.flux-framework.org/node-ports"
	// AllowedValue is the value both labels take.
	AllowedValue = "true"
)

// Any, in a list of names, allows every name.
const Any = "*"

// Policy is what the platform enforces on every MiniCluster composed with
// this Composition. Unlike defaults, a claim cannot override it: a claim
// that asks for more is refused (Valid=False, naming the policy key, the
// claim's field and the fix) and nothing is composed. Every field left out
// takes its secure default (DefaultPolicy); PermissivePolicy allows what
// the Flux Operator allows.
type Policy struct {
	// PodSecurity is the Pod Security Standard the function enforces on
	// the MiniCluster's pods.
	// +optional
	PodSecurity PodSecurityPolicy `json:"podSecurity,omitempty"`

	// ServiceAccounts a claim may run its pods as (spec.pod.serviceAccountName).
	// +optional
	ServiceAccounts ServiceAccountPolicy `json:"serviceAccounts,omitempty"`

	// Secrets a claim may read into environment variables or volumes, or
	// use as its CURVE certificate or an image pull secret.
	// +optional
	Secrets SecretPolicy `json:"secrets,omitempty"`

	// NodePorts a claim may open: the root of a burst exposes its lead
	// broker on a NodePort of every node.
	// +optional
	NodePorts NodePortPolicy `json:"nodePorts,omitempty"`

	// MaxSize is the most pods a MiniCluster may run (max(spec.size,
	// spec.maxSize)); 0 takes the default, 1024. A ResourceQuota on pods
	// bounds a namespace as a whole.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSize int32 `json:"maxSize,omitempty"`

	// MaxDeadlineSeconds is the longest a MiniCluster may run
	// (spec.deadlineSeconds); a claim that sets none gets it. 0: no
	// maximum (interactive clusters run until deleted).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxDeadlineSeconds int64 `json:"maxDeadlineSeconds,omitempty"`

	// CSIDrivers a claim may mount inline (a volume's csiDriver). By
	// default none: an inline CSI volume is whatever its driver makes of
	// the attributes the claim passes. "*" allows any.
	// +optional
	CSIDrivers []string `json:"csiDrivers,omitempty"`

	// RuntimeClasses a claim may pick (spec.pod.runtimeClassName). By
	// default none: pods run with the cluster's default runtime. "*"
	// allows any.
	// +optional
	RuntimeClasses []string `json:"runtimeClasses,omitempty"`

	// Schedulers a claim may pick (spec.pod.schedulerName). By default
	// none: the cluster's default scheduler. "*" allows any.
	// +optional
	Schedulers []string `json:"schedulers,omitempty"`

	// Tolerations the platform forbids or adds to every pod.
	// +optional
	Tolerations TolerationPolicy `json:"tolerations,omitempty"`

	// NodeSelector the platform forbids or sets on every pod.
	// +optional
	NodeSelector NodeSelectorPolicy `json:"nodeSelector,omitempty"`

	// Metadata: label and annotation keys a claim may set on its pods
	// and Job (spec.pod.labels, spec.pod.annotations, spec.jobLabels).
	// +optional
	Metadata MetadataPolicy `json:"metadata,omitempty"`

	// Kueue: the queues and priority classes a claim may name in the
	// labels Kueue reads (kueue.x-k8s.io/queue-name,
	// kueue.x-k8s.io/priority-class), and the queue the platform puts
	// MiniClusters in.
	// +optional
	Kueue KueuePolicy `json:"kueue,omitempty"`
}

// PodSecurityPolicy says which Pod Security Standard applies.
type PodSecurityPolicy struct {
	// DefaultLevel is the level enforced where the MiniCluster's namespace
	// has no pod-security.kubernetes.io/enforce label (default baseline).
	// A namespace's own label, set by whoever administers namespaces,
	// wins: label a namespace privileged to allow privileged MiniClusters
	// there.
	// +optional
	// +kubebuilder:validation:Enum=privileged;baseline;restricted
	DefaultLevel string `json:"defaultLevel,omitempty"`
}

// ServiceAccountPolicy says which ServiceAccounts pods may run as.
type ServiceAccountPolicy struct {
	// Names a claim may name besides ServiceAccounts labelled
	// minicluster.flux-framework.org/allowed=true (default: default, the
	// one every namespace has; [] for none). "*" allows any.
	// +optional
	Names []string `json:"names"`

	// AutomountToken lets a claim mount its ServiceAccount's token
	// (spec.pod.automountServiceAccountToken). Default false: a token is
	// the ServiceAccount's rights in the API server, for anything the job
	// runs.
	// +optional
	AutomountToken bool `json:"automountToken,omitempty"`
}

// SecretPolicy says which Secrets a claim may read.
type SecretPolicy struct {
	// Names a claim may read besides Secrets labelled
	// minicluster.flux-framework.org/allowed=true and its own CURVE
	// certificate Secret (default: none). "*" allows any Secret of the
	// namespace, which includes other MiniClusters' certificates and any
	// ServiceAccount token Secret.
	// +optional
	Names []string `json:"names,omitempty"`
}

// NodePortPolicy says where NodePorts may be opened.
type NodePortPolicy struct {
	// Allowed opens NodePorts to every namespace. By default only
	// namespaces labelled minicluster.flux-framework.org/node-ports=true
	// may: a NodePort listens on every node of the cluster.
	// +optional
	Allowed bool `json:"allowed,omitempty"`
}

// TolerationPolicy says which tolerations pods may carry.
type TolerationPolicy struct {
	// ForbiddenKeys a toleration may not name. Default: the control
	// plane's taints (node-role.kubernetes.io/control-plane and
	// node-role.kubernetes.io/master). A toleration without a key
	// (operator Exists) tolerates every taint and is refused whenever
	// any key is forbidden. Set to [] to forbid nothing.
	// +optional
	ForbiddenKeys []string `json:"forbiddenKeys"`

	// Enforced tolerations are added to every pod.
	// +optional
	Enforced []v1alpha2.Toleration `json:"enforced,omitempty"`
}

// NodeSelectorPolicy says which nodes pods may ask for.
type NodeSelectorPolicy struct {
	// ForbiddenKeys a claim may not use in spec.pod.nodeSelector or
	// spec.pod.nodeAffinity, e.g. kubernetes.io/hostname to keep tenants
	// from picking nodes.
	// +optional
	ForbiddenKeys []string `json:"forbiddenKeys,omitempty"`

	// Enforced labels are set on every pod's node selector; a claim that
	// asks for another value of one of these keys is refused.
	// +optional
	Enforced map[string]string `json:"enforced,omitempty"`
}

// MetadataPolicy says which labels and annotations a claim may set.
type MetadataPolicy struct {
	// ForbiddenPrefixes of label and annotation keys. An entry ending in
	// "/" is a domain and forbids its subdomains too (kubernetes.io/ also
	// forbids statefulset.kubernetes.io/ and
	// cluster-autoscaler.kubernetes.io/, as Kubernetes reserves them); an
	// entry without "/" is one key without a prefix. Default:
	// crossplane.io/, kubernetes.io/, k8s.io/, kueue.x-k8s.io/ (the queue
	// and priority class are policy.kueue's), istio.io/,
	// azure.workload.identity/ and aadpodidbinding: Crossplane's labels
	// say which composite owns an object, and the others steer Kubernetes,
	// Kueue, the mesh and cloud identities. Set to [] to forbid nothing.
	// +optional
	ForbiddenPrefixes []string `json:"forbiddenPrefixes"`

	// AllowedAnnotationPrefixes of the annotation keys a claim may set on
	// its pods (spec.pod.annotations), matched as ForbiddenPrefixes are;
	// "*" allows any key that no forbidden prefix refuses. Default: none,
	// so only keys without a prefix (private to the user, by Kubernetes'
	// convention) unless a forbidden entry names them.
	// Annotations steer components that act after the function judged
	// the pod — a mesh's sidecar injector (sidecar.istio.io/userVolume),
	// a CNI (k8s.v1.cni.cncf.io/networks, another namespace's network), a
	// cloud identity (iam.amazonaws.com/role) — and a mutating webhook's
	// change is judged again only where the namespace sets a Pod Security
	// label: the platform lists what its tenants may use.
	// +optional
	AllowedAnnotationPrefixes []string `json:"allowedAnnotationPrefixes"`
}

// KueuePolicy says which of Kueue's labels a claim may set.
type KueuePolicy struct {
	// Queues a claim may name (the LocalQueue of its namespace, in the
	// label kueue.x-k8s.io/queue-name). Default: "*", any LocalQueue of
	// the namespace, which the platform creates; [] for none.
	// +optional
	Queues []string `json:"queues"`

	// PriorityClasses a claim may name (kueue.x-k8s.io/priority-class).
	// Default: none. A WorkloadPriorityClass is cluster-wide: a tenant
	// who names a high one preempts other namespaces' jobs.
	// +optional
	PriorityClasses []string `json:"priorityClasses,omitempty"`

	// DefaultQueue is put on every MiniCluster that names no queue.
	// +optional
	DefaultQueue string `json:"defaultQueue,omitempty"`

	// RequireQueue refuses a MiniCluster that names no queue (after
	// DefaultQueue): every MiniCluster is then admitted by Kueue, within
	// the namespace's quota.
	// +optional
	RequireQueue bool `json:"requireQueue,omitempty"`
}

// Defaults of the policy, the secure ones.
const (
	DefaultPodSecurityLevel = "baseline"
	DefaultMaxSize          = int32(1024)
)

// DefaultServiceAccounts are the ServiceAccounts any claim may name.
func DefaultServiceAccounts() []string { return []string{"default"} }

// DefaultForbiddenTolerationKeys are the control plane's taints, a
// cordoned or draining node's, and the kubelet's pressure taints: a pod
// that tolerates them lands on, or stays on, a node that is being emptied
// or is short of memory, disk or process IDs.
func DefaultForbiddenTolerationKeys() []string {
	return []string{
		"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master",
		"node.kubernetes.io/unschedulable",
		"node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure", "node.kubernetes.io/pid-pressure",
	}
}

// DefaultForbiddenPrefixes of labels and annotations.
func DefaultForbiddenPrefixes() []string {
	return []string{"crossplane.io/", "kubernetes.io/", "k8s.io/", "kueue.x-k8s.io/", "istio.io/", "azure.workload.identity/", "aadpodidbinding"}
}

// DefaultKueueQueues: any LocalQueue of the MiniCluster's namespace.
func DefaultKueueQueues() []string { return []string{Any} }

// Effective is p with every field left out set to its default, so that
// the checks read one complete policy. A list left out (nil) takes its
// default; an empty list ([] in the input) stays empty. The lists whose
// default is not empty have no omitempty, so that [] survives encoding
// (nil encodes as null, which decodes to nil again).
func (p Policy) Effective() Policy {
	out := *p.DeepCopy()
	if out.PodSecurity.DefaultLevel == "" {
		out.PodSecurity.DefaultLevel = DefaultPodSecurityLevel
	}
	if out.ServiceAccounts.Names == nil {
		out.ServiceAccounts.Names = DefaultServiceAccounts()
	}
	if out.MaxSize == 0 {
		out.MaxSize = DefaultMaxSize
	}
	if out.Tolerations.ForbiddenKeys == nil {
		out.Tolerations.ForbiddenKeys = DefaultForbiddenTolerationKeys()
	}
	if out.Metadata.ForbiddenPrefixes == nil {
		out.Metadata.ForbiddenPrefixes = DefaultForbiddenPrefixes()
	}
	if out.Metadata.AllowedAnnotationPrefixes == nil {
		out.Metadata.AllowedAnnotationPrefixes = []string{}
	}
	if out.Kueue.Queues == nil {
		out.Kueue.Queues = DefaultKueueQueues()
	}
	return out
}

// PermissivePolicy allows what the Flux Operator allows: any pod the
// namespace's own Pod Security labels admit, any ServiceAccount (and its
// token), Secret, NodePort, CSI driver, runtime class, scheduler,
// toleration, node and label. For a platform that moves first and
// tightens later (docs/migration.md).
func PermissivePolicy() Policy {
	return Policy{
		PodSecurity:     PodSecurityPolicy{DefaultLevel: "privileged"},
		ServiceAccounts: ServiceAccountPolicy{Names: []string{Any}, AutomountToken: true},
		Secrets:         SecretPolicy{Names: []string{Any}},
		NodePorts:       NodePortPolicy{Allowed: true},
		MaxSize:         1 << 30,
		CSIDrivers:      []string{Any},
		RuntimeClasses:  []string{Any},
		Schedulers:      []string{Any},
		Tolerations:     TolerationPolicy{ForbiddenKeys: []string{}},
		Metadata:        MetadataPolicy{ForbiddenPrefixes: []string{}, AllowedAnnotationPrefixes: []string{Any}},
		Kueue:           KueuePolicy{Queues: []string{Any}, PriorityClasses: []string{Any}},
	}
}

// Allows tells whether name is in a list of names ("*" allows any).
func Allows(names []string, name string) bool {
	for _, n := range names {
		if n == Any || n == name {
			return true
		}
	}
	return false
}

// LabelledAllowed tells whether labels open an object to MiniClusters.
func LabelledAllowed(labels map[string]string) bool {
	return labels[LabelAllowed] == AllowedValue
}

// NodePortsAllowed tells whether a namespace with these labels may open
// NodePorts.
func (p NodePortPolicy) NodePortsAllowed(nsLabels map[string]string) bool {
	return p.Allowed || nsLabels[LabelNodePorts] == AllowedValue
}
