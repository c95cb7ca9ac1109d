package admission

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// DefaultScheduler is the name of Kubernetes' own scheduler, which a claim
// may always name.
const DefaultScheduler = "default-scheduler"

// Refusal is one thing the policy refuses.
type Refusal struct {
	// Key of the policy, such as policy.nodePorts.
	Key string
	// Field of the claim that asks for it.
	Field *field.Path
	// Why it is refused, and how to fix it.
	Why, Fix string
}

// Error is the refusal as a condition says it.
func (r Refusal) Error() string {
	return fmt.Sprintf("%s: refused by the platform's policy (%s): %s; %s", r.Field, r.Key, r.Why, r.Fix)
}

// Refusals is a list of refusals.
type Refusals []Refusal

// Error joins the refusals.
func (rs Refusals) Error() string {
	msgs := make([]string, 0, len(rs))
	for _, r := range rs {
		msgs = append(msgs, r.Error())
	}
	return strings.Join(msgs, "; ")
}

const askPlatform = "ask your platform team"

// Enforce sets on mc what the policy sets on every pod: its tolerations,
// its node selector, the maximum deadline for a claim that sets none, and
// the default Kueue queue for one that names none.
// A claim that asks for another value of an enforced node label, or a
// longer deadline, is refused; mc is then left as it was. p must be
// Effective.
func Enforce(p v1beta1.Policy, mc *v1alpha2.MiniCluster) Refusals {
	s := &mc.Spec
	var rs Refusals
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector.Enforced)) {
		want := p.NodeSelector.Enforced[k]
		if got, ok := s.Pod.NodeSelector[k]; ok && got != want {
			rs = append(rs, Refusal{Key: "policy.nodeSelector.enforced", Field: field.NewPath("spec", "pod", "nodeSelector").Key(k),
				Why: fmt.Sprintf("the platform runs every MiniCluster on nodes with %s=%s, not %q", k, want, got),
				Fix: "remove the key or set it to " + want})
		}
		if vs, ok := s.Pod.NodeAffinity[k]; ok && !slices.Contains(vs, want) {
			rs = append(rs, Refusal{Key: "policy.nodeSelector.enforced", Field: field.NewPath("spec", "pod", "nodeAffinity").Key(k),
				Why: fmt.Sprintf("the platform runs every MiniCluster on nodes with %s=%s, which these values exclude", k, want),
				Fix: "remove the key or include " + want})
		}
	}
	if max := p.MaxDeadlineSeconds; max > 0 && !defaultDeadline(s) && *s.DeadlineSeconds > max {
		rs = append(rs, Refusal{Key: "policy.maxDeadlineSeconds", Field: field.NewPath("spec", "deadlineSeconds"),
			Why: fmt.Sprintf("%d is longer than the platform's maximum of %d seconds", *s.DeadlineSeconds, max),
			Fix: fmt.Sprintf("set it to at most %d, or leave it out to get the maximum", max)})
	}
	if len(rs) > 0 {
		return rs
	}
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector.Enforced)) {
		if s.Pod.NodeSelector == nil {
			s.Pod.NodeSelector = map[string]string{}
		}
		s.Pod.NodeSelector[k] = p.NodeSelector.Enforced[k]
	}
	for _, t := range p.Tolerations.Enforced {
		if !slices.Contains(s.Pod.Tolerations, t) {
			s.Pod.Tolerations = append(s.Pod.Tolerations, t)
		}
	}
	if max := p.MaxDeadlineSeconds; max > 0 && defaultDeadline(s) && max < v1alpha2.DefaultDeadlineSeconds {
		s.DeadlineSeconds = ptr.To(max)
	}
	enforceQueue(p, mc)
	return nil
}

// defaultDeadline tells whether the deadline is the API's default: the
// schema fills it in before the function sees the claim, so a claim that
// asked for that very value is taken as one that asked for none.
func defaultDeadline(s *v1alpha2.MiniClusterSpec) bool {
	return s.DeadlineSeconds == nil || *s.DeadlineSeconds == v1alpha2.DefaultDeadlineSeconds
}

// Check refuses what the claim alone shows the policy does not allow,
// but its size (CheckSize). platform are the tolerations the platform
// itself adds (its defaults and enforced ones), which no forbidden key
// refuses. p must be Effective.
func Check(p v1beta1.Policy, mc *v1alpha2.MiniCluster, platform []v1alpha2.Toleration) Refusals {
	s := &mc.Spec
	var rs Refusals
	pod := field.NewPath("spec", "pod")

	if s.Pod.AutomountServiceAccountToken && !p.ServiceAccounts.AutomountToken {
		rs = append(rs, Refusal{Key: "policy.serviceAccounts.automountToken", Field: pod.Child("automountServiceAccountToken"),
			Why: "pods may not mount their ServiceAccount's token: it carries the ServiceAccount's rights in the API server to whatever the job runs",
			Fix: "remove it, or " + askPlatform + " to allow tokens"})
	}
	if rc := s.Pod.RuntimeClassName; rc != "" && !v1beta1.Allows(p.RuntimeClasses, rc) {
		rs = append(rs, Refusal{Key: "policy.runtimeClasses", Field: pod.Child("runtimeClassName"),
			Why: fmt.Sprintf("runtime class %q is not one the platform allows (%s)", rc, list(p.RuntimeClasses)),
			Fix: "remove it to use the cluster's default runtime, or " + askPlatform + " to allow it"})
	}
	if sch := s.Pod.SchedulerName; sch != "" && sch != DefaultScheduler && !v1beta1.Allows(p.Schedulers, sch) {
		rs = append(rs, Refusal{Key: "policy.schedulers", Field: pod.Child("schedulerName"),
			Why: fmt.Sprintf("scheduler %q is not one the platform allows (%s)", sch, list(p.Schedulers)),
			Fix: "remove it to use the cluster's default scheduler, or " + askPlatform + " to allow it"})
	}
	for i, t := range s.Pod.Tolerations {
		if slices.Contains(platform, t) {
			continue
		}
		if key, bad := forbiddenToleration(p.Tolerations.ForbiddenKeys, t); bad {
			why := fmt.Sprintf("tolerations of the taint %s are not allowed: nodes with it are kept for other work", key)
			if t.Key == "" {
				why = fmt.Sprintf("a toleration without a key tolerates every taint, including %s", key)
			}
			rs = append(rs, Refusal{Key: "policy.tolerations.forbiddenKeys", Field: pod.Child("tolerations").Index(i),
				Why: why, Fix: "remove this toleration"})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Pod.NodeSelector)) {
		if slices.Contains(p.NodeSelector.ForbiddenKeys, k) {
			rs = append(rs, Refusal{Key: "policy.nodeSelector.forbiddenKeys", Field: pod.Child("nodeSelector").Key(k),
				Why: "the platform does not let MiniClusters choose nodes by " + k, Fix: "remove the key"})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Pod.NodeAffinity)) {
		if slices.Contains(p.NodeSelector.ForbiddenKeys, k) {
			rs = append(rs, Refusal{Key: "policy.nodeSelector.forbiddenKeys", Field: pod.Child("nodeAffinity").Key(k),
				Why: "the platform does not let MiniClusters choose nodes by " + k, Fix: "remove the key"})
		}
	}
	rs = append(rs, checkLabels(p, s.Pod.Labels, pod.Child("labels"))...)
	rs = append(rs, checkAnnotations(p, s.Pod.Annotations, pod.Child("annotations"))...)
	rs = append(rs, checkLabels(p, s.JobLabels, field.NewPath("spec", "jobLabels"))...)
	rs = append(rs, checkKueue(p, mc)...)
	for _, c := range containers(mc) {
		for _, k := range slices.Sorted(maps.Keys(c.c.Volumes)) {
			if d := c.c.Volumes[k].CSIDriver; d != "" && !v1beta1.Allows(p.CSIDrivers, d) {
				rs = append(rs, Refusal{Key: "policy.csiDrivers", Field: c.path.Child("volumes").Key(k).Child("csiDriver"),
					Why: fmt.Sprintf("inline volumes of the CSI driver %q are not allowed (%s): the driver makes of the attributes whatever it makes", d, list(p.CSIDrivers)),
					Fix: "use a PersistentVolumeClaim (claimName) the platform provisions, or " + askPlatform + " to allow the driver"})
			}
		}
	}
	return rs
}

// CheckSize refuses more pods than the policy's maximum. A new MiniCluster
// is judged on the most it may ever run (max(size, maxSize)); running is
// the number of pods its own Job runs now (0 before it exists): a running
// MiniCluster that a policy change leaves above the maximum keeps running,
// and only a larger size is refused.
func CheckSize(p v1beta1.Policy, mc *v1alpha2.MiniCluster, running int32) Refusals {
	s := &mc.Spec
	max := p.MaxSize
	fix := fmt.Sprintf("ask for at most %d pods, or %s to raise policy.maxSize", max, askPlatform)
	if running > 0 {
		if size := s.SizeValue(); size > max && size > running {
			return Refusals{{Key: "policy.maxSize", Field: field.NewPath("spec", "size"),
				Why: fmt.Sprintf("%d pods are more than the platform's maximum of %d (the %d running keep running)", size, max, running), Fix: fix}}
		}
		return nil
	}
	if m := mc.Status.MaximumSize; m > 0 {
		// Created earlier, under another policy: only the size counts.
		if size := s.SizeValue(); size > max {
			return Refusals{{Key: "policy.maxSize", Field: field.NewPath("spec", "size"),
				Why: fmt.Sprintf("%d pods are more than the platform's maximum of %d", size, max), Fix: fix}}
		}
		return nil
	}
	if s.SizeValue() > max {
		return Refusals{{Key: "policy.maxSize", Field: field.NewPath("spec", "size"),
			Why: fmt.Sprintf("%d pods are more than the platform's maximum of %d", s.SizeValue(), max), Fix: fix}}
	}
	if s.MaxSize > max {
		return Refusals{{Key: "policy.maxSize", Field: field.NewPath("spec", "maxSize"),
			Why: fmt.Sprintf("%d pods are more than the platform's maximum of %d", s.MaxSize, max), Fix: fix}}
	}
	return nil
}

// forbiddenToleration tells whether t tolerates a forbidden taint, and
// which.
func forbiddenToleration(forbidden []string, t v1alpha2.Toleration) (string, bool) {
	keys := make([]string, 0, len(forbidden))
	for _, k := range forbidden {
		if k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	if t.Key == "" {
		return strings.Join(keys, ", "), true
	}
	return t.Key, slices.Contains(keys, t.Key)
}

// Lookups are the objects of the MiniCluster's namespace the policy needs
// to decide.
type Lookups struct {
	// ServiceAccount the pods run as, when its name alone does not
	// decide.
	ServiceAccount string
	// Secrets the claim reads, by name, when their names alone do not
	// decide, sorted.
	Secrets []string
	// Namespace: its labels decide NodePorts.
	Namespace bool
}

// Needs says which objects decide the rest of the policy for mc. p must
// be Effective; e are what needs no Secret lookup (Exempt).
func Needs(p v1beta1.Policy, mc *v1alpha2.MiniCluster, e Exempt) Lookups {
	var l Lookups
	if sa := serviceAccount(mc); !v1beta1.Allows(p.ServiceAccounts.Names, sa) {
		l.ServiceAccount = sa
	}
	seen := map[string]bool{}
	for _, r := range secretRefs(mc, e) {
		if !seen[r.name] && !v1beta1.Allows(p.Secrets.Names, r.name) {
			seen[r.name] = true
			l.Secrets = append(l.Secrets, r.name)
		}
	}
	sort.Strings(l.Secrets)
	l.Namespace = plan.ComposesLeadBroker(mc) && !p.NodePorts.Allowed
	return l
}

// Exempt are the Secrets a MiniCluster reads that need no decision.
type Exempt struct {
	// PullSecrets the platform adds to every pod (defaults.imagePullSecrets):
	// exempt where a claim names one as an image pull secret, and only
	// there. Mounted or read into the environment, the registry
	// credentials are data like any other Secret's.
	PullSecrets []string
	// OwnCertificate: the MiniCluster composes its own certificate Secret
	// (<name>-curve-cert) in this run, so that name is its own: an object
	// of that name that is not this composite's is refused before
	// anything is composed (NameTaken, ForeignObject).
	OwnCertificate bool
}

// Secret is what the policy reads of a Secret: never its data.
type Secret struct {
	Labels map[string]string
	// ControllerUID is the uid of its controller, "" when it has none.
	ControllerUID string
	// ForClaimUID is the burst controller's record of the burst
	// MiniCluster it copied a root's certificate for (its
	// v1alpha2.AnnotationBurstClaimUID annotation), "" when it has none.
	ForClaimUID string
}

// Cluster is what the cluster holds of the objects Needs named.
type Cluster struct {
	// CompositeUID is the uid of the MiniCluster's composite: a Secret it
	// controls is its own.
	CompositeUID string
	// ClaimUID is the uid of the tenant's MiniCluster object (the v2
	// composite itself, or the claim), "" when unknown: a certificate copy
	// the burst controller wrote for it is its own.
	ClaimUID string
	// NamespaceLabels of the MiniCluster's namespace.
	NamespaceLabels map[string]string
	// ServiceAccount's labels; nil when it does not exist.
	ServiceAccount map[string]string
	// Secrets by name; absent when the Secret does not exist.
	Secrets map[string]Secret
}

// CheckCluster decides, with what the cluster holds, what Needs named.
func CheckCluster(p v1beta1.Policy, mc *v1alpha2.MiniCluster, e Exempt, c Cluster) Refusals {
	l := Needs(p, mc, e)
	var rs Refusals
	labelFix := fmt.Sprintf("label it %s=%s", v1beta1.LabelAllowed, v1beta1.AllowedValue)
	if sa := l.ServiceAccount; sa != "" && !v1beta1.LabelledAllowed(c.ServiceAccount) {
		why := fmt.Sprintf("ServiceAccount %q is not labelled %s=%s, nor one of policy.serviceAccounts.names (%s): pods run with its rights", sa, v1beta1.LabelAllowed, v1beta1.AllowedValue, list(p.ServiceAccounts.Names))
		if c.ServiceAccount == nil {
			why = fmt.Sprintf("ServiceAccount %q does not exist in namespace %s, and is not one of policy.serviceAccounts.names (%s)", sa, mc.Namespace, list(p.ServiceAccounts.Names))
		}
		rs = append(rs, Refusal{Key: "policy.serviceAccounts", Field: field.NewPath("spec", "pod", "serviceAccountName"), Why: why,
			Fix: "remove it to run as the namespace's default ServiceAccount, or " + askPlatform + " to " + labelFix})
	}
	wanted := map[string]bool{}
	for _, s := range l.Secrets {
		wanted[s] = true
	}
	// One refusal a Secret, at its first reference.
	for _, r := range secretRefs(mc, e) {
		if !wanted[r.name] {
			continue
		}
		wanted[r.name] = false
		sec, ok := c.Secrets[r.name]
		if ok && (v1beta1.LabelledAllowed(sec.Labels) || ownCertificate(mc, r.name, sec, c)) {
			continue
		}
		why := fmt.Sprintf("Secret %q is not labelled %s=%s, nor one of policy.secrets.names (%s)", r.name, v1beta1.LabelAllowed, v1beta1.AllowedValue, list(p.Secrets.Names))
		if !ok {
			why = fmt.Sprintf("Secret %q does not exist in namespace %s, and is not one of policy.secrets.names (%s)", r.name, mc.Namespace, list(p.Secrets.Names))
		}
		rs = append(rs, Refusal{Key: "policy.secrets", Field: r.path, Why: why, Fix: askPlatform + " to " + labelFix})
	}
	if l.Namespace && !p.NodePorts.NodePortsAllowed(c.NamespaceLabels) {
		rs = append(rs, Refusal{Key: "policy.nodePorts", Field: field.NewPath("spec", "flux", "bursting", "clusters"),
			Why: fmt.Sprintf("the root of a burst opens a NodePort on every node of the cluster, which namespace %s is not labelled for (%s=%s)", mc.Namespace, v1beta1.LabelNodePorts, v1beta1.AllowedValue),
			Fix: askPlatform + " to label the namespace, or leave out spec.flux.bursting.clusters"})
	}
	return rs
}

// serviceAccount is the ServiceAccount the pods run as.
func serviceAccount(mc *v1alpha2.MiniCluster) string {
	if sa := mc.Spec.Pod.ServiceAccountName; sa != "" {
		return sa
	}
	return "default"
}

type secretRef struct {
	name string
	path *field.Path
}

// ownCertificate tells whether sec, named name, is mc's own certificate
// Secret although mc does not compose it in this run: one its composite
// controls, or the burst controller's copy of a root's certificate
// written for this very MiniCluster, as its annotation records by the
// MiniCluster's uid. Never by name or labels: any Secret of the namespace
// can be named <name>-curve-cert, and a tenant writes its MiniCluster's
// labels (the Burst's among them) as it likes, or deletes the burst
// MiniCluster and creates its own of that name; its uid is the API
// server's.
func ownCertificate(mc *v1alpha2.MiniCluster, name string, sec Secret, c Cluster) bool {
	if name != plan.CurveSecretOf(mc.Name) {
		return false
	}
	return (c.CompositeUID != "" && sec.ControllerUID == c.CompositeUID) || (c.ClaimUID != "" && sec.ForClaimUID == c.ClaimUID)
}

// readsCertificateCopy tells whether mc reads a Secret of its own
// certificate's name that it does not compose, and so may need its claim's
// uid to tell the burst controller's copy for it from any other.
func readsCertificateCopy(mc *v1alpha2.MiniCluster, e Exempt) bool {
	own := plan.CurveSecretOf(mc.Name)
	for _, r := range secretRefs(mc, e) {
		if r.name == own {
			return true
		}
	}
	return false
}

// secretRefs are the Secrets mc reads, in claim order: environment
// variables, volumes, image pull secrets and the CURVE certificate, less
// those e exempts.
func secretRefs(mc *v1alpha2.MiniCluster, e Exempt) []secretRef {
	own := plan.CurveSecretOf(mc.Name)
	var out []secretRef
	add := func(name string, p *field.Path, pull bool) {
		switch {
		case name == "":
		case pull && slices.Contains(e.PullSecrets, name):
		case name == own && e.OwnCertificate:
		default:
			out = append(out, secretRef{name: name, path: p})
		}
	}
	for _, c := range containers(mc) {
		for _, k := range slices.Sorted(maps.Keys(c.c.Secrets)) {
			add(c.c.Secrets[k].Name, c.path.Child("secrets").Key(k).Child("name"), false)
		}
		for _, k := range slices.Sorted(maps.Keys(c.c.Volumes)) {
			add(c.c.Volumes[k].SecretName, c.path.Child("volumes").Key(k).Child("secretName"), false)
		}
		add(c.c.ImagePullSecret, c.path.Child("imagePullSecret"), true)
	}
	add(mc.Spec.Flux.Container.ImagePullSecret, field.NewPath("spec", "flux", "container", "imagePullSecret"), true)
	add(mc.Spec.Flux.CurveCertSecret, field.NewPath("spec", "flux", "curveCertSecret"), false)
	return out
}

type container struct {
	c    *v1alpha2.MiniClusterContainer
	path *field.Path
}

// containers are the containers and service containers of mc with their
// claim paths.
func containers(mc *v1alpha2.MiniCluster) []container {
	var out []container
	for i := range mc.Spec.Containers {
		out = append(out, container{&mc.Spec.Containers[i], field.NewPath("spec", "containers").Index(i)})
	}
	for i := range mc.Spec.Services {
		out = append(out, container{&mc.Spec.Services[i].MiniClusterContainer, field.NewPath("spec", "services").Index(i)})
	}
	return out
}

// list names the allowed names in a message.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "allowed: " + strings.Join(names, ", ")
}
