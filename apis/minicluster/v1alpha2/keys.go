package v1alpha2

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	// Flux Standard Duration: a number with an optional unit.
	fsdRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ms|s|m|h|d)?$`)
	// Topologies flux-broker accepts for tbon.topo.
	topologyRE = regexp.MustCompile(`^(kary:[0-9]+|binomial|mincrit(:[0-9]+)?|custom)$`)
	// flux.environment lands in `export K=V` lines of a shell script.
	shellNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	mountPathRE = regexp.MustCompile(`^/[A-Za-z0-9._/-]*$`)
)

// Validate returns every problem of a defaulted MiniCluster, each naming the
// field and what to do. It checks what the XRD's schema and CEL rules check
// (so render and upstream YAML get the same answers) plus what only the
// whole object can tell, such as hostnames that would be too long.
func Validate(mc *MiniCluster) field.ErrorList {
	var errs field.ErrorList
	s := &mc.Spec
	spec := field.NewPath("spec")

	errs = append(errs, validateName(mc)...)

	size := s.SizeValue()
	if size < 1 {
		errs = append(errs, field.Invalid(spec.Child("size"), size, "must be at least 1: a MiniCluster needs one pod for its lead broker"))
	}
	if s.MaxSize < 0 {
		errs = append(errs, field.Invalid(spec.Child("maxSize"), s.MaxSize, "must not be negative"))
	} else if s.MaxSize != 0 && s.MaxSize < size {
		errs = append(errs, field.Invalid(spec.Child("maxSize"), s.MaxSize, fmt.Sprintf("must be at least spec.size (%d): raise maxSize or lower size", size)))
	}
	if s.MinSize < 0 {
		errs = append(errs, field.Invalid(spec.Child("minSize"), s.MinSize, "must not be negative"))
	} else if s.MinSize != 0 && s.MinSize > size {
		errs = append(errs, field.Invalid(spec.Child("minSize"), s.MinSize, fmt.Sprintf("must not exceed spec.size (%d): it is the number of brokers Flux waits for before starting", size)))
	} else if s.MaxSize > 0 && s.MinSize > s.MaxSize {
		errs = append(errs, field.Invalid(spec.Child("minSize"), s.MinSize, "must not exceed spec.maxSize"))
	}
	if s.BackoffLimit != nil && *s.BackoffLimit < 0 {
		errs = append(errs, field.Invalid(spec.Child("backoffLimit"), *s.BackoffLimit, "must not be negative"))
	}
	if s.Tasks != nil && *s.Tasks < 0 {
		errs = append(errs, field.Invalid(spec.Child("tasks"), *s.Tasks, "must not be negative (0 means one task per node)"))
	}
	if s.DeadlineSeconds != nil && *s.DeadlineSeconds < 1 {
		errs = append(errs, field.Invalid(spec.Child("deadlineSeconds"), *s.DeadlineSeconds, "must be at least 1: the Job would never start"))
	}
	if hl := s.Network.HeadlessName; hl != "" {
		// It names a Service, whose names must start with a letter.
		for _, msg := range validation.IsDNS1035Label(hl) {
			errs = append(errs, field.Invalid(spec.Child("network", "headlessName"), hl, "names the cluster's Service (defaults to metadata.name): "+msg))
		}
	}

	// The runner's container is named after the MiniCluster and the init
	// container after flux.container.name: other containers must not take them.
	errs = append(errs, validateContainers(s.Containers, spec.Child("containers"), false, map[string]string{
		mc.Name:               "the Flux runner's container, which is named after the MiniCluster",
		s.Flux.Container.Name: "the Flux init container (spec.flux.container.name)",
	})...)
	errs = append(errs, validateContainers(s.Services, spec.Child("services"), true, nil)...)
	errs = append(errs, validateRunners(s.Containers, spec.Child("containers"))...)
	errs = append(errs, validateVolumes(s.Containers, spec.Child("containers"))...)
	errs = append(errs, validateVolumes(s.Services, spec.Child("services"))...)
	errs = append(errs, validateFlux(mc, spec.Child("flux"))...)
	errs = append(errs, validatePod(&s.Pod, spec.Child("pod"))...)
	return errs
}

// validateName checks the name against what Kubernetes derives from it: pod
// hostnames <name>-<index> are DNS labels and the Job's name lands in the
// job-name label.
func validateName(mc *MiniCluster) field.ErrorList {
	p := field.NewPath("metadata", "name")
	if mc.Name == "" {
		return field.ErrorList{field.Required(p, "a MiniCluster needs a name: its pods are named <name>-<index>")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(mc.Name) {
		errs = append(errs, field.Invalid(p, mc.Name, msg))
	}
	max := mc.Spec.CreationMaximum()
	if host := fmt.Sprintf("%s-%d", mc.Name, max-1); len(host) > validation.DNS1123LabelMaxLength {
		errs = append(errs, field.Invalid(p, mc.Name, fmt.Sprintf("is too long: pod hostname %q would exceed %d characters; use a shorter name", host, validation.DNS1123LabelMaxLength)))
	}
	return errs
}

func validateRunners(cs []MiniClusterContainer, p *field.Path) field.ErrorList {
	if len(cs) == 0 {
		return nil
	}
	var runners []string
	for i := range cs {
		if cs[i].RunFlux {
			runners = append(runners, p.Index(i).String())
		}
	}
	switch len(runners) {
	case 1:
		return nil
	case 0:
		return field.ErrorList{field.Invalid(p, "", "exactly one container must set runFlux: true (the container that runs the Flux broker); none does")}
	default:
		return field.ErrorList{field.Invalid(p, strings.Join(runners, ", "), fmt.Sprintf("exactly one container must set runFlux: true; %d do (%s): keep runFlux on one of them", len(runners), strings.Join(runners, ", ")))}
	}
}

func validateContainers(cs []MiniClusterContainer, p *field.Path, services bool, reserved map[string]string) field.ErrorList {
	var errs field.ErrorList
	if !services && len(cs) == 0 {
		errs = append(errs, field.Required(p, "a MiniCluster needs at least one container: the one that runs Flux"))
	}
	names := map[string]string{}
	for k, v := range reserved {
		if k != "" {
			names[k] = v
		}
	}
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		switch {
		case c.Name == "" && (services || !c.RunFlux):
			what := "a container that does not run Flux"
			if services {
				what = "a service container"
			}
			errs = append(errs, field.Required(cp.Child("name"), what+" needs a name"))
		case c.Name != "":
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
			}
			// The runner's own name is not used (see above).
			if !c.RunFlux || services {
				if prev, ok := names[c.Name]; ok {
					errs = append(errs, duplicate(cp.Child("name"), c.Name, "already the name of "+prev+": containers of a pod need distinct names"))
				}
				names[c.Name] = cp.String()
				// A sidecar with ports gets a Service named after it.
				if !services && len(c.Ports) > 0 && len(validation.IsDNS1123Label(c.Name)) == 0 {
					for _, msg := range validation.IsDNS1035Label(c.Name) {
						errs = append(errs, field.Invalid(cp.Child("name"), c.Name, "names the Service of this container's ports: "+msg))
					}
				}
			}
		}
		if c.Launcher && c.Batch {
			errs = append(errs, field.Invalid(cp.Child("launcher"), true, "launcher and batch cannot both be set: choose one mode"))
		}
		if c.BatchRaw && !c.Batch {
			errs = append(errs, field.Invalid(cp.Child("batchRaw"), true, "batchRaw only applies to batch mode: set batch: true too"))
		}
		if c.Command != "" && c.Commands.Script != "" {
			errs = append(errs, field.Invalid(cp.Child("commands", "script"), "<script>", "command and commands.script cannot both be set: the script is the command"))
		}
		if services {
			// A slice, not a map: errors come out in the same order every time.
			for _, h := range []struct{ name, v string }{{"pre", c.Commands.Pre}, {"brokerPre", c.Commands.BrokerPre}, {"workerPre", c.Commands.WorkerPre}} {
				if h.v != "" {
					errs = append(errs, field.Forbidden(cp.Child("commands", h.name), "service containers run their image's own entrypoint: broker hooks do not apply"))
				}
			}
			if c.RunFlux {
				errs = append(errs, field.Forbidden(cp.Child("runFlux"), "service containers cannot run Flux: move this container to spec.containers"))
			}
		}
		if c.NoWrapEntrypoint && c.RunFlux {
			errs = append(errs, field.Forbidden(cp.Child("noWrapEntrypoint"), "the Flux runner always runs the generated entrypoint"))
		}
		seen := map[int32]bool{}
		for j, port := range c.Ports {
			if port < 1 || port > 65535 {
				errs = append(errs, field.Invalid(cp.Child("ports").Index(j), port, "must be a port number from 1 to 65535"))
			}
			if seen[port] {
				errs = append(errs, duplicate(cp.Child("ports").Index(j), port, "list each port once"))
			}
			seen[port] = true
		}
		for _, k := range sortedKeys(c.Environment) {
			for _, msg := range validation.IsEnvVarName(k) {
				errs = append(errs, field.Invalid(cp.Child("environment").Key(k), k, msg))
			}
		}
		for _, k := range sortedKeys(c.Secrets) {
			sec := c.Secrets[k]
			for _, msg := range validation.IsEnvVarName(k) {
				errs = append(errs, field.Invalid(cp.Child("secrets").Key(k), k, msg))
			}
			if sec.Name == "" {
				errs = append(errs, field.Required(cp.Child("secrets").Key(k).Child("name"), "name the Secret to read the variable from"))
			}
			if sec.Key == "" {
				errs = append(errs, field.Required(cp.Child("secrets").Key(k).Child("key"), "name the key of the Secret to read the variable from"))
			}
		}
		errs = append(errs, validateResources(c.Resources, cp.Child("resources"))...)
		if pol := c.ImagePullPolicy; pol != "" && pol != "Always" && pol != "IfNotPresent" && pol != "Never" {
			errs = append(errs, field.NotSupported(cp.Child("imagePullPolicy"), pol, []string{"Always", "IfNotPresent", "Never"}))
		}
	}
	return errs
}

func validateResources(r ContainerResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResourceList(r.Limits, p.Child("limits"))...)
	errs = append(errs, validateResourceList(r.Requests, p.Child("requests"))...)
	return errs
}

func validateResourceList(rl ContainerResource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(rl) {
		q := rl[k]
		// Kubernetes rejects negative requests and limits.
		if v, err := resource.ParseQuantity(q.String()); err != nil || v.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Key(k), q.String(), "must be a non-negative quantity such as 4, 500m or 2Gi"))
		}
	}
	return errs
}

// validateVolumes checks every volume of a container list. Volumes are
// shared by name across the pod, so one name must mean one source.
func validateVolumes(cs []MiniClusterContainer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := map[string]ContainerVolume{}
	for i := range cs {
		for _, name := range sortedKeys(cs[i].Volumes) {
			v := cs[i].Volumes[name]
			vp := p.Index(i).Child("volumes").Key(name)
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(vp, name, "volume names must be lowercase DNS labels: "+msg))
			}
			errs = append(errs, validateVolume(v, vp)...)
			if prev, ok := first[name]; ok && !sameSource(prev, v) {
				errs = append(errs, field.Invalid(vp, name, "another container declares a volume with this name and a different source: a pod has one volume per name, so give them different names or the same source"))
			}
			if _, ok := first[name]; !ok {
				first[name] = v
			}
		}
	}
	return errs
}

func validateVolume(v ContainerVolume, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	sources := 0
	for _, set := range []bool{v.CSIDriver != "", v.SecretName != "", v.EmptyDir, v.HostPath != "", v.ConfigMapName != "", v.ClaimName != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources == 0:
		errs = append(errs, field.Required(p, "a volume needs a source: set one of claimName, hostPath, configMapName, secretName, emptyDir or csiDriver (a path alone mounts nothing)"))
	case sources > 1:
		errs = append(errs, field.Invalid(p, "<volume>", "a volume has exactly one source: set only one of claimName, hostPath, configMapName, secretName, emptyDir or csiDriver"))
	}
	if v.Path == "" && !v.EmptyDir {
		errs = append(errs, field.Required(p.Child("path"), "set the path to mount the volume at"))
	}
	if v.Path != "" && !strings.HasPrefix(v.Path, "/") {
		errs = append(errs, field.Invalid(p.Child("path"), v.Path, "must be an absolute path"))
	}
	if v.HostPath != "" && !strings.HasPrefix(v.HostPath, "/") {
		errs = append(errs, field.Invalid(p.Child("hostPath"), v.HostPath, "must be an absolute path on the node"))
	}
	if v.EmptyDirMedium != "" && v.EmptyDirMedium != "memory" {
		errs = append(errs, field.NotSupported(p.Child("emptyDirMedium"), v.EmptyDirMedium, []string{"memory", ""}))
	}
	if v.EmptyDirSizeLimit != "" {
		if _, err := resource.ParseQuantity(v.EmptyDirSizeLimit); err != nil {
			errs = append(errs, field.Invalid(p.Child("emptyDirSizeLimit"), v.EmptyDirSizeLimit, "must be a quantity such as 64Mi or 1Gi"))
		}
	}
	if len(v.Items) > 0 && v.ConfigMapName == "" && v.SecretName == "" {
		errs = append(errs, field.Invalid(p.Child("items"), len(v.Items), "items only apply to configMapName or secretName volumes"))
	}
	for _, k := range sortedKeys(v.Items) {
		if path := v.Items[k]; path == "" || strings.HasPrefix(path, "/") || hasDotDot(path) {
			errs = append(errs, field.Invalid(p.Child("items").Key(k), path, "must be a relative path inside the volume, without '..'"))
		}
	}
	return errs
}

func sameSource(a, b ContainerVolume) bool {
	return a.HostPath == b.HostPath && a.ConfigMapName == b.ConfigMapName && a.ClaimName == b.ClaimName &&
		a.SecretName == b.SecretName && a.EmptyDir == b.EmptyDir && a.EmptyDirMedium == b.EmptyDirMedium &&
		a.EmptyDirSizeLimit == b.EmptyDirSizeLimit && a.CSIDriver == b.CSIDriver &&
		mapsEqual(a.Items, b.Items) && mapsEqual(a.CSIDriverAttributes, b.CSIDriverAttributes)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func validateFlux(mc *MiniCluster, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	f := &mc.Spec.Flux
	if f.ConnectTimeout != nil && *f.ConnectTimeout != "" && !fsdRE.MatchString(*f.ConnectTimeout) {
		errs = append(errs, field.Invalid(p.Child("connectTimeout"), *f.ConnectTimeout, `must be a Flux duration such as 5s, 500ms or 1m ("" keeps Flux's default)`))
	}
	if f.LogLevel != nil && (*f.LogLevel < 0 || *f.LogLevel > 7) {
		errs = append(errs, field.Invalid(p.Child("logLevel"), *f.LogLevel, "must be a syslog level from 0 to 7"))
	}
	if f.Topology != "" && !topologyRE.MatchString(f.Topology) {
		errs = append(errs, field.Invalid(p.Child("topology"), f.Topology, "must be kary:<k>, binomial, mincrit[:<k>] or custom"))
	}
	switch f.Scheduler.QueuePolicy {
	case "", "fcfs", "easy", "hybrid", "conservative":
	default:
		errs = append(errs, field.NotSupported(p.Child("scheduler", "queuePolicy"), f.Scheduler.QueuePolicy, []string{"fcfs", "easy", "hybrid", "conservative"}))
	}
	cp := p.Child("container")
	if mp := f.Container.MountPath; mp != "" && (!mountPathRE.MatchString(mp) || mp == "/" || hasDotDot(mp)) {
		errs = append(errs, field.Invalid(cp.Child("mountPath"), mp, "must be an absolute path of letters, digits, '.', '_', '-' and '/', other than /"))
	}
	if n := f.Container.Name; n != "" {
		for _, msg := range validation.IsDNS1123Label(n) {
			errs = append(errs, field.Invalid(cp.Child("name"), n, msg))
		}
		if n == mc.Name {
			errs = append(errs, field.Invalid(cp.Child("name"), n, "is the MiniCluster's name, which the Flux runner's container takes: choose another name for the init container"))
		}
	}
	errs = append(errs, validateResources(f.Container.Resources, cp.Child("resources"))...)
	for _, k := range sortedKeys(f.Environment) {
		if !shellNameRE.MatchString(k) {
			errs = append(errs, field.Invalid(p.Child("environment").Key(k), k, "must be a shell variable name (letters, digits and '_', not starting with a digit): it is exported in flux-view.sh"))
		}
	}
	if f.CurveCert != "" && f.CurveCertSecret != "" {
		errs = append(errs, field.Invalid(p.Child("curveCertSecret"), f.CurveCertSecret, "set either curveCert or curveCertSecret, not both"))
	}
	if f.CurveCertSecret != "" {
		for _, msg := range validation.IsDNS1123Subdomain(f.CurveCertSecret) {
			errs = append(errs, field.Invalid(p.Child("curveCertSecret"), f.CurveCertSecret, msg))
		}
	}
	errs = append(errs, validateBursting(mc, p.Child("bursting"))...)
	return errs
}

func validateBursting(mc *MiniCluster, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	b := &mc.Spec.Flux.Bursting
	if b.Hostlist != "" && len(b.Clusters) > 0 {
		errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, "set either hostlist or clusters, not both"))
	}
	if t := mc.Spec.Flux.Topology; t != "" && (len(b.Clusters) > 0 || b.LeadBroker != nil) {
		// In a tree a burst broker's parent may be a root rank other than 0,
		// which only rank 0's NodePort makes reachable from outside.
		errs = append(errs, field.Invalid(field.NewPath("spec", "flux", "topology"), t, "bursting works only with the flat default overlay: remove topology"))
	}
	// Every name gives hostnames <name>-<index>, which must be unique: the
	// root's (this MiniCluster, or leadBroker.name for a burst, which is
	// itself one of the clusters) and each cluster's.
	root := mc.Name
	if b.LeadBroker != nil {
		root = b.LeadBroker.Name
	}
	names := map[string]string{}
	if root != "" {
		names[root] = "the root MiniCluster's name"
	}
	for i, c := range b.Clusters {
		cp := p.Child("clusters").Index(i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
		}
		if prev, ok := names[c.Name]; ok {
			errs = append(errs, duplicate(cp.Child("name"), c.Name, "already "+prev+": each cluster needs its own name, as its hostnames <name>-<index> join one host list"))
		} else {
			names[c.Name] = "the name of " + cp.String()
		}
		if c.Size < 1 {
			errs = append(errs, field.Invalid(cp.Child("size"), c.Size, "must be at least 1"))
		}
	}
	if lb := b.LeadBroker; lb != nil {
		lp := p.Child("leadBroker")
		if lb.Address == "" {
			errs = append(errs, field.Required(lp.Child("address"), "the address (IP or DNS name) at which the root cluster's lead broker is reachable"))
		} else if len(validation.IsValidIP(lp.Child("address"), lb.Address)) > 0 && len(validation.IsDNS1123Subdomain(lb.Address)) > 0 {
			errs = append(errs, field.Invalid(lp.Child("address"), lb.Address, "must be an IP address or a DNS name"))
		}
		if lb.Name == "" {
			errs = append(errs, field.Required(lp.Child("name"), "the root MiniCluster's name (its pods are <name>-<index>)"))
		} else {
			for _, msg := range validation.IsDNS1123Label(lb.Name) {
				errs = append(errs, field.Invalid(lp.Child("name"), lb.Name, msg))
			}
		}
		if lb.Size < 1 {
			errs = append(errs, field.Invalid(lp.Child("size"), lb.Size, "must be the root cluster's maximum size (at least 1)"))
		}
		if lb.Port < 1 || lb.Port > 65535 {
			errs = append(errs, field.Invalid(lp.Child("port"), lb.Port, "must be a port number from 1 to 65535"))
		}
		if b.Hostlist != "" {
			errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, "a burst cluster (leadBroker set) takes its hosts from leadBroker and clusters: remove hostlist"))
		}
		found := len(b.Clusters) == 0
		for _, c := range b.Clusters {
			if c.Name == mc.Name {
				found = true
			}
		}
		if !found {
			errs = append(errs, field.Invalid(p.Child("clusters"), mc.Name, "a burst cluster must be one of the root's clusters: its name must match an entry so its hostnames are in the shared host list"))
		}
	}
	if np := b.LeadBrokerService.NodePort; np != 0 && (np < 1 || np > 65535) {
		errs = append(errs, field.Invalid(p.Child("leadBrokerService", "nodePort"), np, "must be a port number (usually 30000-32767)"))
	}
	return errs
}

func validatePod(pod *PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch pod.RestartPolicy {
	case "", "OnFailure", "Never":
	default:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), pod.RestartPolicy, []string{"OnFailure", "Never"}))
	}
	switch pod.DNSPolicy {
	case "", "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None":
	default:
		errs = append(errs, field.NotSupported(p.Child("dnsPolicy"), pod.DNSPolicy, []string{"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"}))
	}
	for _, k := range sortedKeys(pod.Labels) {
		errs = append(errs, validateLabel(p.Child("labels"), k, pod.Labels[k])...)
	}
	for _, k := range sortedKeys(pod.NodeSelector) {
		errs = append(errs, validateLabel(p.Child("nodeSelector"), k, pod.NodeSelector[k])...)
	}
	for _, k := range sortedKeys(pod.NodeAffinity) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Child("nodeAffinity").Key(k), k, msg))
		}
		if len(pod.NodeAffinity[k]) == 0 {
			errs = append(errs, field.Required(p.Child("nodeAffinity").Key(k), "list at least one value the node label may have"))
		}
	}
	for i, t := range pod.Tolerations {
		tp := p.Child("tolerations").Index(i)
		if t.Operator == "Exists" && t.Value != "" {
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
		if t.Key == "" && t.Operator != "Exists" {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator, "must be Exists when key is empty"))
		}
	}
	errs = append(errs, validateResourceList(pod.Resources, p.Child("resources"))...)
	return errs
}

func validateLabel(p *field.Path, k, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(k) {
		errs = append(errs, field.Invalid(p.Key(k), k, msg))
	}
	for _, msg := range validation.IsValidLabelValue(v) {
		errs = append(errs, field.Invalid(p.Key(k), v, msg))
	}
	return errs
}

// duplicate is field.Duplicate with a detail saying what to do.
func duplicate(p *field.Path, value any, detail string) *field.Error {
	e := field.Duplicate(p, value)
	e.Detail = detail
	return e
}

// hasDotDot tells whether a path has a ".." element.
func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SortedKeys returns the keys of m in order, so that every list built from a
// map renders the same way each time.
func SortedKeys[V any](m map[string]V) []string { return sortedKeys(m) }
