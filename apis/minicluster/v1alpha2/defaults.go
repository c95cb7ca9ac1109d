package v1alpha2

import "fmt"

// BrokerPort is the port every broker binds for the overlay network, and the
// one place in Go that says the number: everything else that means it
// (DefaultLeadBrokerPort, brokerconfig.DefaultPort and through it the
// broker.toml, the Services and the port checks) derives from it, and
// brokerconfig's tests hold the XRD's schema default to it. It is untyped so
// that each user reads it as its own integer type.
const BrokerPort = 8050

// Defaults of the MiniCluster API. The XRD schema carries the ones the API
// server can apply; SetDefaults applies all of them, for inputs that never
// met an API server (crossplane composition render, upstream YAML).
const (
	DefaultSize            int32 = 1
	DefaultTasks           int32 = 1
	DefaultDeadlineSeconds int64 = 31500000
	DefaultBackoffLimit    int32 = 100
	DefaultConnectTimeout        = "5s"
	DefaultLogLevel        int32 = 6
	DefaultQueuePolicy           = "fcfs"
	DefaultViewName              = "flux-view"
	DefaultViewImage             = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
	DefaultMountPath             = "/mnt/flux"
	DefaultImage                 = "ghcr.io/rse-ops/accounting:app-latest"
	// The port every broker binds, so that a root whose lead broker is
	// reached without a NodePort needs no port in the claim. The schema's
	// default (FluxBroker.Port's marker) must be the same number:
	// brokerconfig's tests compare them.
	DefaultLeadBrokerPort int32 = BrokerPort
	DefaultRestartPolicy        = "OnFailure"
	DefaultLogsDir              = "/tmp/fluxout"
)

// PlatformDefaults are the defaults a platform team may set in the
// Composition (the function's input). Zero values leave the API defaults.
type PlatformDefaults struct {
	ViewImage        string
	ConnectTimeout   *string
	NodeSelector     map[string]string
	Tolerations      []Toleration
	ImagePullSecrets []string
}

// SetDefaults fills in every default of mc in place: the schema's, the
// operator's and the platform's. The claim's own values always win.
func SetDefaults(mc *MiniCluster, p PlatformDefaults) {
	s := &mc.Spec
	if s.Size == nil {
		s.Size = ptr(DefaultSize)
	}
	if s.Tasks == nil {
		s.Tasks = ptr(DefaultTasks)
	}
	if s.DeadlineSeconds == nil {
		s.DeadlineSeconds = ptr(DefaultDeadlineSeconds)
	}
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptr(DefaultBackoffLimit)
	}
	if s.MaxSize == 0 {
		s.MaxSize = *s.Size
	}
	if s.Network.HeadlessName == "" {
		s.Network.HeadlessName = mc.Name
	}
	if s.Pod.RestartPolicy == "" {
		s.Pod.RestartPolicy = DefaultRestartPolicy
	}
	if len(s.Pod.NodeSelector) == 0 && len(p.NodeSelector) > 0 {
		s.Pod.NodeSelector = copyMap(p.NodeSelector)
	}
	if len(s.Pod.Tolerations) == 0 && len(p.Tolerations) > 0 {
		s.Pod.Tolerations = append([]Toleration(nil), p.Tolerations...)
	}

	f := &s.Flux
	if f.Container.Name == "" {
		f.Container.Name = DefaultViewName
	}
	if f.Container.Image == "" {
		f.Container.Image = DefaultViewImage
		if p.ViewImage != "" {
			f.Container.Image = p.ViewImage
		}
	}
	if f.Container.MountPath == "" {
		f.Container.MountPath = DefaultMountPath
	}
	if f.ConnectTimeout == nil {
		f.ConnectTimeout = ptr(DefaultConnectTimeout)
		if p.ConnectTimeout != nil {
			f.ConnectTimeout = ptr(*p.ConnectTimeout)
		}
	}
	if f.LogLevel == nil {
		f.LogLevel = ptr(DefaultLogLevel)
	}
	if f.Scheduler.QueuePolicy == "" {
		f.Scheduler.QueuePolicy = DefaultQueuePolicy
	}
	if lb := f.Bursting.LeadBroker; lb != nil && lb.Port == 0 {
		lb.Port = DefaultLeadBrokerPort
	}
	// Upstream meant to apply these two but mutated a copy; ranks depend on
	// them, so they must be applied the same way on every cluster.
	for i := range f.Bursting.Clusters {
		c := &f.Bursting.Clusters[i]
		if c.Size == 0 {
			c.Size = *s.Size
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("burst-%d", i)
		}
	}

	if len(s.Containers) == 1 {
		s.Containers[0].RunFlux = true
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.Services {
		defaultContainer(&s.Services[i])
	}
}

func defaultContainer(c *MiniClusterContainer) {
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.Logs == "" {
		c.Logs = DefaultLogsDir
	}
}

func ptr[T any](v T) *T { return &v }

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Runner returns the index of the Flux runner container, or -1.
func (s *MiniClusterSpec) Runner() int {
	for i := range s.Containers {
		if s.Containers[i].RunFlux {
			return i
		}
	}
	return -1
}

// SizeValue is spec.size, or its default when unset.
func (s *MiniClusterSpec) SizeValue() int32 {
	if s.Size == nil {
		return DefaultSize
	}
	return *s.Size
}

// TasksValue is spec.tasks, or its default when unset.
func (s *MiniClusterSpec) TasksValue() int32 {
	if s.Tasks == nil {
		return DefaultTasks
	}
	return *s.Tasks
}

// LogLevelValue is spec.flux.logLevel, or its default when unset.
func (f *FluxSpec) LogLevelValue() int32 {
	if f.LogLevel == nil {
		return DefaultLogLevel
	}
	return *f.LogLevel
}

// CreationMaximum is the largest size a MiniCluster created with this spec
// can take: max(size, maxSize). The function fixes it in status when the
// cluster is created.
func (s *MiniClusterSpec) CreationMaximum() int32 {
	if m := s.SizeValue(); m > s.MaxSize {
		return m
	}
	return s.MaxSize
}
