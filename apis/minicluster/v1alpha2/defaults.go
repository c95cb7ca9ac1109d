package v1alpha2

import (
	"fmt"
	"maps"
)

// Defaults of the MiniCluster API, each value stated here and nowhere else.
//
// The ones SchemaDefaults lists are also the XRD schema's: hack/xrdgen
// writes them into the generated XRDs and the Burst CRD (make generate),
// and refuses a +kubebuilder:default marker, so the API server, the
// function's in-process schema (internal/schema) and SetDefaults apply the
// same value, and changing a constant here changes it everywhere.
const (
	DefaultSize            int32 = 1
	DefaultTasks           int32 = 1
	DefaultDeadlineSeconds int64 = 31500000
	DefaultLogLevel        int32 = 6
	// The port every broker binds, so that a root whose lead broker is
	// reached without a NodePort needs no port in the claim.
	DefaultLeadBrokerPort int32 = BrokerPort
	DefaultImage                = "ghcr.io/rse-ops/accounting:app-latest"
)

// Defaults only SetDefaults applies; the schema leaves these fields alone.
// For the strings "" must mean the default as much as an absent field does
// (the Flux Operator's clients send "" for strings they leave unset), which
// a schema default, applied to absent fields only, cannot say.
const (
	DefaultBackoffLimit  int32 = 100
	DefaultQueuePolicy         = "fcfs"
	DefaultViewName            = "flux-view"
	DefaultViewImage           = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
	DefaultMountPath           = "/mnt/flux"
	DefaultRestartPolicy       = "OnFailure"
	DefaultLogsDir             = "/tmp/fluxout"
	// The platform's default (PlatformDefaults.ConnectTimeout) replaces
	// this one, which a schema default could not let it do: the API server
	// would fill the field in before the function reads the claim.
	DefaultConnectTimeout = "5s"
)

// SchemaDefault is a default the XRD's schema states. It is not an API
// type: no deepcopy.
//
// +kubebuilder:object:generate=false
type SchemaDefault struct {
	// Path of the field below spec, in JSON names: dots step into an
	// object, "[]" into a list's items ("containers[].image").
	Path string
	// Value is the default, as encoding/json encodes it.
	Value any
}

// SchemaDefaults are the defaults of the MiniCluster spec's schema, which
// hack/xrdgen writes into the generated XRDs and the Burst CRD. The API
// server applies them to absent (or null) fields, before validation;
// SetDefaults applies the same constants to Go values.
func SchemaDefaults() []SchemaDefault {
	return []SchemaDefault{
		// flux and flux.bursting are objects even when the claim leaves
		// them out, so that their immutability rules always run (see
		// MiniClusterSpec) and the defaults below them apply without a
		// flux: block. Go needs no counterpart: both are struct values.
		{Path: "flux", Value: map[string]any{}},
		{Path: "flux.bursting", Value: map[string]any{}},
		{Path: "size", Value: DefaultSize},
		{Path: "tasks", Value: DefaultTasks},
		{Path: "deadlineSeconds", Value: DefaultDeadlineSeconds},
		{Path: "flux.logLevel", Value: DefaultLogLevel},
		{Path: "flux.bursting.leadBroker.port", Value: DefaultLeadBrokerPort},
		{Path: "containers[].image", Value: DefaultImage},
		{Path: "services[].image", Value: DefaultImage},
	}
}

// PlatformDefaults are the defaults a platform team may set in the
// Composition (the function's input). Zero values leave the API defaults.
type PlatformDefaults struct {
	ViewImage        string
	ConnectTimeout   *string
	NodeSelector     map[string]string
	Tolerations      []Toleration
	ImagePullSecrets []string
}

// SetDefaults fills in every default of mc in place: the schema's again
// (mc may not have met this schema: a root read from another cluster's API
// server, a MiniCluster built in Go), then what a schema cannot state: the
// operator's "" as unset, defaults derived from other fields, and the
// platform's. The claim's own values always win.
func SetDefaults(mc *MiniCluster, p PlatformDefaults) {
	setSchemaDefaults(&mc.Spec)
	s := &mc.Spec
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptr(DefaultBackoffLimit)
	}
	// Derived from other fields, which a schema default cannot be.
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
		s.Pod.NodeSelector = maps.Clone(p.NodeSelector)
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
	if f.Scheduler.QueuePolicy == "" {
		f.Scheduler.QueuePolicy = DefaultQueuePolicy
	}
	if f.ConnectTimeout == nil {
		f.ConnectTimeout = ptr(DefaultConnectTimeout)
		if p.ConnectTimeout != nil {
			f.ConnectTimeout = ptr(*p.ConnectTimeout)
		}
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
		defaultContainer(&s.Services[i].MiniClusterContainer)
	}
}

// setSchemaDefaults applies SchemaDefaults to s, as the API server would; the
// images of containers and services are defaultContainer's, which treats ""
// as unset too. internal/schema's TestDefaultAgreesWithSetDefaults holds it
// to the schema.
func setSchemaDefaults(s *MiniClusterSpec) {
	if s.Size == nil {
		s.Size = ptr(DefaultSize)
	}
	if s.Tasks == nil {
		s.Tasks = ptr(DefaultTasks)
	}
	if s.DeadlineSeconds == nil {
		s.DeadlineSeconds = ptr(DefaultDeadlineSeconds)
	}
	f := &s.Flux
	if f.LogLevel == nil {
		f.LogLevel = ptr(DefaultLogLevel)
	}
	if lb := f.Bursting.LeadBroker; lb != nil && lb.Port == 0 {
		lb.Port = DefaultLeadBrokerPort
	}
}

// defaultContainer defaults a container or service. The schema defaults
// image only when it is absent; "" means the default too.
func defaultContainer(c *MiniClusterContainer) {
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.Logs == "" {
		c.Logs = DefaultLogsDir
	}
}

func ptr[T any](v T) *T { return &v }

// Runner returns the index of the Flux runner container, or -1.
func (s *MiniClusterSpec) Runner() int {
	for i := range s.Containers {
		if s.Containers[i].RunFlux {
			return i
		}
	}
	return -1
}

// Containers returns pointers to the containers of a list, spec.containers
// or spec.services, in order, for code that treats both lists alike. They
// point into cs: a change through one is a change to the claim's container,
// as a copy's would not be.
func Containers[C MiniClusterContainer | ServiceContainer](cs []C) []*MiniClusterContainer {
	out := make([]*MiniClusterContainer, len(cs))
	for i := range cs {
		switch c := any(&cs[i]).(type) {
		case *MiniClusterContainer:
			out[i] = c
		case *ServiceContainer:
			out[i] = &c.MiniClusterContainer
		}
	}
	return out
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
