package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// LabelKueuePriorityClass is the label Kueue reads a Job's
// WorkloadPriorityClass from. The class is cluster-wide: a high one
// preempts other namespaces' workloads.
const LabelKueuePriorityClass = "kueue.x-k8s.io/priority-class"

// kueueKeys are Kueue's labels that policy.kueue decides, whatever the
// forbidden prefixes say.
var kueueKeys = []string{plan.LabelKueueQueueName, LabelKueuePriorityClass}

// MatchKey tells whether the label or annotation key k is one that the
// policy entry e names: "*" names every key; an entry ending in "/" is a
// domain and names the keys of that domain and of its subdomains (Kubernetes
// reserves kubernetes.io/ and k8s.io/ with all their subdomains, and
// statefulset.kubernetes.io/pod-name steers another workload's traffic
// just as well); any other entry names the one key it spells (a key
// without a prefix, such as aadpodidbinding).
func MatchKey(e, k string) bool {
	switch {
	case e == "":
		return false
	case e == v1beta1.Any:
		return true
	case strings.HasSuffix(e, "/"):
		prefix, _, ok := strings.Cut(k, "/")
		if !ok {
			return false
		}
		domain := strings.TrimSuffix(e, "/")
		return prefix == domain || strings.HasSuffix(prefix, "."+domain)
	}
	return e == k
}

// matchAny is the first entry of es that names k, "" for none.
func matchAny(es []string, k string) string {
	for _, e := range es {
		if MatchKey(e, k) {
			return e
		}
	}
	return ""
}

// checkLabels refuses label keys of a forbidden prefix. Kueue's queue and
// priority class are checkKueue's.
func checkLabels(p v1beta1.Policy, m map[string]string, path *field.Path) Refusals {
	var rs Refusals
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(kueueKeys, k) {
			continue
		}
		if e := matchAny(p.Metadata.ForbiddenPrefixes, k); e != "" {
			rs = append(rs, forbiddenKey(path.Key(k), "label", e))
		}
	}
	return rs
}

// checkAnnotations refuses annotation keys of a forbidden prefix, and any
// prefixed key whose prefix the platform does not allow: an annotation
// steers whatever reads it after the function judged the pod (a mesh's
// injector, a CNI, a cloud identity's webhook). A key without a prefix is
// private to the user by Kubernetes' convention, and allowed unless a
// forbidden entry names it.
func checkAnnotations(p v1beta1.Policy, m map[string]string, path *field.Path) Refusals {
	var rs Refusals
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if e := matchAny(p.Metadata.ForbiddenPrefixes, k); e != "" {
			rs = append(rs, forbiddenKey(path.Key(k), "annotation", e))
			continue
		}
		if strings.Contains(k, "/") && matchAny(p.Metadata.AllowedAnnotationPrefixes, k) == "" {
			rs = append(rs, Refusal{Key: "policy.metadata.allowedAnnotationPrefixes", Field: path.Key(k),
				Why: fmt.Sprintf("annotations are allowed only with a prefix the platform lists (%s): an annotation steers components that act on the pod after this check, such as a mesh's sidecar injector, a CNI or a cloud identity's webhook", list(p.Metadata.AllowedAnnotationPrefixes)),
				Fix: "remove it, or " + askPlatform + " to allow its prefix"})
		}
	}
	return rs
}

func forbiddenKey(path *field.Path, what, entry string) Refusal {
	why := fmt.Sprintf("%s keys of the domain %s and its subdomains are the platform's: they steer Kubernetes, Crossplane or another component", what, entry)
	if !strings.HasSuffix(entry, "/") {
		why = fmt.Sprintf("the %s %s is the platform's: it steers another component", what, entry)
	}
	return Refusal{Key: "policy.metadata.forbiddenPrefixes", Field: path, Why: why, Fix: "use a key of your own domain"}
}

// checkKueue decides Kueue's queue and priority class labels, in
// spec.jobLabels and spec.pod.labels (render puts a queue named on the
// pods on the Job too), and whether a MiniCluster must name a queue.
func checkKueue(p v1beta1.Policy, mc *v1alpha2.MiniCluster) Refusals {
	var rs Refusals
	k := p.Kueue
	named := false
	for _, src := range []struct {
		m    map[string]string
		path *field.Path
	}{
		{mc.Spec.JobLabels, field.NewPath("spec", "jobLabels")},
		{mc.Spec.Pod.Labels, field.NewPath("spec", "pod", "labels")},
	} {
		if q, ok := src.m[plan.LabelKueueQueueName]; ok {
			named = named || q != ""
			if !v1beta1.Allows(k.Queues, q) {
				rs = append(rs, Refusal{Key: "policy.kueue.queues", Field: src.path.Key(plan.LabelKueueQueueName),
					Why: fmt.Sprintf("queue %q is not one the platform lets MiniClusters name (%s)", q, list(k.Queues)),
					Fix: "name one of those queues, or " + askPlatform + " which queue to use"})
			}
		}
		if c, ok := src.m[LabelKueuePriorityClass]; ok && !v1beta1.Allows(k.PriorityClasses, c) {
			rs = append(rs, Refusal{Key: "policy.kueue.priorityClasses", Field: src.path.Key(LabelKueuePriorityClass),
				Why: fmt.Sprintf("priority class %q is not one the platform lets MiniClusters name (%s): a WorkloadPriorityClass is cluster-wide, and a higher one preempts other namespaces' jobs", c, list(k.PriorityClasses)),
				Fix: "remove it to run at the queue's default priority, or " + askPlatform + " to allow it"})
		}
	}
	if k.RequireQueue && !named {
		rs = append(rs, Refusal{Key: "policy.kueue.requireQueue", Field: field.NewPath("spec", "jobLabels").Key(plan.LabelKueueQueueName),
			Why: "the platform runs every MiniCluster through a Kueue queue, and this one names none",
			Fix: fmt.Sprintf("name a LocalQueue of the namespace (%s), or %s which queue to use", list(k.Queues), askPlatform)})
	}
	return rs
}

// enforceQueue puts the platform's default queue on a MiniCluster that
// names none.
func enforceQueue(p v1beta1.Policy, mc *v1alpha2.MiniCluster) {
	q := p.Kueue.DefaultQueue
	if q == "" || mc.Spec.JobLabels[plan.LabelKueueQueueName] != "" || mc.Spec.Pod.Labels[plan.LabelKueueQueueName] != "" {
		return
	}
	if mc.Spec.JobLabels == nil {
		mc.Spec.JobLabels = map[string]string{}
	}
	mc.Spec.JobLabels[plan.LabelKueueQueueName] = q
}
