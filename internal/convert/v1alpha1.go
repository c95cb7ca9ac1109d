package convert

import (
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// The Flux Operator's v1alpha1 MiniCluster, as far as convert reads it: the
// fields of the operator's last v1alpha1 release (0.1.1) and the ones its
// v1alpha1 documentation still describes from earlier releases
// (containers[].preCommand, fluxOptionFlags, fluxLogLevel). Pointers mark
// fields whose absence means something other than their zero value.
//
// A field that is not here is unknown: convert refuses it rather than drop
// it silently.

// v1alpha1MiniCluster is a v1alpha1 MiniCluster object.
type v1alpha1MiniCluster struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   v1alpha1Metadata `json:"metadata"`
	Spec       v1alpha1Spec     `json:"spec"`
	Status     map[string]any   `json:"status,omitempty"`
}

// v1alpha1Metadata is the object metadata convert keeps or drops.
type v1alpha1Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`

	// Written by the API server; dropped.
	GenerateName      string           `json:"generateName,omitempty"`
	UID               string           `json:"uid,omitempty"`
	ResourceVersion   string           `json:"resourceVersion,omitempty"`
	Generation        int64            `json:"generation,omitempty"`
	CreationTimestamp any              `json:"creationTimestamp,omitempty"`
	DeletionTimestamp any              `json:"deletionTimestamp,omitempty"`
	ManagedFields     []map[string]any `json:"managedFields,omitempty"`
	OwnerReferences   []map[string]any `json:"ownerReferences,omitempty"`
	Finalizers        []string         `json:"finalizers,omitempty"`
	SelfLink          string           `json:"selfLink,omitempty"`
}

type v1alpha1Spec struct {
	Containers            []v1alpha1Container       `json:"containers"`
	Services              []v1alpha1Container       `json:"services,omitempty"`
	Network               *v1alpha1Network          `json:"network,omitempty"`
	Users                 []v1alpha1User            `json:"users,omitempty"`
	JobLabels             map[string]string         `json:"jobLabels,omitempty"`
	Interactive           bool                      `json:"interactive,omitempty"`
	Flux                  *v1alpha1Flux             `json:"flux,omitempty"`
	Volumes               map[string]v1alpha1Volume `json:"volumes,omitempty"`
	Logging               *v1alpha1Logging          `json:"logging,omitempty"`
	Archive               *v1alpha1Archive          `json:"archive,omitempty"`
	ShareProcessNamespace bool                      `json:"shareProcessNamespace,omitempty"`
	FluxRestful           *v1alpha1FluxRestful      `json:"fluxRestful,omitempty"`
	Cleanup               bool                      `json:"cleanup,omitempty"`
	Size                  *int32                    `json:"size,omitempty"`
	MaxSize               int32                     `json:"maxSize,omitempty"`
	Tasks                 *int32                    `json:"tasks,omitempty"`
	DeadlineSeconds       *int64                    `json:"deadlineSeconds,omitempty"`
	Pod                   *v1alpha1Pod              `json:"pod,omitempty"`
}

type v1alpha1Network struct {
	HeadlessName string `json:"headlessName,omitempty"`
}

type v1alpha1User struct {
	Name     string `json:"name"`
	Password string `json:"password,omitempty"`
}

type v1alpha1Archive struct {
	Path string `json:"path,omitempty"`
}

type v1alpha1Logging struct {
	Quiet  bool  `json:"quiet,omitempty"`
	Strict *bool `json:"strict,omitempty"`
	Debug  bool  `json:"debug,omitempty"`
	Zeromq bool  `json:"zeromq,omitempty"`
	Timed  bool  `json:"timed,omitempty"`
}

type v1alpha1Pod struct {
	Annotations        map[string]string          `json:"annotations,omitempty"`
	Labels             map[string]string          `json:"labels,omitempty"`
	ServiceAccountName string                     `json:"serviceAccountName,omitempty"`
	NodeSelector       map[string]string          `json:"nodeSelector,omitempty"`
	Resources          v1alpha2.ContainerResource `json:"resources,omitempty"`
}

type v1alpha1FluxRestful struct {
	Branch    string `json:"branch,omitempty"`
	Port      int32  `json:"port,omitempty"`
	SecretKey string `json:"secretKey,omitempty"`
	Username  string `json:"username,omitempty"`
	Token     string `json:"token,omitempty"`
}

// v1alpha1Volume is a top-level volume: the operator made a
// PersistentVolume and a claim <name>-claim for it.
type v1alpha1Volume struct {
	Path             string            `json:"path,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	ClaimAnnotations map[string]string `json:"claimAnnotations,omitempty"`
	Attributes       map[string]string `json:"attributes,omitempty"`
	VolumeHandle     string            `json:"volumeHandle,omitempty"`
	StorageClass     string            `json:"storageClass,omitempty"`
	Driver           string            `json:"driver,omitempty"`
	Delete           *bool             `json:"delete,omitempty"`
	Secret           string            `json:"secret,omitempty"`
	SecretNamespace  string            `json:"secretNamespace,omitempty"`
	Capacity         string            `json:"capacity,omitempty"`
}

type v1alpha1Flux struct {
	InstallRoot     string                 `json:"installRoot,omitempty"`
	Wrap            string                 `json:"wrap,omitempty"`
	ConnectTimeout  *string                `json:"connectTimeout,omitempty"`
	OptionFlags     string                 `json:"optionFlags,omitempty"`
	MinimalService  bool                   `json:"minimalService,omitempty"`
	LogLevel        *int32                 `json:"logLevel,omitempty"`
	CurveCert       string                 `json:"curveCert,omitempty"`
	CurveCertSecret string                 `json:"curveCertSecret,omitempty"`
	Scheduler       *v1alpha1FluxScheduler `json:"scheduler,omitempty"`
	MungeSecret     string                 `json:"mungeSecret,omitempty"`
	Bursting        *v1alpha1Bursting      `json:"bursting,omitempty"`
	BrokerConfig    string                 `json:"brokerConfig,omitempty"`
}

type v1alpha1FluxScheduler struct {
	QueuePolicy string `json:"queuePolicy,omitempty"`
}

type v1alpha1Bursting struct {
	LeadBroker *v1alpha1FluxBroker       `json:"leadBroker,omitempty"`
	Hostlist   string                    `json:"hostlist,omitempty"`
	Clusters   []v1alpha2.BurstedCluster `json:"clusters,omitempty"`
}

type v1alpha1FluxBroker struct {
	Address string `json:"address,omitempty"`
	Name    string `json:"name,omitempty"`
	Size    int32  `json:"size,omitempty"`
	Port    int32  `json:"port,omitempty"`
}

type v1alpha1Container struct {
	Image           string                             `json:"image,omitempty"`
	Name            string                             `json:"name,omitempty"`
	Cores           *int32                             `json:"cores,omitempty"`
	WorkingDir      string                             `json:"workingDir,omitempty"`
	Diagnostics     *bool                              `json:"diagnostics,omitempty"`
	FluxUser        *v1alpha1FluxUser                  `json:"fluxUser,omitempty"`
	Ports           []int32                            `json:"ports,omitempty"`
	Environment     map[string]string                  `json:"environment,omitempty"`
	Secrets         map[string]v1alpha2.Secret         `json:"secrets,omitempty"`
	ImagePullSecret string                             `json:"imagePullSecret,omitempty"`
	Command         string                             `json:"command,omitempty"`
	Launcher        bool                               `json:"launcher,omitempty"`
	Batch           bool                               `json:"batch,omitempty"`
	BatchRaw        bool                               `json:"batchRaw,omitempty"`
	Logs            string                             `json:"logs,omitempty"`
	PullAlways      bool                               `json:"pullAlways,omitempty"`
	RunFlux         bool                               `json:"runFlux,omitempty"`
	Volumes         map[string]v1alpha1ContainerVolume `json:"volumes,omitempty"`
	ExistingVolumes map[string]v1alpha1ExistingVolume  `json:"existingVolumes,omitempty"`
	LifeCycle       *v1alpha2.LifeCycle                `json:"lifeCycle,omitempty"`
	Resources       *v1alpha2.ContainerResources       `json:"resources,omitempty"`
	Commands        *v1alpha1Commands                  `json:"commands,omitempty"`
	SecurityContext *v1alpha1SecurityContext           `json:"securityContext,omitempty"`

	// Earlier v1alpha1 releases, still in the v1alpha1 docs.
	PreCommand      string `json:"preCommand,omitempty"`
	FluxOptionFlags string `json:"fluxOptionFlags,omitempty"`
	FluxLogLevel    *int32 `json:"fluxLogLevel,omitempty"`
}

type v1alpha1FluxUser struct {
	Name string `json:"name,omitempty"`
	UID  *int64 `json:"uid,omitempty"`
}

type v1alpha1ContainerVolume struct {
	Path     string `json:"path,omitempty"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

type v1alpha1ExistingVolume struct {
	Path          string            `json:"path,omitempty"`
	ConfigMapName string            `json:"configMapName,omitempty"`
	Items         map[string]string `json:"items,omitempty"`
	ClaimName     string            `json:"claimName,omitempty"`
	SecretName    string            `json:"secretName,omitempty"`
	ReadOnly      bool              `json:"readOnly,omitempty"`
}

type v1alpha1Commands struct {
	RunFluxAsRoot *bool  `json:"runFluxAsRoot,omitempty"`
	Prefix        string `json:"prefix,omitempty"`
	Init          string `json:"init,omitempty"`
	Pre           string `json:"pre,omitempty"`
	Post          string `json:"post,omitempty"`
	WorkerPre     string `json:"workerPre,omitempty"`
	BrokerPre     string `json:"brokerPre,omitempty"`
}

type v1alpha1SecurityContext struct {
	Privileged      bool                  `json:"privileged,omitempty"`
	AddCapabilities []v1alpha2.Capability `json:"addCapabilities,omitempty"`
}
