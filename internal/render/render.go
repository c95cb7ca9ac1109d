// Package render turns a defaulted, valid MiniCluster into the Kubernetes
// objects that run it: the entrypoint ConfigMap, the CURVE Secret, the
// Services, the optional services Pod and the Indexed Job. It knows nothing
// of Crossplane, so the function, the CLI and tests share it.
//
// Output is deterministic: every list built from a map is sorted and nothing
// depends on time, so rendering the same input twice gives the same bytes.
package render

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/brokerconfig"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Names of the composed resources, stable across renders: Crossplane matches
// desired and observed resources by them.
const (
	KeyEntrypoint  = "entrypoint"
	KeyCurveCert   = "curve-cert"
	KeyService     = "service"
	KeyJob         = "job"
	KeyServicesPod = "services-pod"
	KeyLeadBroker  = "lead-broker"
	// KeyContainerServicePrefix + container name: a per-container Service.
	KeyContainerServicePrefix = "service-"
)

// BrokerPort is the port of the broker overlay network, the one broker.toml
// binds.
const BrokerPort = brokerconfig.DefaultPort

// Input is what one render depends on: a checked plan (every user mistake
// was found while it was made, so rendering cannot fail) and the CURVE
// certificate.
type Input struct {
	*plan.Plan
	// CurveCert is the certificate text for the <name>-curve-cert Secret.
	// Unused when the claim names its own Secret (flux.curveCertSecret).
	CurveCert []byte
}

// Object is one composed object and its stable resource name.
type Object struct {
	Name   string
	Object runtime.Object
}

// Render returns every object of the MiniCluster.
func Render(in Input) []Object {
	mc := in.MiniCluster
	objs := []Object{{Name: KeyEntrypoint, Object: ConfigMap(in)}}
	if mc.Spec.Flux.CurveCertSecret == "" {
		objs = append(objs, Object{Name: KeyCurveCert, Object: CurveSecret(in)})
	}
	objs = append(objs, Object{Name: KeyService, Object: BrokerService(in)})
	for _, svc := range ContainerServices(in) {
		objs = append(objs, Object{Name: KeyContainerServicePrefix + svc.Name, Object: svc})
	}
	if plan.ComposesLeadBroker(mc) {
		objs = append(objs, Object{Name: KeyLeadBroker, Object: LeadBrokerService(in)})
	}
	if len(mc.Spec.Services) > 0 {
		objs = append(objs, Object{Name: KeyServicesPod, Object: ServicesPod(in)})
	}
	return append(objs, Object{Name: KeyJob, Object: Job(in)})
}

// ConfigMap holds broker.toml, the host list and every script.
func ConfigMap(in Input) *corev1.ConfigMap {
	data := make(map[string]string, len(in.Files))
	for k, v := range in.Files {
		data[k] = v
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(in, in.Names.Entrypoint, nil),
		Data:       data,
	}
}

// CurveSecret holds the CURVE certificate, the instance's only secret.
func CurveSecret(in Input) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(in, in.Names.CurveSecret, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{entrypoint.CurveFile: in.CurveCert},
	}
}

// BrokerService gives the brokers their DNS names: headless over every pod
// (publishing pods before they are ready, because brokers must find each
// other to become ready), or with flux.minimalService a ClusterIP Service
// for the lead broker only.
func BrokerService(in Input) *corev1.Service {
	mc := in.MiniCluster
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(in, in.Names.Service, nil),
	}
	if mc.Spec.Flux.MinimalService {
		svc.Spec = corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			PublishNotReadyAddresses: true,
			Selector:                 map[string]string{plan.LabelJobName: mc.Name, plan.LabelCompletionIndex: "0"},
			Ports:                    []corev1.ServicePort{brokerPort()},
		}
		return svc
	}
	svc.Spec = corev1.ServiceSpec{
		ClusterIP:                corev1.ClusterIPNone,
		PublishNotReadyAddresses: true,
		Selector:                 map[string]string{plan.LabelJobName: mc.Name},
	}
	return svc
}

// LeadBrokerService exposes the root's rank-0 broker on a NodePort so burst
// clusters elsewhere can join.
func LeadBrokerService(in Input) *corev1.Service {
	mc := in.MiniCluster
	port := brokerPort()
	port.NodePort = mc.Spec.Flux.Bursting.LeadBrokerService.NodePort
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(in, in.Names.LeadBroker, nil),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeNodePort,
			PublishNotReadyAddresses: true,
			Selector:                 map[string]string{plan.LabelJobName: mc.Name, plan.LabelCompletionIndex: "0"},
			Ports:                    []corev1.ServicePort{port},
		},
	}
}

func brokerPort() corev1.ServicePort {
	return corev1.ServicePort{Name: "flux-broker", Port: BrokerPort, TargetPort: intstr.FromInt32(BrokerPort), Protocol: corev1.ProtocolTCP}
}

// ContainerServices are one ClusterIP Service per non-runner container with
// ports, named after the container.
func ContainerServices(in Input) []*corev1.Service {
	mc := in.MiniCluster
	var out []*corev1.Service
	for _, c := range mc.Spec.Containers {
		if c.RunFlux || len(c.Ports) == 0 {
			continue
		}
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: meta(in, c.Name, nil),
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: map[string]string{plan.LabelName: mc.Name},
			},
		}
		for _, p := range c.Ports {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: "port-" + strconv.Itoa(int(p)), Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP,
			})
		}
		out = append(out, svc)
	}
	return out
}

func meta(in Input, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Labels: labels}
}

// PodLabels are the labels of every broker pod.
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

// Job is the Indexed Job of brokers: pod <name>-<i> is rank i.
func Job(in Input) *batchv1.Job {
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
	if len(s.Pod.Resources) > 0 {
		pod.Overhead = resourceList(s.Pod.Resources)
	}
	pod.Affinity = affinity(mc)
	pod.InitContainers = []corev1.Container{initContainer(in)}
	for i := range s.Containers {
		pod.Containers = append(pod.Containers, container(in, i))
	}
	pod.Volumes = append(systemVolumes(in), userVolumes(s.Containers)...)

	// The job controller, not the kubelet, restarts a crashed broker: the
	// pod failure policy needs restartPolicy Never, and spec.pod.restartPolicy
	// becomes how many times a broker is replaced (see JobLifecycle).
	pod.RestartPolicy = corev1.RestartPolicyNever

	var labels map[string]string
	if len(s.JobLabels) > 0 {
		labels = s.JobLabels
	}
	lc := JobLifecycle(mc, pod.Containers)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(in, mc.Name, labels),
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			Parallelism:           ptr.To(in.Size),
			Completions:           ptr.To(in.Size),
			BackoffLimitPerIndex:  lc.BackoffLimitPerIndex,
			MaxFailedIndexes:      lc.MaxFailedIndexes,
			PodFailurePolicy:      lc.PodFailurePolicy,
			PodReplacementPolicy:  lc.PodReplacementPolicy,
			SuccessPolicy:         lc.SuccessPolicy,
			ActiveDeadlineSeconds: s.DeadlineSeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: PodLabels(in), Annotations: emptyToNil(s.Pod.Annotations)},
				Spec:       pod,
			},
		},
	}
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
		for _, k := range v1alpha2.SortedKeys(s.Pod.NodeAffinity) {
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

func podSecurityContext(sc v1alpha2.PodSecurityContext) *corev1.PodSecurityContext {
	if sc.FSGroup == nil && sc.RunAsUser == nil && sc.RunAsGroup == nil && sc.RunAsNonRoot == nil && len(sc.SupplementalGroups) == 0 {
		return nil
	}
	return &corev1.PodSecurityContext{
		FSGroup: sc.FSGroup, RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup,
		RunAsNonRoot: sc.RunAsNonRoot, SupplementalGroups: sc.SupplementalGroups,
	}
}

func securityContext(sc v1alpha2.SecurityContext) *corev1.SecurityContext {
	out := &corev1.SecurityContext{RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup}
	if sc.Privileged {
		out.Privileged = ptr.To(true)
	}
	if len(sc.AddCapabilities) > 0 {
		caps := make([]corev1.Capability, 0, len(sc.AddCapabilities))
		for _, c := range sc.AddCapabilities {
			caps = append(caps, corev1.Capability(c))
		}
		out.Capabilities = &corev1.Capabilities{Add: caps}
	}
	if *out == (corev1.SecurityContext{}) {
		return nil
	}
	return out
}

func resourceList(rl v1alpha2.ContainerResource) corev1.ResourceList {
	if len(rl) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range rl {
		// Validated already; a bad quantity never reaches here.
		if q, err := resource.ParseQuantity(v.String()); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

func resources(r v1alpha2.ContainerResources) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: resourceList(r.Limits), Requests: resourceList(r.Requests)}
}

func pullPolicy(pullAlways bool, policy string) corev1.PullPolicy {
	switch {
	case pullAlways:
		return corev1.PullAlways
	case policy != "":
		return corev1.PullPolicy(policy)
	default:
		return corev1.PullIfNotPresent
	}
}

func initContainer(in Input) corev1.Container {
	f := &in.MiniCluster.Spec.Flux
	return corev1.Container{
		Name:            f.Container.Name,
		Image:           f.Container.Image,
		ImagePullPolicy: pullPolicy(f.Container.PullAlways, ""),
		WorkingDir:      f.Container.WorkingDir,
		Command:         []string{"/bin/bash", entrypoint.Dir + "/" + entrypoint.InitKey},
		Resources:       resources(f.Container.Resources),
		SecurityContext: securityContext(f.Container.SecurityContext),
		VolumeMounts: []corev1.VolumeMount{
			{Name: plan.VolumeHome, MountPath: entrypoint.HomeDir},
			{Name: f.Container.Name, MountPath: f.Container.MountPath},
			{Name: plan.VolumeEntrypoint, MountPath: entrypoint.Dir, ReadOnly: true},
		},
	}
}

func container(in Input, i int) corev1.Container {
	mc := in.MiniCluster
	c := &mc.Spec.Containers[i]
	f := &mc.Spec.Flux
	out := corev1.Container{
		Name:            c.Name,
		Image:           c.Image,
		ImagePullPolicy: pullPolicy(c.PullAlways, c.ImagePullPolicy),
		WorkingDir:      c.WorkingDir,
		Stdin:           true,
		TTY:             true,
		Lifecycle:       lifecycle(c.LifeCycle),
		Resources:       resources(c.Resources),
		SecurityContext: securityContext(c.SecurityContext),
		Ports:           containerPorts(c.Ports),
		Env:             env(c),
		VolumeMounts: append([]corev1.VolumeMount{
			{Name: plan.VolumeHome, MountPath: entrypoint.HomeDir},
			{Name: f.Container.Name, MountPath: f.Container.MountPath},
			{Name: plan.VolumeEntrypoint, MountPath: entrypoint.Dir, ReadOnly: true},
			{Name: plan.VolumeSoftware, MountPath: entrypoint.SoftwareDir},
		}, userMounts(c)...),
	}
	switch {
	case c.RunFlux:
		out.Name = mc.Name
		out.Command = []string{"/bin/bash", entrypoint.Dir + "/" + entrypoint.RunnerKey(i)}
		out.VolumeMounts = append(out.VolumeMounts, corev1.VolumeMount{Name: plan.VolumeCurveCert, MountPath: entrypoint.CurveDir, ReadOnly: true})
		// Ready means this pod's broker is up: its local socket exists.
		out.ReadinessProbe = &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"/bin/sh", "-c", "test -S " + entrypoint.Layout{MountPath: f.Container.MountPath}.Socket()},
			}},
			PeriodSeconds:    5,
			FailureThreshold: 1,
		}
	case !c.NoWrapEntrypoint:
		out.Command = []string{"/bin/bash", entrypoint.Dir + "/" + entrypoint.SidecarKey(i)}
	}
	return out
}

// lifecycle hooks run through a shell, so a hook can have arguments.
func lifecycle(lc v1alpha2.LifeCycle) *corev1.Lifecycle {
	if lc.PostStartExec == "" && lc.PreStopExec == "" {
		return nil
	}
	out := &corev1.Lifecycle{}
	if lc.PostStartExec != "" {
		out.PostStart = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", lc.PostStartExec}}}
	}
	if lc.PreStopExec != "" {
		out.PreStop = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", lc.PreStopExec}}}
	}
	return out
}

func containerPorts(ports []int32) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		out = append(out, corev1.ContainerPort{ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	return out
}

func env(c *v1alpha2.MiniClusterContainer) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range v1alpha2.SortedKeys(c.Environment) {
		out = append(out, corev1.EnvVar{Name: k, Value: c.Environment[k]})
	}
	for _, k := range v1alpha2.SortedKeys(c.Secrets) {
		s := c.Secrets[k]
		out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key},
		}})
	}
	return out
}

func systemVolumes(in Input) []corev1.Volume {
	mc := in.MiniCluster
	return []corev1.Volume{
		{Name: plan.VolumeSoftware, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: plan.VolumeHome, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: mc.Spec.Flux.Container.Name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: plan.VolumeEntrypoint, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: in.Names.Entrypoint},
			DefaultMode:          ptr.To[int32](0o755),
		}}},
		// World-readable so a container of any uid can copy it; the runner
		// installs its own 0600 copy for the broker.
		{Name: plan.VolumeCurveCert, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  in.Names.CurveSecret,
			Items:       []corev1.KeyToPath{{Key: entrypoint.CurveFile, Path: entrypoint.CurveFile}},
			DefaultMode: ptr.To[int32](0o444),
		}}},
	}
}

// userVolumes are the volumes the containers declare, once per name, sorted.
func userVolumes(cs []v1alpha2.MiniClusterContainer) []corev1.Volume {
	byName := map[string]v1alpha2.ContainerVolume{}
	for _, c := range cs {
		for name, v := range c.Volumes {
			if _, ok := byName[name]; !ok {
				byName[name] = v
			}
		}
	}
	names := v1alpha2.SortedKeys(byName)
	out := make([]corev1.Volume, 0, len(names))
	for _, name := range names {
		out = append(out, corev1.Volume{Name: name, VolumeSource: volumeSource(byName[name])})
	}
	return out
}

func volumeSource(v v1alpha2.ContainerVolume) corev1.VolumeSource {
	switch {
	case v.CSIDriver != "":
		return corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: v.CSIDriver, ReadOnly: ptr.To(v.ReadOnly), VolumeAttributes: emptyToNil(v.CSIDriverAttributes)}}
	case v.SecretName != "":
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: v.SecretName, Items: keyToPaths(v.Items)}}
	case v.EmptyDir:
		e := &corev1.EmptyDirVolumeSource{}
		if v.EmptyDirMedium == "memory" {
			e.Medium = corev1.StorageMediumMemory
		}
		if v.EmptyDirSizeLimit != "" {
			if q, err := resource.ParseQuantity(v.EmptyDirSizeLimit); err == nil {
				e.SizeLimit = &q
			}
		}
		return corev1.VolumeSource{EmptyDir: e}
	case v.HostPath != "":
		return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: v.HostPath, Type: ptr.To(corev1.HostPathDirectory)}}
	case v.ConfigMapName != "":
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMapName}, Items: keyToPaths(v.Items)}}
	default:
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ClaimName, ReadOnly: v.ReadOnly}}
	}
}

func keyToPaths(items map[string]string) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, k := range v1alpha2.SortedKeys(items) {
		out = append(out, corev1.KeyToPath{Key: k, Path: items[k]})
	}
	return out
}

func userMounts(c *v1alpha2.MiniClusterContainer) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, name := range v1alpha2.SortedKeys(c.Volumes) {
		v := c.Volumes[name]
		out = append(out, corev1.VolumeMount{Name: name, MountPath: plan.MountPath(v), ReadOnly: v.ReadOnly})
	}
	return out
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
	pod.Subdomain = s.Network.HeadlessName
	pod.SetHostnameAsFQDN = ptr.To(false)
	for i := range s.Services {
		c := &s.Services[i]
		pod.Containers = append(pod.Containers, corev1.Container{
			Name:            c.Name,
			Image:           c.Image,
			ImagePullPolicy: pullPolicy(c.PullAlways, c.ImagePullPolicy),
			WorkingDir:      c.WorkingDir,
			Command:         serviceCommand(c),
			Stdin:           true,
			TTY:             true,
			Lifecycle:       lifecycle(c.LifeCycle),
			Resources:       resources(c.Resources),
			SecurityContext: securityContext(c.SecurityContext),
			Ports:           containerPorts(c.Ports),
			Env:             env(c),
			VolumeMounts:    userMounts(c),
		})
		if c.ImagePullSecret != "" && !hasPullSecret(pod.ImagePullSecrets, c.ImagePullSecret) {
			pod.ImagePullSecrets = append(pod.ImagePullSecrets, corev1.LocalObjectReference{Name: c.ImagePullSecret})
		}
	}
	pod.Volumes = userVolumes(s.Services)
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: in.Names.ServicesPod, Namespace: in.Namespace, Labels: labels, Annotations: emptyToNil(s.Pod.Annotations)},
		Spec:       pod,
	}
}

// serviceCommand runs a service's command through a shell when it has one;
// otherwise the image's entrypoint runs.
func serviceCommand(c *v1alpha2.MiniClusterContainer) []string {
	if c.Command == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", c.Command}
}

func hasPullSecret(refs []corev1.LocalObjectReference, name string) bool {
	for _, r := range refs {
		if r.Name == name {
			return true
		}
	}
	return false
}

func emptyToNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// String describes an object for messages.
func (o Object) String() string { return fmt.Sprintf("%s (%T)", o.Name, o.Object) }
