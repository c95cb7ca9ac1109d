// Package podsecurity checks pod templates against a namespace's Pod
// Security labels with the API server's own library
// (k8s.io/pod-security-admission), before any pod exists: the admission
// plugin refuses a Job's pods only when the Job controller creates them,
// and says so only in the Job's events. Each violation names the fields of
// the claim that fix it, which the caller supplies for each part of a pod.
package podsecurity

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Modes of a Pod Security policy, as the namespace labels name them.
const (
	ModeEnforce = "enforce"
	ModeWarn    = "warn"
	ModeAudit   = "audit"
)

// Template is a pod template to check, with where its parts come from in
// the claim.
type Template struct {
	// Name says which pods these are in messages, such as "the broker pods".
	Name string
	Meta metav1.ObjectMeta
	Spec corev1.PodSpec
	// Pod is the claim path of the pod-level settings, such as spec.pod.
	Pod *field.Path
	// Containers maps a container (or init container) name to the claim
	// path of the container it comes from, such as spec.containers[0].
	Containers map[string]*field.Path
	// Volumes maps a volume name to the claim path that declares it.
	Volumes map[string]*field.Path
	// AddCapabilities names the containers that add capabilities under
	// the claim's other spelling, securityContext.addCapabilities, which
	// the message then names instead of securityContext.capabilities.add.
	AddCapabilities map[string]bool
}

// Violation is one Pod Security check a template fails.
type Violation struct {
	// Pods is the Template's Name.
	Pods string
	// Reason and Detail are the library's, as the API server words them.
	Reason string
	Detail string
	// Fields of the claim that fix it, sorted.
	Fields []string
}

// String is the violation as a message names it.
func (v Violation) String() string {
	s := v.Reason
	if v.Detail != "" {
		s += " (" + v.Detail + ")"
	}
	if len(v.Fields) > 0 {
		s += ": set " + strings.Join(v.Fields, ", ")
	}
	return s
}

// Result is what one mode of the namespace's policy says of the templates.
type Result struct {
	Mode string
	// Level and Version as the API server resolved them from the labels.
	Level   api.Level
	Version api.Version
	// Violations, in template order, then in the library's check order.
	Violations []Violation
}

// Policy names the mode's level and version as the labels set them, such
// as enforce=restricted:latest.
func (r Result) Policy() string {
	return fmt.Sprintf("%s=%s:%s", r.Mode, r.Level, r.Version)
}

// defaultPolicy is the API server's when its admission configuration sets
// none: a mode without a label is privileged, and privileged allows all.
var defaultPolicy = api.Policy{
	Enforce: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	Audit:   api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	Warn:    api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
}

var evaluator = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// Check evaluates the templates under the policy that the namespace labels
// set, mode by mode (enforce, warn, audit), and returns the modes the
// templates fail. Labels the API server cannot parse resolve as it resolves
// them (an unparsable enforce level is restricted), and are returned as
// errors too.
func Check(labels map[string]string, templates ...Template) ([]Result, field.ErrorList, error) {
	eval, err := evaluator()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot build the Pod Security checks: %w", err)
	}
	p, errs := api.PolicyToEvaluate(labels, defaultPolicy)
	if p.FullyPrivileged() {
		return nil, errs, nil
	}
	var out []Result
	for _, m := range []struct {
		mode string
		lv   api.LevelVersion
	}{{ModeEnforce, p.Enforce}, {ModeWarn, p.Warn}, {ModeAudit, p.Audit}} {
		if m.lv.Level == api.LevelPrivileged {
			continue
		}
		r := Result{Mode: m.mode, Level: m.lv.Level, Version: m.lv.Version}
		for i := range templates {
			r.Violations = append(r.Violations, violations(eval, m.lv, &templates[i])...)
		}
		if len(r.Violations) > 0 {
			out = append(out, r)
		}
	}
	return out, errs, nil
}

// violations evaluates the whole template as the API server does, then,
// only when it fails, the pod alone, each container alone and each volume
// alone, to tell which parts fail which check.
func violations(eval policy.Evaluator, lv api.LevelVersion, t *Template) []Violation {
	failed := failures(eval, lv, &t.Meta, &t.Spec)
	if len(failed) == 0 {
		return nil
	}
	fields := map[string]map[string]bool{}
	add := func(reason string, p *field.Path) {
		if fields[reason] == nil {
			fields[reason] = map[string]bool{}
		}
		fields[reason][p.String()] = true
	}

	bare := t.Spec
	bare.Containers, bare.InitContainers, bare.Volumes, bare.EphemeralContainers = nil, nil, nil, nil
	podLevel := map[string]bool{}
	for _, f := range failures(eval, lv, &t.Meta, &bare) {
		podLevel[f.ForbiddenReason] = true
		for _, p := range podFields(f.ForbiddenReason, t) {
			add(f.ForbiddenReason, p)
		}
	}
	for _, c := range append(append([]corev1.Container{}, t.Spec.InitContainers...), t.Spec.Containers...) {
		one := bare
		one.Containers = []corev1.Container{c}
		cp, ok := t.Containers[c.Name]
		if !ok {
			cp = field.NewPath("container " + c.Name)
		}
		for _, f := range failures(eval, lv, &t.Meta, &one) {
			// A check the pod fails already is the pod-level setting's to
			// fix: a container (or volume) that fails it only through the
			// pod is not named.
			if !podLevel[f.ForbiddenReason] {
				name := containerField(f.ForbiddenReason)
				if f.ForbiddenReason == "non-default capabilities" && t.AddCapabilities[c.Name] {
					name = "securityContext.addCapabilities"
				}
				add(f.ForbiddenReason, cp.Child(name))
			}
		}
	}
	for _, v := range t.Spec.Volumes {
		one := bare
		one.Volumes = []corev1.Volume{v}
		vp, ok := t.Volumes[v.Name]
		if !ok {
			vp = field.NewPath("volume " + v.Name)
		}
		for _, f := range failures(eval, lv, &t.Meta, &one) {
			if !podLevel[f.ForbiddenReason] {
				add(f.ForbiddenReason, vp)
			}
		}
	}

	out := make([]Violation, 0, len(failed))
	for _, f := range failed {
		v := Violation{Pods: t.Name, Reason: f.ForbiddenReason, Detail: f.ForbiddenDetail}
		for p := range fields[f.ForbiddenReason] {
			v.Fields = append(v.Fields, p)
		}
		sort.Strings(v.Fields)
		out = append(out, v)
	}
	return out
}

func failures(eval policy.Evaluator, lv api.LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []policy.CheckResult {
	var out []policy.CheckResult
	for _, r := range eval.EvaluatePod(lv, meta, spec) {
		if !r.Allowed {
			out = append(out, r)
		}
	}
	return out
}

// containerField is the field of a container's declaration that fixes the
// check of reason (the library's ForbiddenReason).
func containerField(reason string) string {
	switch {
	case reason == "privileged":
		return "securityContext.privileged"
	case reason == "non-default capabilities":
		return "securityContext.capabilities.add"
	case reason == "unrestricted capabilities":
		return "securityContext.capabilities"
	case reason == "allowPrivilegeEscalation != false":
		return "securityContext.allowPrivilegeEscalation"
	case reason == "runAsNonRoot != true":
		return "securityContext.runAsNonRoot"
	case reason == "runAsUser=0":
		return "securityContext.runAsUser"
	case reason == "seccompProfile":
		return "securityContext.seccompProfile"
	case reason == "procMount":
		return "securityContext.procMount"
	case reason == "seLinuxOptions":
		return "securityContext.seLinuxOptions"
	case strings.HasPrefix(reason, "forbidden AppArmor profile"):
		return "securityContext.appArmorProfile"
	case reason == "hostPort":
		return "ports"
	case reason == "probe or lifecycle host":
		return "lifeCycle"
	default:
		return "securityContext"
	}
}

// podFields are the pod-level fields that fix the check of reason.
func podFields(reason string, t *Template) []*field.Path {
	sc := t.Pod.Child("securityContext")
	switch {
	case reason == "host namespaces":
		var out []*field.Path
		if t.Spec.HostIPC {
			out = append(out, t.Pod.Child("hostIPC"))
		}
		if t.Spec.HostPID {
			out = append(out, t.Pod.Child("hostPID"))
		}
		if t.Spec.HostNetwork {
			out = append(out, t.Pod.Child("hostNetwork"))
		}
		return out
	case reason == "forbidden sysctls":
		return []*field.Path{sc.Child("sysctls")}
	case reason == "runAsNonRoot != true":
		return []*field.Path{sc.Child("runAsNonRoot")}
	case reason == "runAsUser=0":
		return []*field.Path{sc.Child("runAsUser")}
	case reason == "seccompProfile":
		return []*field.Path{sc.Child("seccompProfile")}
	case reason == "seLinuxOptions":
		return []*field.Path{sc.Child("seLinuxOptions")}
	case strings.HasPrefix(reason, "forbidden AppArmor profile"):
		return []*field.Path{sc.Child("appArmorProfile")}
	default:
		return []*field.Path{t.Pod}
	}
}

// WithDefaultLevel returns the namespace's labels with an enforce level
// added where they set none: level, the platform's default for namespaces
// without one. A namespace's own enforce label wins. added tells whether
// the level came from the platform.
func WithDefaultLevel(labels map[string]string, level string) (out map[string]string, added bool) {
	if _, ok := labels[api.EnforceLevelLabel]; ok || level == "" || level == string(api.LevelPrivileged) {
		return labels, false
	}
	out = make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[api.EnforceLevelLabel] = level
	return out, true
}
