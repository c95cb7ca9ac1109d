package render

import (
	"maps"
	"math"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// PodLabels are the labels of every broker pod. The MiniCluster's own
// labels are set last: the Services, the affinity and the scale selector
// rely on them, so a label of spec.pod.labels cannot replace them.
func PodLabels(in Input) map[string]string {
	mc := in.MiniCluster
	l := make(map[string]string, len(mc.Spec.Pod.Labels)+4)
	for k, v := range mc.Spec.Pod.Labels {
		l[k] = v
	}
	l[plan.LabelNamespace] = in.Namespace
	l[plan.LabelApp] = "flux-operator"
	l[plan.LabelName] = mc.Name
	l[plan.LabelSelector] = mc.Name
	return l
}

// podSpec has what the Job's pods and the services Pod share. Its
// restartPolicy is the claim's, which the services Pod keeps; Job sets its
// own (Never) for the brokers.
func podSpec(in Input) corev1.PodSpec {
	s := &in.MiniCluster.Spec
	p := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicy(s.Pod.RestartPolicy),
		ServiceAccountName:           s.Pod.ServiceAccountName,
		AutomountServiceAccountToken: ptr.To(s.Pod.AutomountServiceAccountToken),
		NodeSelector:                 emptyToNil(s.Pod.NodeSelector),
		DNSPolicy:                    corev1.DNSPolicy(s.Pod.DNSPolicy),
		ImagePullSecrets:             pullSecrets(in),
	}
	if s.Pod.RuntimeClassName != "" {
		p.RuntimeClassName = ptr.To(s.Pod.RuntimeClassName)
	}
	return p
}

// brokerPodSpec is the pod template of the Job: pod <name>-<i> is rank i,
// reachable as <name>-<i>.<headless service>.
func brokerPodSpec(in Input) corev1.PodSpec {
	mc := in.MiniCluster
	s := &mc.Spec
	pod := podSpec(in)
	pod.Subdomain = s.Network.HeadlessName
	pod.SetHostnameAsFQDN = ptr.To(false)
	pod.ShareProcessNamespace = ptr.To(s.ShareProcessNamespace)
	pod.SchedulerName = s.Pod.SchedulerName
	pod.HostIPC = s.Pod.HostIPC
	pod.HostPID = s.Pod.HostPID
	pod.Tolerations = tolerations(s.Pod.Tolerations)
	pod.SecurityContext = podSecurityContext(s.Pod.SecurityContext)
	// No overhead: the pods' RuntimeClass sets it, and internal/plan
	// refuses spec.pod.resources.
	pod.Affinity = affinity(mc)
	pod.InitContainers = []corev1.Container{initContainer(in)}
	for i := range s.Containers {
		pod.Containers = append(pod.Containers, brokerContainer(in, i))
	}
	pod.Volumes = append(systemVolumes(in), userVolumes(v1alpha2.Containers(s.Containers))...)
	if in.Restricted {
		restrictPod(&pod)
	}

	// The job controller, not the kubelet, restarts a crashed broker: the
	// pod failure policy needs restartPolicy Never, and spec.pod.restartPolicy
	// becomes how many times a broker is replaced (see JobLifecycle).
	pod.RestartPolicy = corev1.RestartPolicyNever
	return pod
}

// ServicesPod runs spec.services next to the brokers, addressable as
// <name>-services.<service>.<namespace>.
func ServicesPod(in Input) *corev1.Pod {
	mc := in.MiniCluster
	s := &mc.Spec
	labels := PodLabels(in)
	delete(labels, plan.LabelSelector) // not a broker: keep it out of the scale selector
	labels[plan.LabelJobName] = mc.Name
	pod := podSpec(in)
	pod.Hostname = in.Names.ServicesPod
	pod.ActiveDeadlineSeconds = servicesDeadline(s.DeadlineSeconds)
	pod.Subdomain = s.Network.HeadlessName
	pod.SetHostnameAsFQDN = ptr.To(false)
	for i := range s.Services {
		c := &s.Services[i].MiniClusterContainer
		pod.Containers = append(pod.Containers, serviceContainer(c, in.ServiceResources(i)))
		if c.ImagePullSecret != "" && !hasPullSecret(pod.ImagePullSecrets, c.ImagePullSecret) {
			pod.ImagePullSecrets = append(pod.ImagePullSecrets, corev1.LocalObjectReference{Name: c.ImagePullSecret})
		}
	}
	pod.Volumes = userVolumes(v1alpha2.Containers(s.Services))
	if in.RestrictedServices {
		restrictPod(&pod)
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: in.Names.ServicesPod, Namespace: in.Namespace, Labels: labels, Annotations: emptyToNil(s.Pod.Annotations)},
		Spec:       pod,
	}
}

// servicesDeadline is the services Pod's activeDeadlineSeconds: the Job's
// (spec.deadlineSeconds, which the platform's maximum bounds), so the
// services do not outlive the brokers' deadline. The API server refuses a
// pod's deadline above MaxInt32 seconds (68 years), which a Job's may
// exceed: that long is as good as no deadline, and a Pod it refuses would
// never run.
func servicesDeadline(jobDeadline *int64) *int64 {
	if jobDeadline == nil {
		return nil
	}
	return ptr.To(min(*jobDeadline, math.MaxInt32))
}

// pullSecrets are the pull secrets of the view, of every container and of
// the platform, each once, in that order.
func pullSecrets(in Input) []corev1.LocalObjectReference {
	s := &in.MiniCluster.Spec
	seen := map[string]bool{}
	var out []corev1.LocalObjectReference
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, corev1.LocalObjectReference{Name: name})
		}
	}
	add(s.Flux.Container.ImagePullSecret)
	for _, c := range s.Containers {
		add(c.ImagePullSecret)
	}
	for _, n := range in.ImagePullSecrets {
		add(n)
	}
	return out
}

func hasPullSecret(refs []corev1.LocalObjectReference, name string) bool {
	for _, r := range refs {
		if r.Name == name {
			return true
		}
	}
	return false
}

func affinity(mc *v1alpha2.MiniCluster) *corev1.Affinity {
	s := &mc.Spec
	var a corev1.Affinity
	if !s.Network.DisableAffinity {
		sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: plan.LabelName, Operator: metav1.LabelSelectorOpIn, Values: []string{mc.Name},
		}}}
		// Soft rules: one zone for a fast network, one pod per node so each
		// broker gets a node's worth of resources.
		a.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: "topology.kubernetes.io/zone"},
		}}}
		a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel.DeepCopy(), TopologyKey: "kubernetes.io/hostname"},
		}}}
	}
	if len(s.Pod.NodeAffinity) > 0 {
		var reqs []corev1.NodeSelectorRequirement
		for _, k := range slices.Sorted(maps.Keys(s.Pod.NodeAffinity)) {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: s.Pod.NodeAffinity[k]})
		}
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}},
		}}
	}
	if a.PodAffinity == nil && a.NodeAffinity == nil {
		return nil
	}
	return &a
}

func tolerations(ts []v1alpha2.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{
			Key: t.Key, Value: t.Value,
			Operator: corev1.TolerationOperator(t.Operator), Effect: corev1.TaintEffect(t.Effect),
		})
	}
	return out
}

// podSecurityContext leaves out what the claim does not ask for, so that
// an empty one renders as none rather than as {}.
func podSecurityContext(sc v1alpha2.PodSecurityContext) *corev1.PodSecurityContext {
	out := &corev1.PodSecurityContext{
		FSGroup: sc.FSGroup, RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup,
		RunAsNonRoot: sc.RunAsNonRoot, SupplementalGroups: sc.SupplementalGroups,
		SeccompProfile: seccompProfile(sc.SeccompProfile), SELinuxOptions: seLinuxOptions(sc.SELinuxOptions),
		AppArmorProfile: appArmorProfile(sc.AppArmorProfile),
	}
	if sc.SupplementalGroupsPolicy != "" {
		out.SupplementalGroupsPolicy = ptr.To(corev1.SupplementalGroupsPolicy(sc.SupplementalGroupsPolicy))
	}
	if sc.FSGroupChangePolicy != "" {
		out.FSGroupChangePolicy = ptr.To(corev1.PodFSGroupChangePolicy(sc.FSGroupChangePolicy))
	}
	for _, s := range sc.Sysctls {
		out.Sysctls = append(out.Sysctls, corev1.Sysctl{Name: s.Name, Value: s.Value})
	}
	if reflect.DeepEqual(out, &corev1.PodSecurityContext{}) {
		return nil
	}
	return out
}

// restrictPod gives a pod, and each of its containers, what the restricted
// Pod Security level requires and the claim left unset (see
// plan.Restricted).
func restrictPod(pod *corev1.PodSpec) {
	if pod.SecurityContext == nil {
		pod.SecurityContext = &corev1.PodSecurityContext{}
	}
	if pod.SecurityContext.RunAsNonRoot == nil {
		pod.SecurityContext.RunAsNonRoot = ptr.To(true)
	}
	if pod.SecurityContext.SeccompProfile == nil {
		pod.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for i := range pod.InitContainers {
		restrict(&pod.InitContainers[i])
	}
	for i := range pod.Containers {
		restrict(&pod.Containers[i])
	}
}
