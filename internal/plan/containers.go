package plan

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Names of what the MiniCluster itself puts in every broker pod; a user's
// container or volume must not take them.
const (
	VolumeSoftware   = "spack-software"
	VolumeHome       = "flux-operator-home"
	VolumeEntrypoint = "flux-entrypoint"
	VolumeCurveCert  = "flux-curve-cert"
)

// checkContainers checks the containers of the broker pods and of the
// services Pod against the pod they become.
func checkContainers(mc *v1alpha2.MiniCluster, q quantities) field.ErrorList {
	s := &mc.Spec
	var errs field.ErrorList
	// The runner's container is named after the MiniCluster and the init
	// container after flux.container.name: other containers must not take them.
	errs = append(errs, checkContainerList(v1alpha2.Containers(s.Containers), field.NewPath("spec", "containers"), false, q, map[string]string{
		mc.Name:               "the Flux runner's container, which is named after the MiniCluster",
		s.Flux.Container.Name: "the Flux init container (spec.flux.container.name)",
	})...)
	errs = append(errs, checkContainerList(v1alpha2.Containers(s.Services), field.NewPath("spec", "services"), true, q, nil)...)
	switch n := s.Flux.Container.Name; {
	case n == mc.Name:
		errs = append(errs, field.Invalid(field.NewPath("spec", "flux", "container", "name"), n, "is the MiniCluster's name, which the Flux runner's container takes: choose another name for the init container"))
	case systemVolumes[n]:
		// It also names the view's volume.
		errs = append(errs, field.Invalid(field.NewPath("spec", "flux", "container", "name"), n, "names the Flux view's volume too, and the MiniCluster already has a volume of this name: choose another name, such as flux-view"))
	}
	errs = append(errs, q.check(s.Flux.Container.Resources, viewResourcesPath)...)
	errs = append(errs, checkSecurityContext(s.Flux.Container.SecurityContext, field.NewPath("spec", "flux", "container", "securityContext"))...)
	errs = append(errs, checkImage(s.Flux.Container.Image, field.NewPath("spec", "flux", "container", "image"))...)
	return errs
}

// checkContainerList checks the containers of one pod. The schema holds
// what only services must (or must not) set, on v1alpha2.ServiceContainer.
func checkContainerList(cs []*v1alpha2.MiniClusterContainer, p *field.Path, services bool, q quantities, reserved map[string]string) field.ErrorList {
	var errs field.ErrorList
	names := map[string]string{}
	// podPorts are the ports declared so far by containers of the pod.
	podPorts := map[int32]string{}
	for k, v := range reserved {
		if k != "" {
			names[k] = v
		}
	}
	for i, c := range cs {
		cp := p.Index(i)
		switch {
		case c.Name == "" && !services && !c.RunFlux:
			errs = append(errs, field.Required(cp.Child("name"), "a container that does not run Flux needs a name"))
		case c.Name != "" && !c.RunFlux:
			// The runner's own name is not used: its container takes the
			// MiniCluster's.
			if prev, ok := names[c.Name]; ok {
				errs = append(errs, duplicate(cp.Child("name"), c.Name, "already the name of "+prev+": containers of a pod need distinct names"))
			}
			names[c.Name] = cp.String()
		}
		if c.NoWrapEntrypoint && c.RunFlux {
			errs = append(errs, field.Forbidden(cp.Child("noWrapEntrypoint"), "the Flux runner always runs the generated entrypoint"))
		}
		seen := map[int32]bool{}
		for j, port := range c.Ports {
			pp := cp.Child("ports").Index(j)
			// A port listed twice in one container is the schema's rule
			// (listType=set).
			switch prev, taken := podPorts[port]; {
			case taken:
				errs = append(errs, duplicate(pp, port, "is also a port of "+prev+": the containers of a pod share one network, so only one of them can listen on it"))
			case !services && !c.RunFlux && port == v1alpha2.BrokerPort:
				errs = append(errs, field.Invalid(pp, port, fmt.Sprintf("is the Flux broker's port (%d) in every broker pod, whose containers share one network: the broker and this container cannot both listen on it", v1alpha2.BrokerPort)))
			}
			seen[port] = true
		}
		for port := range seen {
			if _, ok := podPorts[port]; !ok {
				podPorts[port] = cp.String()
			}
		}
		errs = append(errs, checkImage(c.Image, cp.Child("image"))...)
		for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
			for _, msg := range validation.IsEnvVarName(k) {
				errs = append(errs, field.Invalid(cp.Child("environment").Key(k), k, "must be an environment variable name: "+msg))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(c.Secrets)) {
			sec := c.Secrets[k]
			sp := cp.Child("secrets").Key(k)
			for _, msg := range validation.IsEnvVarName(k) {
				errs = append(errs, field.Invalid(sp, k, "must be an environment variable name: "+msg))
			}
			if _, ok := c.Environment[k]; ok {
				errs = append(errs, duplicate(sp, k, "is also set in environment: set the variable in one place"))
			}
			// The schema requires a name and a key, and checks the name.
			if sec.Key != "" {
				for _, msg := range validation.IsConfigMapKey(sec.Key) {
					errs = append(errs, field.Invalid(sp.Child("key"), sec.Key, "must be a key of a Secret: "+msg))
				}
			}
		}
		errs = append(errs, q.check(c.Resources, cp.Child("resources"))...)
		errs = append(errs, checkSecurityContext(c.SecurityContext, cp.Child("securityContext"))...)
	}
	return errs
}

// checkImage applies the kubelet's rule: it parses every image as a Docker
// reference and leaves a pod whose image is not one waiting forever
// (InvalidImageName), so the brokers would never start. The schema gives the
// image a default, so it is never empty, and refuses surrounding whitespace
// (the API server's rule).
func checkImage(image string, p *field.Path) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(p, "name the container image")}
	}
	if msg := imageReferenceError(image); msg != "" {
		return field.ErrorList{field.Invalid(p, image, "is not an image reference the kubelet can pull ("+msg+"): write [registry/]repository[:tag][@digest] with a lowercase repository, such as ghcr.io/org/image:1.0")}
	}
	return nil
}

// imageReferenceError says why image is not a reference the kubelet
// parses (with github.com/distribution/reference's ParseNormalizedNamed,
// as here), or returns "".
func imageReferenceError(image string) string {
	_, err := reference.ParseNormalizedNamed(image)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, reference.ErrNameTooLong):
		return fmt.Sprintf("the name has more than %d characters", reference.RepositoryNameTotalLengthMax)
	case errors.Is(err, digest.ErrDigestInvalidFormat), errors.Is(err, digest.ErrDigestInvalidLength), errors.Is(err, digest.ErrDigestUnsupported):
		return "the digest must be sha256:, sha384: or sha512: followed by its lowercase hexadecimal value"
	default:
		return "only lowercase letters, digits and separators in the repository, an optional tag after ':' and digest after '@'"
	}
}

func checkSecurityContext(sc v1alpha2.SecurityContext, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// Capability names are the schema's (v1alpha2.Capability).
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		// Kubernetes refuses the pair: SYS_ADMIN is privilege enough to
		// undo no_new_privs. (privileged with it is the schema's rule.)
		for _, a := range AddedCapabilities(sc) {
			if strings.EqualFold(string(a), "SYS_ADMIN") {
				errs = append(errs, field.Invalid(p.Child("allowPrivilegeEscalation"), false, "cannot be false while the container adds SYS_ADMIN, which can escalate privileges: drop SYS_ADMIN, or allowPrivilegeEscalation: false"))
				break
			}
		}
	}
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		errs = append(errs, field.Invalid(p.Child("runAsUser"), 0, "runAsNonRoot is set, and the kubelet refuses to start a container as uid 0: run as another uid, or drop runAsNonRoot"))
	}
	errs = append(errs, checkProfiles(sc.SeccompProfile, sc.AppArmorProfile, p)...)
	return errs
}

// checkProfiles applies the API server's rules for Localhost profiles
// (pkg/apis/core/validation: validateSeccompProfileField and
// ValidateAppArmorProfileField) to a container's or the pod's
// securityContext at p. It refuses the Job and the services Pod otherwise,
// while the MiniCluster would say Valid=True.
//
// A seccomp localhostProfile is a file under the kubelet's seccomp
// directory: the API server refuses an absolute path and any '..' element
// (split at '/', as it splits). An AppArmor localhostProfile is the name
// of a profile loaded on the node, not a path: '/' and '..' are fine
// there, and the API server refuses only a name padded with whitespace.
// The schema already requires both to be non-empty with type Localhost and
// bounds their length; a composite that skipped it is still refused here.
func checkProfiles(seccomp *v1alpha2.SeccompProfile, apparmor *v1alpha2.AppArmorProfile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if seccomp != nil && seccomp.Type == string(corev1.SeccompProfileTypeLocalhost) {
		fp := p.Child("seccompProfile", "localhostProfile")
		switch lp := seccomp.LocalhostProfile; {
		case lp == nil || *lp == "":
			errs = append(errs, field.Required(fp, "type Localhost needs the profile's file, relative to the kubelet's seccomp directory (<kubelet root>/seccomp), such as profiles/flux.json: name it, or use type RuntimeDefault"))
		case path.IsAbs(*lp):
			errs = append(errs, field.Invalid(fp, *lp, "must be a relative path: the kubelet reads it under its seccomp directory (<kubelet root>/seccomp), and the API server refuses an absolute path; name the file relative to that directory, such as profiles/flux.json"))
		case hasDotDot(*lp):
			errs = append(errs, field.Invalid(fp, *lp, "must not contain '..': the kubelet reads the profile under its seccomp directory (<kubelet root>/seccomp), and the API server refuses a path that could leave it; name a file under that directory, such as profiles/flux.json"))
		}
	}
	if apparmor != nil && apparmor.Type == string(corev1.AppArmorProfileTypeLocalhost) {
		fp := p.Child("appArmorProfile", "localhostProfile")
		switch lp := apparmor.LocalhostProfile; {
		case lp == nil || strings.TrimSpace(*lp) == "":
			errs = append(errs, field.Required(fp, "type Localhost needs the name of an AppArmor profile loaded on the node: name it, or use type RuntimeDefault"))
		case strings.TrimSpace(*lp) != *lp:
			errs = append(errs, field.Invalid(fp, *lp, "must not be padded with whitespace, which the API server refuses: remove the spaces around the profile's name"))
		}
	}
	return errs
}

// AddedCapabilities are the capabilities a container adds, under either
// spelling (addCapabilities, capabilities.add), each once, in order.
func AddedCapabilities(sc v1alpha2.SecurityContext) []v1alpha2.Capability {
	var out []v1alpha2.Capability
	seen := map[v1alpha2.Capability]bool{}
	add := func(cs []v1alpha2.Capability) {
		for _, c := range cs {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	add(sc.AddCapabilities)
	if sc.Capabilities != nil {
		add(sc.Capabilities.Add)
	}
	return out
}

// standardContainerResources are the resource names without a domain that
// Kubernetes accepts for containers (hugepages-<size> aside).
var standardContainerResources = map[string]bool{"cpu": true, "memory": true, "ephemeral-storage": true}

// quantities are the containers' resources, parsed once by the checks and
// rendered as parsed, keyed by the path of the resources field
// (spec.containers[0].resources).
type quantities map[string]corev1.ResourceRequirements

// Paths of the resources fields, the keys of quantities.
var (
	containersPath    = field.NewPath("spec", "containers")
	servicesPath      = field.NewPath("spec", "services")
	viewResourcesPath = field.NewPath("spec", "flux", "container", "resources")
)

// check checks the resources r of the field p and keeps what parses.
func (q quantities) check(r v1alpha2.ContainerResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limits, e := checkResourceList(r.Limits, p.Child("limits"))
	errs = append(errs, e...)
	requests, e := checkResourceList(r.Requests, p.Child("requests"))
	errs = append(errs, e...)
	q[p.String()] = corev1.ResourceRequirements{Limits: resourceList(limits), Requests: resourceList(requests)}
	hugePages, cpuOrMemory := false, false
	for _, rl := range []map[string]resource.Quantity{limits, requests} {
		for k := range rl {
			hugePages = hugePages || strings.HasPrefix(k, "hugepages-")
			cpuOrMemory = cpuOrMemory || k == "cpu" || k == "memory"
		}
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(p, "huge pages need a cpu or memory request or limit in the same container: Kubernetes refuses them alone"))
	}
	for _, k := range slices.Sorted(maps.Keys(requests)) {
		req := requests[k]
		lim, ok := limits[k]
		switch {
		case !ok && (isExtended(k) || strings.HasPrefix(k, "hugepages-")):
			errs = append(errs, field.Invalid(p.Child("requests").Key(k), req.String(), fmt.Sprintf("needs a limit: Kubernetes does not overcommit %s, so set limits[%s] to the same value", k, k)))
		case ok && req.Cmp(lim) > 0:
			errs = append(errs, field.Invalid(p.Child("requests").Key(k), req.String(), fmt.Sprintf("must be less than or equal to the %s limit (%s)", k, lim.String())))
		case (isExtended(k) || strings.HasPrefix(k, "hugepages-")) && req.Cmp(lim) != 0:
			errs = append(errs, field.Invalid(p.Child("requests").Key(k), req.String(), "must equal its limit: Kubernetes does not overcommit extended resources such as GPUs, nor huge pages"))
		}
	}
	return errs
}

// resourceList is a parsed list as Kubernetes types it, nil when empty (as
// a container that sets none renders).
func resourceList(parsed map[string]resource.Quantity) corev1.ResourceList {
	if len(parsed) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(parsed))
	for k, v := range parsed {
		out[corev1.ResourceName(k)] = v
	}
	return out
}

// ContainerResources are the resources of spec.containers[i], parsed.
func (p *Plan) ContainerResources(i int) corev1.ResourceRequirements {
	return p.quantities[containersPath.Index(i).Child("resources").String()]
}

// ServiceResources are the resources of spec.services[i], parsed.
func (p *Plan) ServiceResources(i int) corev1.ResourceRequirements {
	return p.quantities[servicesPath.Index(i).Child("resources").String()]
}

// ViewResources are the resources of the Flux view's init container
// (spec.flux.container.resources), parsed.
func (p *Plan) ViewResources() corev1.ResourceRequirements {
	return p.quantities[viewResourcesPath.String()]
}

func isExtended(name string) bool {
	return strings.Contains(name, "/") && !strings.HasPrefix(name, "kubernetes.io/") && !strings.Contains(name, "kubernetes.io/")
}

// checkResourceList checks names and quantities as Kubernetes does for a
// container, and returns the parsed quantities.
func checkResourceList(rl v1alpha2.ContainerResource, p *field.Path) (map[string]resource.Quantity, field.ErrorList) {
	var errs field.ErrorList
	out := map[string]resource.Quantity{}
	for _, k := range slices.Sorted(maps.Keys(rl)) {
		kp := p.Key(k)
		switch {
		case strings.Contains(k, "/"):
			msgs := validation.IsQualifiedName(k)
			switch {
			case len(msgs) > 0 || !isExtended(k):
			case strings.HasPrefix(k, "requests."):
				// Kubernetes' IsExtendedResourceName: requests.<name> is
				// the quota of <name>, never a resource of its own.
				msgs = []string{"must not start with requests., which Kubernetes keeps for the quotas of resources"}
			default:
				// The quota's name requests.<name> must be qualified too.
				msgs = validation.IsQualifiedName("requests." + k)
			}
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(kp, k, "must be a resource name such as cpu, memory or vendor.example/gpu: "+msg))
			}
		case !standardContainerResources[k] && !strings.HasPrefix(k, "hugepages-"):
			errs = append(errs, field.NotSupported(kp, k, []string{"cpu", "memory", "ephemeral-storage", "hugepages-<size>", "<domain>/<name>"}))
			continue
		}
		v := rl[k]
		q, err := resource.ParseQuantity(v.String())
		if err != nil || q.Sign() < 0 {
			errs = append(errs, field.Invalid(kp, v.String(), "must be a non-negative quantity such as 4, 500m or 2Gi"))
			continue
		}
		if size, ok := strings.CutPrefix(k, "hugepages-"); ok {
			page, err := resource.ParseQuantity(size)
			switch {
			case err != nil || page.Sign() <= 0:
				errs = append(errs, field.Invalid(kp, k, "must name a huge page size such as hugepages-2Mi or hugepages-1Gi"))
			case q.MilliValue()%1000 != 0 || q.Value()%page.Value() != 0:
				errs = append(errs, field.Invalid(kp, v.String(), "must be a whole multiple of the page size "+size+", such as "+page.String()))
			}
		}
		if isExtended(k) && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(kp, v.String(), "must be a whole number: extended resources such as GPUs are not divisible"))
		}
		out[k] = q
	}
	return out, errs
}

// duplicate is field.Duplicate with a detail saying what to do.
func duplicate(p *field.Path, value any, detail string) *field.Error {
	e := field.Duplicate(p, value)
	e.Detail = detail
	return e
}
