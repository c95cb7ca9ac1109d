package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Names of a MiniCluster's composed objects. They are derived once, here,
// and checked with the rules Kubernetes applies to each kind.
type Names struct {
	// Job is the Indexed Job; its pods' hostnames are <Job>-<index>.
	Job string
	// Service is the broker Service and the pods' subdomain.
	Service string
	// Entrypoint is the ConfigMap of broker.toml and the scripts.
	Entrypoint string
	// CurveSecret holds the CURVE certificate (the claim's own, or
	// <name>-curve-cert).
	CurveSecret string
	// LeadBroker is the NodePort Service of a burst root.
	LeadBroker string
	// ServicesPod runs spec.services.
	ServicesPod string
	// Selector selects the broker pods, for the scale subresource.
	Selector string
	// PodGroup is the brokers' gang: the PodGroup and its Workload.
	PodGroup string
}

// Label keys of the broker pods.
const (
	LabelApp       = "app"
	LabelName      = "app.kubernetes.io/name"
	LabelSelector  = "hpa-selector"
	LabelNamespace = "namespace"
	LabelJobName   = "job-name"
	// LabelCompletionIndex is set on Indexed Job pods by Kubernetes (1.28+);
	// it replaces upstream's job-index label patching, which a function
	// cannot do.
	LabelCompletionIndex = "batch.kubernetes.io/job-completion-index"
)

func names(mc *v1alpha2.MiniCluster) Names {
	n := Names{
		Job:         mc.Name,
		Service:     mc.Spec.Network.HeadlessName,
		Entrypoint:  mc.Name + "-entrypoint",
		CurveSecret: CurveSecretOf(mc.Name),
		LeadBroker:  mc.Name + "-lead-broker",
		ServicesPod: mc.Name + "-services",
		Selector:    LabelSelector + "=" + mc.Name,
		PodGroup:    mc.Name,
	}
	if n.Service == "" {
		n.Service = mc.Name
	}
	if s := mc.Spec.Flux.CurveCertSecret; s != "" {
		n.CurveSecret = s
	}
	return n
}

// CurveSecretOf is the certificate Secret the function composes for the
// MiniCluster named name (when it names none of its own), which the burst
// controller also gives its copy for a burst MiniCluster of that name.
func CurveSecretOf(name string) string { return name + "-curve-cert" }

// NamesOf returns the names of mc's objects without checking anything, for
// readers of objects a plan composed earlier (status, the burst controller).
func NamesOf(mc *v1alpha2.MiniCluster) Names { return names(mc) }

// ComposesLeadBroker tells whether mc is the root of a burst, which exposes
// its lead broker on a NodePort.
func ComposesLeadBroker(mc *v1alpha2.MiniCluster) bool {
	b := &mc.Spec.Flux.Bursting
	return len(b.Clusters) > 0 && b.LeadBroker == nil
}

// ContainerServices are the non-runner containers with ports, each of which
// gets a ClusterIP Service named after it.
func ContainerServices(mc *v1alpha2.MiniCluster) []int {
	var out []int
	for i, c := range mc.Spec.Containers {
		if !c.RunFlux && len(c.Ports) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// checkNames checks every name and hostname the MiniCluster derives.
func checkNames(mc *v1alpha2.MiniCluster, p *Plan) field.ErrorList {
	var errs field.ErrorList
	namePath := field.NewPath("metadata", "name")
	if mc.Name == "" {
		return field.ErrorList{field.Required(namePath, "a MiniCluster needs a name: its pods are named <name>-<index>")}
	}
	n := p.Names
	// The Job's name is its pods' hostname prefix and the value of their
	// job-name label: a DNS label of at most 63 characters with the index.
	for _, msg := range validation.IsDNS1123Label(mc.Name) {
		errs = append(errs, field.Invalid(namePath, mc.Name, "names the Job and its pods: "+msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if host := fmt.Sprintf("%s-%d", mc.Name, p.MaximumSize-1); len(host) > validation.DNS1123LabelMaxLength {
		errs = append(errs, field.Invalid(namePath, mc.Name, fmt.Sprintf("is too long: the hostname of the last pod, %q, would have more than %d characters; use a name of at most %d characters", host, validation.DNS1123LabelMaxLength, validation.DNS1123LabelMaxLength-len(host)+len(mc.Name))))
	}

	// Services need DNS-1035 labels (starting with a letter).
	services := map[string]string{}
	service := func(name string, p *field.Path, what string) {
		if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
			detail := fmt.Sprintf("names the %s %q, and Service names must start with a letter and have at most 63 characters (%s)", what, name, strings.Join(msgs, "; "))
			errs = append(errs, field.Invalid(p, fieldValue(p, mc, name), detail+": "+fixFor(p, mc, name)))
			return
		}
		if prev, ok := services[name]; ok {
			errs = append(errs, field.Duplicate(p, name))
			errs[len(errs)-1].Detail = fmt.Sprintf("the %s would be named %q, like the %s: give one of them another name", what, name, prev)
			return
		}
		services[name] = what
	}
	hlPath := field.NewPath("spec", "network", "headlessName")
	if mc.Spec.Network.HeadlessName == "" || mc.Spec.Network.HeadlessName == mc.Name {
		hlPath = namePath
	}
	service(n.Service, hlPath, "broker Service")
	if ComposesLeadBroker(mc) {
		service(n.LeadBroker, namePath, "lead broker's NodePort Service")
	}
	for _, i := range ContainerServices(mc) {
		c := &mc.Spec.Containers[i]
		service(c.Name, field.NewPath("spec", "containers").Index(i).Child("name"), "Service of this container's ports")
	}

	// The services Pod's hostname is its name.
	if len(mc.Spec.Services) > 0 {
		if msgs := validation.IsDNS1123Label(n.ServicesPod); len(msgs) > 0 {
			errs = append(errs, field.Invalid(namePath, mc.Name, fmt.Sprintf("is too long for spec.services: the services Pod %q is also its hostname, a DNS label (%s); use a shorter name", n.ServicesPod, strings.Join(msgs, "; "))))
		}
	}
	return errs
}

// fixFor says how to change the field a derived Service name comes from.
func fixFor(p *field.Path, mc *v1alpha2.MiniCluster, derived string) string {
	switch p.String() {
	case "metadata.name":
		if suffix := len(derived) - len(mc.Name); suffix > 0 {
			// A Service named <name><suffix>: headlessName does not name it.
			return fmt.Sprintf("use a name that starts with a letter and has at most %d characters", validation.DNS1035LabelMaxLength-suffix)
		}
		return "use a name that starts with a letter and is short enough, or set spec.network.headlessName"
	case "spec.network.headlessName":
		return "choose a headlessName that starts with a letter"
	default:
		return "rename the container"
	}
}

func fieldValue(p *field.Path, mc *v1alpha2.MiniCluster, derived string) string {
	if p.String() == "metadata.name" {
		return mc.Name
	}
	return derived
}
