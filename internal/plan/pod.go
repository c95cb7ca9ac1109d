package plan

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// ownedPodLabels are label keys the MiniCluster or the Job controller sets
// on the broker pods; a user's value would be overwritten or break the
// Services' and the scale subresource's selectors.
var ownedPodLabels = map[string]string{
	LabelApp:           "the MiniCluster",
	LabelName:          "the MiniCluster (the pods' Services select on it)",
	LabelSelector:      "the MiniCluster (the scale subresource selects on it)",
	LabelNamespace:     "the MiniCluster",
	LabelJobName:       "the Job controller",
	labelControllerUID: "the Job controller",
}

// labelControllerUID and labelPrefixBatch are label keys of the Job
// controller on the pods it creates, with LabelJobName.
const (
	labelControllerUID = "controller-uid"
	labelPrefixBatch   = "batch.kubernetes.io/"
)

// jobControllerLabel reports whether the Job controller sets label key k
// on the pods it creates.
func jobControllerLabel(k string) bool {
	return k == LabelJobName || k == labelControllerUID || strings.HasPrefix(k, labelPrefixBatch)
}

// checkPod checks pod-level settings with the rules Kubernetes applies to
// the Job's pod template and the services Pod.
func checkPod(mc *v1alpha2.MiniCluster) field.ErrorList {
	s := &mc.Spec
	pod := &s.Pod
	p := field.NewPath("spec", "pod")
	var errs field.ErrorList

	errs = append(errs, checkLabels(s.JobLabels, field.NewPath("spec", "jobLabels"))...)
	for _, k := range slices.Sorted(maps.Keys(s.JobLabels)) {
		kp := field.NewPath("spec", "jobLabels").Key(k)
		switch {
		case jobControllerLabel(k):
			// On the Job they would make selectors meant for the pods
			// (kubectl get pods -l job-name=...) pick the wrong object.
			errs = append(errs, field.Forbidden(kp, "is a label the Job controller sets on the broker pods: use another label key"))
		case strings.HasPrefix(k, "crossplane.io/"):
			errs = append(errs, field.Forbidden(kp, "crossplane.io/ labels are set by Crossplane on every object it composes, over any value given here: use another label key"))
		}
	}
	errs = append(errs, checkLabels(pod.Labels, p.Child("labels"))...)
	for _, k := range slices.Sorted(maps.Keys(pod.Labels)) {
		if who, ok := ownedPodLabels[k]; ok {
			errs = append(errs, field.Forbidden(p.Child("labels").Key(k), "is set on the broker pods by "+who+": use another label key"))
		} else if strings.HasPrefix(k, labelPrefixBatch) {
			errs = append(errs, field.Forbidden(p.Child("labels").Key(k), "batch.kubernetes.io/ labels are set on the broker pods by the Job controller: use another label key"))
		}
	}
	errs = append(errs, checkAnnotations(pod.Annotations, p.Child("annotations"))...)
	errs = append(errs, checkLabels(pod.NodeSelector, p.Child("nodeSelector"))...)
	for _, k := range slices.Sorted(maps.Keys(pod.NodeAffinity)) {
		kp := p.Child("nodeAffinity").Key(k)
		errs = append(errs, metav1validation.ValidateLabelName(k, kp)...)
		if len(pod.NodeAffinity[k]) == 0 {
			errs = append(errs, field.Required(kp, "list at least one value the node label may have"))
		}
		for j, v := range pod.NodeAffinity[k] {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(kp.Index(j), v, msg))
			}
		}
	}
	for i, t := range pod.Tolerations {
		tp := p.Child("tolerations").Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Child("key"))...)
		}
		switch {
		case t.Operator == "Exists" && t.Value != "":
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty when operator is Exists"))
		case t.Key == "" && t.Operator != "Exists":
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator, "must be Exists when key is empty"))
		case t.Value != "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
			}
		}
	}
	if pod.DNSPolicy == "Default" && brokers(mc) > 1 {
		// The brokers connect to each other by their cluster DNS names.
		errs = append(errs, field.Invalid(p.Child("dnsPolicy"), pod.DNSPolicy, "gives the pods the node's DNS resolver, which cannot resolve the names the brokers connect to (<name>-<index>.<service>.<namespace>.svc), so they would never join: use ClusterFirst (the default)"))
	}
	// pod.resources (the Flux Operator's pod overhead) is the schema's to
	// refuse: the RuntimeClass admission plugin refuses pods that set
	// overhead themselves, unless their RuntimeClass defines that very
	// overhead, which it would have set anyway.
	sc := pod.SecurityContext
	sp := p.Child("securityContext")
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		errs = append(errs, field.Invalid(sp.Child("runAsUser"), 0, "runAsNonRoot is set: run as a uid other than 0, or drop runAsNonRoot"))
	}
	errs = append(errs, checkProfiles(sc.SeccompProfile, sc.AppArmorProfile, sp)...)
	errs = append(errs, checkNonRoot(mc)...)
	errs = append(errs, checkSysctls(sc.Sysctls, pod.HostIPC, sp.Child("sysctls"))...)
	return errs
}

// checkNonRoot applies the kubelet's runAsNonRoot rule (the container's, or
// else the pod's) to every container of the broker pods: one that would run
// as uid 0 is never started (CreateContainerConfigError), so the brokers
// would never start. A container that sets both itself is
// checkSecurityContext's, and a pod that does is checkPod's.
func checkNonRoot(mc *v1alpha2.MiniCluster) field.ErrorList {
	s := &mc.Spec
	pod := s.Pod.SecurityContext
	const detail = "spec.pod.securityContext.runAsNonRoot is set, and the kubelet refuses to start a container as uid 0: run it as another uid, or drop runAsNonRoot"
	var errs field.ErrorList
	check := func(sc v1alpha2.SecurityContext, p *field.Path, image string) {
		nonRoot := sc.RunAsNonRoot
		if nonRoot == nil {
			nonRoot = pod.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			return
		}
		switch {
		case sc.RunAsUser != nil:
			if *sc.RunAsUser == 0 && sc.RunAsNonRoot == nil {
				errs = append(errs, field.Invalid(p.Child("runAsUser"), 0, detail))
			}
		case pod.RunAsUser != nil:
			if *pod.RunAsUser == 0 && sc.RunAsNonRoot != nil {
				errs = append(errs, field.Invalid(p.Child("runAsNonRoot"), true, "spec.pod.securityContext.runAsUser is 0, and the kubelet refuses to start a runAsNonRoot container as uid 0: set runAsUser here to another uid, or drop runAsNonRoot"))
			}
		case strings.HasPrefix(image, fluxViewImages):
			fp := field.NewPath("spec", "pod", "securityContext", "runAsNonRoot")
			if sc.RunAsNonRoot != nil {
				fp = p.Child("runAsNonRoot")
			}
			errs = append(errs, field.Invalid(fp, true, "the Flux view image "+image+" (the init container) runs as root, and the kubelet refuses to start it with runAsNonRoot: set spec.pod.securityContext.runAsUser (or spec.flux.container.securityContext.runAsUser) to a uid other than 0, or drop runAsNonRoot"))
		}
	}
	check(s.Flux.Container.SecurityContext, field.NewPath("spec", "flux", "container", "securityContext"), s.Flux.Container.Image)
	for i := range s.Containers {
		check(s.Containers[i].SecurityContext, field.NewPath("spec", "containers").Index(i).Child("securityContext"), "")
	}
	return errs
}

// sysctlName is Kubernetes' rule for sysctl names (dots or slashes
// between segments).
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// ipcSysctls are the sysctls of the IPC namespace, which a pod sharing the
// node's (hostIPC) cannot set: Kubernetes refuses the pod.
var ipcSysctls = []string{"kernel.shm", "kernel.msg", "kernel.sem", "fs.mqueue."}

func checkSysctls(sysctls []v1alpha2.Sysctl, hostIPC bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, sc := range sysctls {
		np := p.Index(i).Child("name")
		switch {
		case !sysctlName.MatchString(sc.Name):
			errs = append(errs, field.Invalid(np, sc.Name, "must be a sysctl name such as net.core.somaxconn or kernel.shm_rmid_forced (lowercase segments separated by dots)"))
		case seen[strings.ReplaceAll(sc.Name, "/", ".")]:
			errs = append(errs, duplicate(np, sc.Name, "set each sysctl once"))
		case hostIPC && slices.ContainsFunc(ipcSysctls, func(pre string) bool { return strings.HasPrefix(sc.Name, pre) }):
			errs = append(errs, field.Invalid(np, sc.Name, "belongs to the IPC namespace, which the pods share with the node (spec.pod.hostIPC): Kubernetes refuses the pair; drop the sysctl or hostIPC"))
		}
		seen[strings.ReplaceAll(sc.Name, "/", ".")] = true
	}
	return errs
}

// Restricted reports whether the broker pods get the settings the
// restricted Pod Security level requires (runAsNonRoot, seccomp
// RuntimeDefault, allowPrivilegeEscalation false, every capability dropped):
// every container of the pods runs as a uid other than 0, by its own
// runAsUser or the pod's (the init container as the runner, unless it has
// its own), and nothing asks for a privilege those settings would take
// away. Any other MiniCluster keeps what it asked for; its pods pass
// baseline unless the claim asks for more.
func Restricted(mc *v1alpha2.MiniCluster) bool {
	s := &mc.Spec
	if s.Runner() < 0 || s.Pod.HostIPC || s.Pod.HostPID || !restrictablePod(s.Pod.SecurityContext) {
		return false
	}
	if v := s.Flux.Container.SecurityContext; !restrictable(v) || (v.RunAsUser != nil && *v.RunAsUser == 0) {
		return false
	}
	return restrictableContainers(s.Pod.SecurityContext, v1alpha2.Containers(s.Containers))
}

// RestrictedServices reports whether the services Pod gets the restricted
// settings, by the same rule as the broker pods. It does not take
// spec.pod.securityContext, so each service needs a runAsUser of its own.
func RestrictedServices(mc *v1alpha2.MiniCluster) bool {
	return len(mc.Spec.Services) > 0 && Restricted(mc) && restrictableContainers(v1alpha2.PodSecurityContext{}, v1alpha2.Containers(mc.Spec.Services))
}

func restrictableContainers(pod v1alpha2.PodSecurityContext, cs []*v1alpha2.MiniClusterContainer) bool {
	for _, c := range cs {
		uid := c.SecurityContext.RunAsUser
		if uid == nil {
			uid = pod.RunAsUser
		}
		if uid == nil || *uid == 0 || !restrictable(c.SecurityContext) {
			return false
		}
		for _, v := range c.Volumes {
			if v.HostPath != "" {
				return false
			}
		}
	}
	return true
}

// restrictablePod: nothing at the pod level conflicts with the restricted
// settings.
func restrictablePod(sc v1alpha2.PodSecurityContext) bool {
	return (sc.RunAsNonRoot == nil || *sc.RunAsNonRoot) && (sc.RunAsUser == nil || *sc.RunAsUser != 0) &&
		!unconfined(sc.SeccompProfile, sc.AppArmorProfile)
}

// restrictable: the container asks for nothing the restricted settings
// take away. NET_BIND_SERVICE is the one capability restricted lets a
// container add.
func restrictable(sc v1alpha2.SecurityContext) bool {
	if sc.Privileged || (sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation) ||
		(sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot) || sc.ProcMount == "Unmasked" || unconfined(sc.SeccompProfile, sc.AppArmorProfile) {
		return false
	}
	for _, c := range AddedCapabilities(sc) {
		if !strings.EqualFold(string(c), "NET_BIND_SERVICE") {
			return false
		}
	}
	return true
}

func unconfined(seccomp *v1alpha2.SeccompProfile, apparmor *v1alpha2.AppArmorProfile) bool {
	return (seccomp != nil && seccomp.Type == "Unconfined") || (apparmor != nil && apparmor.Type == "Unconfined")
}

// ViewUser is the uid and gid of the Flux view's init container when
// the pods are Restricted and neither it nor the pod names one: the
// runner's, so that it copies the view as the user who runs it (the
// volumes are emptyDirs anyone can write). Otherwise nil: the init
// container runs as its own or the pod's, else as its image's user.
func ViewUser(mc *v1alpha2.MiniCluster) (uid, gid *int64) {
	s := &mc.Spec
	if !Restricted(mc) || s.Flux.Container.SecurityContext.RunAsUser != nil || s.Pod.SecurityContext.RunAsUser != nil {
		return nil, nil
	}
	r := s.Containers[s.Runner()].SecurityContext
	if s.Flux.Container.SecurityContext.RunAsGroup != nil {
		return r.RunAsUser, nil
	}
	return r.RunAsUser, r.RunAsGroup
}

// fluxViewImages prefixes the Flux view images (the default and its
// variants), which run as root.
const fluxViewImages = "ghcr.io/converged-computing/flux-view-"

// brokers is the largest number of brokers of the instance: this cluster's
// maximum size, or more with bursting or a custom host list.
func brokers(mc *v1alpha2.MiniCluster) int {
	return instanceHosts(mc, MaximumSize(mc))
}

// checkLabels applies Kubernetes' label rules key by key, in order, so that
// each error names its entry and the message is the same on every run.
func checkLabels(labels map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kp := p.Key(k)
		errs = append(errs, metav1validation.ValidateLabelName(k, kp)...)
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(kp, labels[k], msg))
		}
	}
	return errs
}

// checkAnnotations applies Kubernetes' annotation rules: qualified keys and
// a total size of at most 256 KiB.
func checkAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(p.Key(k), k, msg))
		}
	}
	size := 0
	for k, v := range annotations {
		size += len(k) + len(v)
	}
	if size > MaxPodAnnotationBytes {
		e := field.TooLong(p, "", MaxPodAnnotationBytes)
		e.Detail = fmt.Sprintf("the annotations add up to %d bytes, more than %d: Kubernetes caps a pod's annotations at %d bytes, and Crossplane and the function add their own to the services Pod; keep large data in a ConfigMap", size, MaxPodAnnotationBytes, apivalidation.TotalAnnotationSizeLimitB)
		errs = append(errs, e)
	}
	return errs
}

// MaxPodAnnotationBytes bounds spec.pod.annotations (keys and values), which
// Kubernetes caps at 256 KiB a pod: the services Pod also carries
// annotations of Crossplane (crossplane.io/composition-resource-name) and of
// the function (its version), for which 1 KiB is left.
const MaxPodAnnotationBytes = apivalidation.TotalAnnotationSizeLimitB - 1024
