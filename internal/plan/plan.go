// Package plan is the one validation pass between a MiniCluster and the
// objects that run it. New checks a defaulted MiniCluster against what it
// will compose — the names and hostnames it derives, labels, mounts,
// references, the scripts and files it writes — with Kubernetes' and Flux's
// own rules, and returns either field errors naming what to fix or a Plan:
// the sizes, quorum, hosts, names and files that rendering consumes without
// any further checks.
//
// Field rules the XRD's schema states (types, bounds, enums, patterns and
// CEL rules) are not repeated here: the API server applies them to every
// claim, and the function and the CLI evaluate the same schema in-process
// before they build a plan (internal/schema). This package holds what a
// schema cannot say: names derived from other fields, parsing (host lists,
// broker.toml, quantities, image references, scripts' quoting), and rules
// that need the whole list or another input. A few of those look like field
// rules but are not the field's alone: the runner may be implicit (one
// container without runFlux), which a container's own schema cannot see;
// the platform's tolerations (the function's input, which never meets the
// XRD) join the claim's and are checked with them; and a map key (an
// environment variable's name) can be named by a rule only on its map.
//
// Some rules of one value's syntax stay here although the schema's CEL
// format and quantity libraries could state them. The containers' resource
// quantities are the values of a map (limits[memory]): a rule can name the
// map, not the key, so the message would lose the resource's name; the
// checks parse them once, and rendering and the brokers' cores and GPUs
// (resources.go) use what they parsed. A volume's csiDriver
// is checked lowercased, as Kubernetes checks it, with Go's Unicode
// lowercasing, which CEL's lowerAscii is not. The DNS-name syntax of
// serviceAccountName, runtimeClassName, schedulerName, curveCertSecret, the
// imagePullSecrets, the secretKeyRefs' Secrets and the volumes'
// configMapName, secretName and claimName, and the quantity of
// emptyDirSizeLimit, are the schema's.
package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// Facts are what a plan depends on beyond the MiniCluster's spec.
type Facts struct {
	// Namespace of every composed object: the claim's.
	Namespace string
	// ImagePullSecrets the platform adds to every pod.
	ImagePullSecrets []string
	// AdmittedSize is the size Kueue admitted this MiniCluster's own
	// running Job with, 0 when Kueue admitted none (internal/admission
	// decides it from the Job it trusts): the cluster keeps running that
	// many pods whatever spec.size now asks (AdmittedBy says why).
	AdmittedSize int32
	// Gang: the brokers start as a gang (internal/admission decides it
	// from the function input, the cluster and the running Job).
	Gang bool
	// GangMinCount is the gang size the MiniCluster's own PodGroup
	// started with, 0 for none yet.
	GangMinCount int32
}

// Gang is how a MiniCluster's brokers start whole: kube-scheduler places
// MinCount of the PodGroup's pods at once or none of them.
type Gang struct {
	// PodGroup is the name of the PodGroup and of its Workload.
	PodGroup string
	// MinCount is the quorum the MiniCluster starts with (ReadyQuorum
	// when its PodGroup is new), never more than Size. The scheduler reads
	// it only for pods it has yet to place: once MinCount brokers run, a
	// broker that joins (a larger spec.size) or replaces one is placed
	// alone, so a larger size keeps the gang size the MiniCluster started
	// with, and a smaller one lowers it to the size, or a broker that
	// replaces one would wait for brokers that no longer come.
	MinCount int32
}

// Plan is a checked MiniCluster and everything derived from it: what
// rendering and observing share is decided here once, as a field.
type Plan struct {
	// MiniCluster, defaulted.
	MiniCluster *v1alpha2.MiniCluster
	// Namespace of every object.
	Namespace string
	// ImagePullSecrets the platform adds to every pod.
	ImagePullSecrets []string

	// RequestedSize is spec.size.
	RequestedSize int32
	// MaximumSize is the largest size, fixed at creation; hosts and R are
	// sized to it.
	MaximumSize int32
	// Size is the number of pods to run now: RequestedSize, clamped to
	// MaximumSize, or the size Kueue admitted the running Job with
	// (Facts.AdmittedSize).
	Size int32
	// AdmittedSize is Facts.AdmittedSize when it differs from
	// RequestedSize: Kueue admitted the running Job at that size, and
	// changing a running Job's parallelism would make Kueue stop every pod
	// and queue it again; 0 otherwise.
	AdmittedSize int32
	// BrokerQuorum is -Sbroker.quorum: the brokers the lead waits for
	// before it starts the job. 0 leaves Flux's default, every host.
	BrokerQuorum int32
	// ReadyQuorum is the number of ready brokers that make the cluster
	// Running and the Job ready: BrokerQuorum, or Size when that is 0.
	ReadyQuorum int32
	// Gang, when set, makes the brokers start whole (Facts.Gang).
	Gang *Gang

	// Runner is the index of the container that runs Flux.
	Runner int
	// Hosts is the instance's host list in rank order.
	Hosts hostlist.Hosts
	// Names of the composed objects.
	Names Names
	// Layout is where everything lives in the pods: the scripts, the
	// probe and the mounts take their paths from it.
	Layout entrypoint.Layout
	// Resources are what every broker offers Flux, the same on every
	// rank: the runner's cores and GPUs, or the node's (brokerResources).
	Resources entrypoint.Resources
	// Files of the entrypoint ConfigMap: broker.toml, hostlist and scripts.
	Files map[string]string

	// Restricted: the broker pods get Pod Security's restricted settings
	// (see Restricted); RestrictedServices: the services Pod too.
	Restricted, RestrictedServices bool
	// ViewUID and ViewGID are the user of the Flux view's init container,
	// nil for its own (see ViewUser).
	ViewUID, ViewGID *int64
	// ComposesLeadBroker: a burst's root, which exposes its lead broker
	// on a NodePort Service (see ComposesLeadBroker).
	ComposesLeadBroker bool
	// Queue is the Kueue LocalQueue the Job goes to, "" for none
	// (queueName).
	Queue string
	// Finished: the cluster has finished, as its status says (phase
	// Succeeded or Failed). Nothing needs the services Pod then, and it is
	// no Job's pod, so nothing else would stop it: it goes, with or
	// without spec.cleanup.
	Finished bool
	// CleanedUp: spec.cleanup is set and the cluster has finished: its
	// pods go away (no Job, no services Pod), and it keeps the phase it
	// finished with.
	CleanedUp bool

	// quantities are the containers' resources, parsed by the checks.
	quantities quantities

	// brokerTOML is spec.flux.brokerConfig, decoded once for the checks
	// and the quorum.
	brokerTOML brokerTOML
}

// Clamped tells whether spec.size asks for more pods than the maximum.
func (p *Plan) Clamped() bool { return p.RequestedSize > p.MaximumSize }

// New checks mc (defaulted with v1alpha2.SetDefaults) and plans its
// objects. A non-empty error list means the MiniCluster cannot run as it
// is; every error names the claim's field and what to do.
func New(mc *v1alpha2.MiniCluster, f Facts) (*Plan, field.ErrorList) {
	s := &mc.Spec
	p := &Plan{
		MiniCluster:      mc,
		Namespace:        f.Namespace,
		ImagePullSecrets: f.ImagePullSecrets,
		RequestedSize:    s.SizeValue(),
		MaximumSize:      MaximumSize(mc),
		Runner:           s.Runner(),
		Layout:           entrypoint.Layout{MountPath: s.Flux.Container.MountPath},
		brokerTOML:       decodeBrokerConfig(mc),
		quantities:       quantities{},
	}
	p.Size = min(p.RequestedSize, p.MaximumSize)
	if a := f.AdmittedSize; a > 0 && a != p.RequestedSize {
		p.Size, p.AdmittedSize = a, a
	}
	p.BrokerQuorum = brokerQuorum(mc, brokerConfigHosts(p.brokerTOML), p.Size, p.MaximumSize)
	p.ReadyQuorum = p.BrokerQuorum
	if p.ReadyQuorum == 0 {
		p.ReadyQuorum = p.Size
	}
	p.Names = names(mc)
	if f.Gang {
		n := p.ReadyQuorum
		if f.GangMinCount > 0 {
			n = f.GangMinCount
		}
		p.Gang = &Gang{PodGroup: p.Names.PodGroup, MinCount: min(n, p.Size)}
	}

	// The schema guarantees one runner and a size of at least 1; a request
	// that skipped it (a hand-made composite) must still not reach code
	// that assumes them.
	if p.Runner < 0 || p.RequestedSize < 1 || p.MaximumSize < 1 {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), "", "the MiniCluster does not satisfy its schema (one container with runFlux: true, size at least 1): validate it against the XRD, e.g. with minicluster render")}
	}

	var errs field.ErrorList
	errs = append(errs, checkStrings(mc)...)
	errs = append(errs, checkNames(mc, p)...)
	errs = append(errs, checkContainers(mc, p.quantities)...)
	errs = append(errs, checkVolumes(mc)...)
	errs = append(errs, checkMounts(mc)...)
	errs = append(errs, checkPod(mc)...)
	errs = append(errs, checkFlux(mc, p)...)
	errs = append(errs, checkCurveCert(mc)...)
	errs = append(errs, checkBursting(mc, p)...)
	errs = append(errs, checkQueue(mc)...)
	if len(errs) > 0 {
		return nil, errs
	}
	p.Hosts = hosts(mc, p.MaximumSize)
	p.Resources = brokerResources(mc, p.ContainerResources(p.Runner))
	p.Restricted, p.RestrictedServices = Restricted(mc), RestrictedServices(mc)
	p.ViewUID, p.ViewGID = ViewUser(mc)
	p.ComposesLeadBroker = ComposesLeadBroker(mc)
	p.Queue = queueName(mc)
	p.Finished = mc.Status.Phase == v1alpha2.PhaseSucceeded || mc.Status.Phase == v1alpha2.PhaseFailed
	p.CleanedUp = mc.Spec.Cleanup && p.Finished
	if errs := p.files(); len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// MaximumSize is the largest size of mc, fixed when it was created: the
// value the function wrote into its status, else max(size, maxSize) for a
// MiniCluster that is new.
func MaximumSize(mc *v1alpha2.MiniCluster) int32 {
	if m := mc.Status.MaximumSize; m > 0 {
		return m
	}
	return mc.Spec.CreationMaximum()
}

// brokerQuorum is minSize when set, else the current size whenever the host
// list declares more hosts than that (room to grow, bursting, or the
// configHosts of a brokerConfig past this cluster's pods, which join later
// if ever), else 0: every host, Flux's default.
func brokerQuorum(mc *v1alpha2.MiniCluster, configHosts int, size, maximumSize int32) int32 {
	if mc.Spec.MinSize > 0 {
		return min(mc.Spec.MinSize, size)
	}
	b := &mc.Spec.Flux.Bursting
	if maximumSize > size || len(b.Clusters) > 0 || b.Hostlist != "" || configHosts > int(maximumSize) {
		return size
	}
	return 0
}

// hosts is the instance's host list, in rank order.
func hosts(mc *v1alpha2.MiniCluster, maximumSize int32) hostlist.Hosts {
	b := &mc.Spec.Flux.Bursting
	clusters := make([]hostlist.Cluster, 0, len(b.Clusters))
	for _, c := range b.Clusters {
		clusters = append(clusters, hostlist.Cluster{Name: c.Name, Size: c.Size})
	}
	switch {
	case b.Hostlist != "":
		return hostlist.Custom(b.Hostlist)
	case b.LeadBroker != nil:
		lb := b.LeadBroker
		return hostlist.Burst(hostlist.Lead{Address: lb.Address, Name: lb.Name, Size: lb.Size, Port: lb.Port}, clusters)
	default:
		return hostlist.Root(mc.Name, maximumSize, clusters)
	}
}
