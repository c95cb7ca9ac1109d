// Package convert turns the Flux Operator's v1alpha1 MiniCluster manifests
// into v1alpha2 MiniCluster claims. Every v1alpha1 field with a v1alpha2
// meaning is mapped; every other one becomes a Note that names the field
// and says why it has no place in v1alpha2, or what to do instead. A field
// convert does not know is an error, never dropped silently.
//
// A runner without a command served the Flux RESTful API in v1alpha1; it
// becomes the RESTful API pattern of examples/restful-api (see Restful).
//
// The package knows nothing of Crossplane: the caller checks the claims it
// makes (Options.Check), e.g. with the API server's rules and the function.
package convert

import (
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// V1alpha1 is the apiVersion convert reads.
const V1alpha1 = v1alpha2.Group + "/v1alpha1"

// Note is one thing the user has to know about a conversion: a v1alpha1
// field without a v1alpha2 field, or a change of behaviour.
type Note struct {
	// Field is the v1alpha1 field's path (spec.containers[0].cores).
	Field string
	// Message says why, and what to do instead.
	Message string
}

func (n Note) String() string { return n.Field + ": " + n.Message }

// Converted is one v1alpha1 MiniCluster as a v1alpha2 claim.
type Converted struct {
	Claim *v1alpha2.MiniCluster
	Notes []Note
}

// MiniCluster converts one v1alpha1 MiniCluster, given as YAML or JSON. It
// refuses fields v1alpha1 does not have and values of the wrong type.
func MiniCluster(doc []byte) (*Converted, error) {
	var raw map[string]any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("cannot parse the MiniCluster: %w", err)
	}
	if unknown := unknownFields(raw, reflect.TypeFor[v1alpha1MiniCluster]()); len(unknown) > 0 {
		return nil, fmt.Errorf("unknown v1alpha1 fields %s: not a field of the Flux Operator's v1alpha1 MiniCluster (check the spelling, or remove them)", quoteAll(unknown))
	}
	var in v1alpha1MiniCluster
	if err := yaml.Unmarshal(doc, &in); err != nil {
		return nil, fmt.Errorf("cannot decode the v1alpha1 MiniCluster: %w", err)
	}
	if in.APIVersion != V1alpha1 || in.Kind != v1alpha2.ClaimKind {
		return nil, fmt.Errorf("%s %s is not a v1alpha1 MiniCluster (apiVersion: %s, kind: %s)", in.APIVersion, in.Kind, V1alpha1, v1alpha2.ClaimKind)
	}
	if in.Metadata.Name == "" {
		return nil, fmt.Errorf("metadata.name is required: it names the MiniCluster and every object made for it")
	}
	c := &converter{in: &in, out: &v1alpha2.MiniCluster{}}
	if err := c.convert(); err != nil {
		return nil, err
	}
	return &Converted{Claim: c.out, Notes: c.notes}, nil
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

type converter struct {
	in    *v1alpha1MiniCluster
	out   *v1alpha2.MiniCluster
	notes []Note
}

func (c *converter) note(field, format string, args ...any) {
	c.notes = append(c.notes, Note{Field: field, Message: fmt.Sprintf(format, args...)})
}

// headlessV1alpha1 is the v1alpha1 default of network.headlessName.
const headlessV1alpha1 = "flux-service"

func (c *converter) convert() error {
	in, out := c.in, c.out
	out.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha2.SchemeGroupVersion.String(), Kind: v1alpha2.ClaimKind}
	c.metadata()
	s, o := &in.Spec, &out.Spec

	o.Size = s.Size
	o.MaxSize = s.MaxSize
	o.Tasks = s.Tasks
	o.DeadlineSeconds = s.DeadlineSeconds
	o.Interactive = s.Interactive
	o.JobLabels = s.JobLabels
	o.ShareProcessNamespace = s.ShareProcessNamespace
	if s.Cleanup {
		o.Cleanup = true
		c.note("spec.cleanup", "kept, but a composition function cannot delete its own claim, and v1alpha2 makes no PersistentVolumes to clean up: when the claim's Finished condition is True, delete it (kubectl wait --for=condition=Finished minicluster/%s && kubectl delete minicluster/%s)", in.Metadata.Name, in.Metadata.Name)
	}
	if s.Archive != nil {
		o.Archive.Path = s.Archive.Path
	}
	if s.Network != nil {
		o.Network.HeadlessName = s.Network.HeadlessName
	}
	c.logging()
	c.pod()
	c.flux()

	if len(s.Users) > 0 {
		msg := "no v1alpha2 field: v1alpha1 made them accounts of the Flux RESTful API (and Linux users); add each one in the runner's commands.brokerPre after the database is made: python3 app/db/init_db.py add-user <name> \"${PASSWORD}\", with PASSWORD from a Secret (containers[].secrets)"
		for _, u := range s.Users {
			if u.Password != "" {
				msg += "; the passwords are not copied into the claim"
				break
			}
		}
		c.note("spec.users", "%s", msg)
	}

	runner := runnerIndex(s.Containers)
	for i := range s.Containers {
		o.Containers = append(o.Containers, c.container(&s.Containers[i], fmt.Sprintf("spec.containers[%d]", i), i == runner))
	}
	for i := range s.Services {
		o.Services = append(o.Services, c.container(&s.Services[i], fmt.Sprintf("spec.services[%d]", i), false))
	}
	if err := c.volumes(); err != nil {
		return err
	}
	c.viewless(runner)
	c.restful(runner)
	c.headless()
	return nil
}

// metadata keeps what names and labels the MiniCluster; what the API
// server wrote goes.
func (c *converter) metadata() {
	m := &c.in.Metadata
	c.out.Name = m.Name
	c.out.Namespace = m.Namespace
	c.out.Labels = m.Labels
	for k, v := range m.Annotations {
		if k == "kubectl.kubernetes.io/last-applied-configuration" {
			c.note("metadata.annotations."+k, "dropped: it is the v1alpha1 object kubectl applied")
			continue
		}
		if c.out.Annotations == nil {
			c.out.Annotations = map[string]string{}
		}
		c.out.Annotations[k] = v
	}
	var server []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"generateName", m.GenerateName != ""}, {"uid", m.UID != ""}, {"resourceVersion", m.ResourceVersion != ""},
		{"generation", m.Generation != 0}, {"creationTimestamp", m.CreationTimestamp != nil}, {"deletionTimestamp", m.DeletionTimestamp != nil},
		{"managedFields", len(m.ManagedFields) > 0}, {"ownerReferences", len(m.OwnerReferences) > 0}, {"finalizers", len(m.Finalizers) > 0},
		{"selfLink", m.SelfLink != ""},
	} {
		if f.set {
			server = append(server, f.name)
		}
	}
	if len(server) > 0 {
		c.note("metadata", "dropped %s: written by the API server or the operator for the v1alpha1 object", strings.Join(server, ", "))
	}
	if c.in.Status != nil {
		c.note("status", "dropped: written by the Flux Operator; the function reports the claim's own status")
	}
}

func (c *converter) logging() {
	l := c.in.Spec.Logging
	if l == nil {
		return
	}
	o := &c.out.Spec.Logging
	o.Quiet, o.Debug, o.Zeromq, o.Timed = l.Quiet, l.Debug, l.Zeromq, l.Timed
	if l.Strict == nil {
		o.Strict = true
		c.note("spec.logging.strict", "not set: v1alpha1 defaulted it to true when logging is given (v1alpha2 defaults to false), so the claim sets strict: true")
	} else {
		o.Strict = *l.Strict
	}
}

func (c *converter) pod() {
	p := c.in.Spec.Pod
	if p == nil {
		return
	}
	o := &c.out.Spec.Pod
	o.Annotations = p.Annotations
	o.Labels = p.Labels
	o.ServiceAccountName = p.ServiceAccountName
	o.NodeSelector = p.NodeSelector
	if len(p.Resources) > 0 {
		// v1alpha2's pod.resources is the same pod overhead, which the API
		// server admits only from a RuntimeClass (v1alpha1 has none).
		c.note("spec.pod.resources", "dropped: v1alpha1 made it the pods' overhead, which Kubernetes admits only as the overhead of the pods' RuntimeClass; give the containers resources (containers[].resources) instead")
	}
}

func (c *converter) flux() {
	f, o := c.in.Spec.Flux, &c.out.Spec.Flux
	if f != nil {
		switch root := strings.TrimSuffix(f.InstallRoot, "/"); root {
		case "":
		case "/usr":
			c.note("spec.flux.installRoot", "no v1alpha2 field: the brokers run the flux on PATH, /usr/bin/flux for this root; dropped")
		default:
			c.note("spec.flux.installRoot", "no v1alpha2 field: the brokers run the flux on PATH: add %s/bin to PATH in the runner's commands.init; dropped", root)
		}
		o.Wrap = f.Wrap
		o.ConnectTimeout = f.ConnectTimeout
		o.OptionFlags = f.OptionFlags
		o.MinimalService = f.MinimalService
		o.LogLevel = f.LogLevel
		o.CurveCertSecret = f.CurveCertSecret
		if f.CurveCert != "" {
			o.CurveCert = f.CurveCert
			c.note("spec.flux.curveCert", "kept, but the certificate's secret key is in the manifest: put it in a Secret (key curve.cert) and name it in spec.flux.curveCertSecret instead")
		}
		if f.Scheduler != nil {
			o.Scheduler.QueuePolicy = f.Scheduler.QueuePolicy
		}
		if f.MungeSecret != "" {
			c.note("spec.flux.mungeSecret", "no v1alpha2 meaning: Flux runs as the container's user without the IMP, so no munge key is needed; dropped")
		}
		if b := f.Bursting; b != nil {
			o.Bursting.Hostlist = b.Hostlist
			o.Bursting.Clusters = b.Clusters
			if lb := b.LeadBroker; lb != nil {
				if lb.Address != "" {
					o.Bursting.LeadBroker = &v1alpha2.FluxBroker{Address: lb.Address, Name: lb.Name, Size: lb.Size, Port: lb.Port}
				} else if *lb != (v1alpha1FluxBroker{}) {
					c.note("spec.flux.bursting.leadBroker", "dropped: without an address it marked the root cluster in v1alpha1 too")
				}
			}
		}
		if f.BrokerConfig != "" {
			o.BrokerConfig = f.BrokerConfig
			c.note("spec.flux.brokerConfig", "kept verbatim: its paths must be v1alpha2's: curve_cert = \"/mnt/flux/config/curve/curve.cert\", [resource] path = \"/mnt/flux/config/etc/flux/system/R\" (v1alpha1 used /etc/curve and /etc/flux)")
		}
	}
	// Flags and log level lived on the container in early v1alpha1.
	for i, ct := range c.in.Spec.Containers {
		p := fmt.Sprintf("spec.containers[%d]", i)
		if ct.FluxOptionFlags != "" {
			if o.OptionFlags == "" {
				o.OptionFlags = ct.FluxOptionFlags
				c.note(p+".fluxOptionFlags", "moved to spec.flux.optionFlags (its place since v1alpha1 0.1.0)")
			} else if o.OptionFlags != ct.FluxOptionFlags {
				c.note(p+".fluxOptionFlags", "dropped: spec.flux.optionFlags (%q) is set and wins", o.OptionFlags)
			}
		}
		if ct.FluxLogLevel != nil {
			if o.LogLevel == nil {
				o.LogLevel = ct.FluxLogLevel
				c.note(p+".fluxLogLevel", "moved to spec.flux.logLevel (its place since v1alpha1 0.1.0)")
			} else if *o.LogLevel != *ct.FluxLogLevel {
				c.note(p+".fluxLogLevel", "dropped: spec.flux.logLevel (%d) is set and wins", *o.LogLevel)
			}
		}
	}
}

// viewless makes the image's own Flux run the brokers, as in v1alpha1,
// whose images had to contain Flux: v1alpha2 otherwise copies Flux in from
// a view image, which must match the image's OS.
func (c *converter) viewless(runner int) {
	if runner < 0 {
		return
	}
	fc := &c.out.Spec.Flux.Container
	fc.Disable = true
	fc.Image = c.out.Spec.Containers[runner].Image
	img := fc.Image
	if img == "" {
		img = v1alpha2.DefaultImage
		fc.Image = img
	}
	c.note("spec.flux.container", "set disable: true and image: %s: a v1alpha1 image brings its own Flux, so the brokers run it (the init container, from the same image, only writes the configuration); to take Flux from a Flux view instead, remove both and pick a view image that matches the image's OS", img)
}

// headless warns about commands that name the v1alpha1 default headless
// Service: v1alpha2's default is the MiniCluster's name.
func (c *converter) headless() {
	if c.out.Spec.Network.HeadlessName != "" {
		return
	}
	ns := c.out.Namespace
	if ns == "" {
		ns = "<namespace>"
	}
	check := func(path, s string) {
		if strings.Contains(s, headlessV1alpha1) {
			c.note(path, "mentions %s, the v1alpha1 default of spec.network.headlessName: in v1alpha2 the pods' subdomain defaults to the MiniCluster's name (%s-0.%s.%s.svc.cluster.local): change it, or set spec.network.headlessName: %s", headlessV1alpha1, c.out.Name, c.out.Name, ns, headlessV1alpha1)
		}
	}
	for i, ct := range c.in.Spec.Containers {
		p := fmt.Sprintf("spec.containers[%d]", i)
		check(p+".command", ct.Command)
		check(p+".preCommand", ct.PreCommand)
		if cm := ct.Commands; cm != nil {
			for _, h := range []struct{ name, v string }{{"init", cm.Init}, {"pre", cm.Pre}, {"post", cm.Post}, {"brokerPre", cm.BrokerPre}, {"workerPre", cm.WorkerPre}, {"prefix", cm.Prefix}} {
				check(p+".commands."+h.name, h.v)
			}
		}
	}
}

// runnerIndex is the Flux runner's index: the container with runFlux, or
// the only one; -1 if there is none or more than one (the v1alpha2 schema
// then says what is wrong).
func runnerIndex(cs []v1alpha1Container) int {
	if len(cs) == 1 {
		return 0
	}
	found := -1
	for i, ct := range cs {
		if ct.RunFlux {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func (c *converter) container(ct *v1alpha1Container, path string, runner bool) v1alpha2.MiniClusterContainer {
	o := v1alpha2.MiniClusterContainer{
		Name:            ct.Name,
		Image:           ct.Image,
		ImagePullSecret: ct.ImagePullSecret,
		PullAlways:      ct.PullAlways,
		WorkingDir:      ct.WorkingDir,
		Command:         ct.Command,
		RunFlux:         ct.RunFlux,
		Launcher:        ct.Launcher,
		Batch:           ct.Batch,
		BatchRaw:        ct.BatchRaw,
		Logs:            ct.Logs,
		Ports:           ct.Ports,
		Environment:     ct.Environment,
		Secrets:         ct.Secrets,
	}
	if ct.LifeCycle != nil {
		o.LifeCycle = *ct.LifeCycle
	}
	if ct.Resources != nil {
		o.Resources = *ct.Resources
	}
	if sc := ct.SecurityContext; sc != nil {
		o.SecurityContext.Privileged = sc.Privileged
		o.SecurityContext.AddCapabilities = sc.AddCapabilities
	}
	if cm := ct.Commands; cm != nil {
		o.Commands = v1alpha2.Commands{Prefix: cm.Prefix, Init: cm.Init, Pre: cm.Pre, Post: cm.Post, WorkerPre: cm.WorkerPre, BrokerPre: cm.BrokerPre}
		if cm.RunFluxAsRoot != nil {
			c.note(path+".commands.runFluxAsRoot", "no v1alpha2 field: Flux runs as the container's own user (root unless the image or securityContext.runAsUser says otherwise), with no sudo and no flux user; dropped")
		}
	}
	if ct.PreCommand != "" {
		o.Commands.Pre = joinHooks(ct.PreCommand, o.Commands.Pre)
		c.note(path+".preCommand", "moved to commands.pre (before any commands.pre): it ran just before commands.pre on every broker pod (the certificate generator it also ran in is gone); if it sets up what flux itself needs (PATH, LD_LIBRARY_PATH), move it to commands.init, which runs before Flux is set up; lines setting asFlux do nothing now")
	}
	if ct.Cores != nil {
		c.note(path+".cores", "no v1alpha2 field: each broker's resources are encoded from its pod's own hardware (flux R encode --local), not from a core count; to give Flux fewer cores, give the pods fewer (Guaranteed resources with the static CPU manager policy); dropped")
	}
	if ct.Diagnostics != nil && !*ct.Diagnostics {
		c.note(path+".diagnostics", "no v1alpha2 field, and false is what v1alpha2 does: dropped")
	}
	if ct.Diagnostics != nil && *ct.Diagnostics {
		msg := "no v1alpha2 field: run the diagnostics yourself in the lead pod (kubectl exec ... -- flux proxy local:///mnt/flux/config/run/flux/local flux overlay status, flux lsattr -v, flux dmesg)"
		if runner && ct.Command == "" {
			msg += "; the claim sets spec.interactive: true so that the cluster stays up, as diagnostics' sleep infinity did"
		} else if runner {
			msg += "; the command now runs, where v1alpha1 ran the diagnostics instead"
		}
		c.note(path+".diagnostics", "%s", msg)
	}
	if ct.FluxUser != nil {
		msg := "no v1alpha2 field: Flux runs as the container's own user, with no sudo and no adduser"
		if ct.FluxUser.UID != nil {
			msg += fmt.Sprintf("; to run it as uid %d, set securityContext.runAsUser: %d (the hooks then run as that user too)", *ct.FluxUser.UID, *ct.FluxUser.UID)
		}
		c.note(path+".fluxUser", "%s; dropped", msg)
	}
	for _, k := range v1alpha2.SortedKeys(ct.ExistingVolumes) {
		v := ct.ExistingVolumes[k]
		if o.Volumes == nil {
			o.Volumes = map[string]v1alpha2.ContainerVolume{}
		}
		o.Volumes[k] = v1alpha2.ContainerVolume{Path: v.Path, ConfigMapName: v.ConfigMapName, Items: v.Items, ClaimName: v.ClaimName, SecretName: v.SecretName, ReadOnly: v.ReadOnly}
	}
	return o
}

// joinHooks runs a before b in one hook.
func joinHooks(a, b string) string {
	switch {
	case strings.TrimSpace(b) == "":
		return a
	case strings.TrimSpace(a) == "":
		return b
	}
	return strings.TrimRight(a, "\n") + "\n" + b
}
