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
		o.Services = append(o.Services, v1alpha2.ServiceContainer{MiniClusterContainer: c.container(&s.Services[i], fmt.Sprintf("spec.services[%d]", i), false)})
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
