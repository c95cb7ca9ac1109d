package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

func TestPodLabels(t *testing.T) {
	type want struct {
		broker, services map[string]string
	}
	cases := map[string]struct {
		reason string
		labels map[string]string
		want   want
	}{
		"Defaults": {
			reason: "Broker pods carry the labels the Services, the affinity and the scale selector select on; the services Pod is no broker (kept out of the scale selector) but is selected with the brokers by job-name, so the headless Service gives it its DNS name.",
			want: want{
				broker: map[string]string{
					plan.LabelNamespace: "tenant-a", plan.LabelApp: "flux-operator",
					plan.LabelName: "flux-sample", plan.LabelSelector: "flux-sample",
				},
				services: map[string]string{
					plan.LabelNamespace: "tenant-a", plan.LabelApp: "flux-operator",
					plan.LabelName: "flux-sample", plan.LabelJobName: "flux-sample",
				},
			},
		},
		"ClaimLabels": {
			reason: "spec.pod.labels are added to both pods.",
			labels: map[string]string{"team": "hpc"},
			want: want{
				broker: map[string]string{
					"team":              "hpc",
					plan.LabelNamespace: "tenant-a", plan.LabelApp: "flux-operator",
					plan.LabelName: "flux-sample", plan.LabelSelector: "flux-sample",
				},
				services: map[string]string{
					"team":              "hpc",
					plan.LabelNamespace: "tenant-a", plan.LabelApp: "flux-operator",
					plan.LabelName: "flux-sample", plan.LabelJobName: "flux-sample",
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.Labels = tc.labels
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
			})
			got := want{broker: Job(in).Spec.Template.Labels, services: ServicesPod(in).Labels}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\npod labels: -want, +got:\n%s", tc.reason, diff)
			}
			// The headless Service must select the services Pod too.
			for k, v := range BrokerService(in).Spec.Selector {
				if got.services[k] != v {
					t.Errorf("%s\nthe broker Service selects %s=%s, which the services Pod does not carry", tc.reason, k, v)
				}
			}
		})
	}
}

// podSettings are the fields of a pod spec taken from spec.pod and
// spec.network.
type podSettings struct {
	subdomain             string
	hostnameAsFQDN        *bool
	shareProcessNamespace *bool
	restartPolicy         corev1.RestartPolicy
	serviceAccountName    string
	automountToken        *bool
	nodeSelector          map[string]string
	dnsPolicy             corev1.DNSPolicy
	runtimeClassName      *string
	schedulerName         string
	hostIPC, hostPID      bool
	tolerations           []corev1.Toleration
	securityContext       *corev1.PodSecurityContext
	overhead              corev1.ResourceList
}

func podSettingsOf(p corev1.PodSpec) podSettings {
	return podSettings{
		subdomain: p.Subdomain, hostnameAsFQDN: p.SetHostnameAsFQDN, shareProcessNamespace: p.ShareProcessNamespace,
		restartPolicy: p.RestartPolicy, serviceAccountName: p.ServiceAccountName, automountToken: p.AutomountServiceAccountToken,
		nodeSelector: p.NodeSelector, dnsPolicy: p.DNSPolicy, runtimeClassName: p.RuntimeClassName, schedulerName: p.SchedulerName,
		hostIPC: p.HostIPC, hostPID: p.HostPID, tolerations: p.Tolerations, securityContext: p.SecurityContext, overhead: p.Overhead,
	}
}

func TestPodSettings(t *testing.T) {
	type want struct {
		broker, services podSettings
	}
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   want
	}{
		"Defaults": {
			reason: "Pods are <host>.<service> under the headless Service, with short hostnames, no service account token, and brokers restarted by the job controller, not the kubelet.",
			want: want{
				broker: podSettings{
					subdomain: "flux-sample", hostnameAsFQDN: ptr.To(false), shareProcessNamespace: ptr.To(false),
					restartPolicy: corev1.RestartPolicyNever, automountToken: ptr.To(false),
				},
				services: podSettings{
					subdomain: "flux-sample", hostnameAsFQDN: ptr.To(false),
					restartPolicy: corev1.RestartPolicyOnFailure, automountToken: ptr.To(false),
				},
			},
		},
		"ClaimSettings": {
			reason: "What spec.pod and spec.network say reaches the pods: service account, node selector, DNS policy and runtime class both pods; the scheduling, host IPC, security and overhead settings the Job's pods.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Network.HeadlessName = "brokers"
				m.Spec.ShareProcessNamespace = true
				m.Spec.Pod = v1alpha2.PodSpec{
					RestartPolicy:                "Never",
					ServiceAccountName:           "flux",
					AutomountServiceAccountToken: true,
					NodeSelector:                 map[string]string{"pool": "hpc"},
					DNSPolicy:                    "ClusterFirstWithHostNet",
					RuntimeClassName:             "kata",
					SchedulerName:                "volcano",
					HostIPC:                      true,
					Tolerations:                  []v1alpha2.Toleration{{Key: "gpu", Operator: "Exists", Effect: "NoSchedule"}},
					SecurityContext:              v1alpha2.PodSecurityContext{FSGroup: ptr.To[int64](1000), RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true)},
				}
			}},
			want: want{
				broker: podSettings{
					subdomain: "brokers", hostnameAsFQDN: ptr.To(false), shareProcessNamespace: ptr.To(true),
					restartPolicy: corev1.RestartPolicyNever, serviceAccountName: "flux", automountToken: ptr.To(true),
					nodeSelector: map[string]string{"pool": "hpc"}, dnsPolicy: corev1.DNSClusterFirstWithHostNet,
					runtimeClassName: ptr.To("kata"), schedulerName: "volcano", hostIPC: true,
					tolerations:     []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					securityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1000), RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true)},
				},
				services: podSettings{
					subdomain: "brokers", hostnameAsFQDN: ptr.To(false),
					restartPolicy: corev1.RestartPolicyNever, serviceAccountName: "flux", automountToken: ptr.To(true),
					nodeSelector: map[string]string{"pool": "hpc"}, dnsPolicy: corev1.DNSClusterFirstWithHostNet,
					runtimeClassName: ptr.To("kata"),
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, append(tc.opts, func(m *v1alpha2.MiniCluster) {
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
			})...)
			got := want{broker: podSettingsOf(Job(in).Spec.Template.Spec), services: podSettingsOf(ServicesPod(in).Spec)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, podSettings{})); diff != "" {
				t.Errorf("%s\npod settings: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAffinity(t *testing.T) {
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: plan.LabelName, Operator: metav1.LabelSelectorOpIn, Values: []string{"flux-sample"},
	}}}
	soft := corev1.Affinity{
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: "topology.kubernetes.io/zone"},
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: "kubernetes.io/hostname"},
		}}},
	}
	nodes := &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"hpc"}},
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		}}},
	}}
	cases := map[string]struct {
		reason          string
		disableAffinity bool
		nodeAffinity    map[string][]string
		want            *corev1.Affinity
	}{
		"Soft": {
			reason: "By default the brokers prefer one zone (a fast network) and one node each (a node's worth of resources), without failing to schedule.",
			want:   &soft,
		},
		"Disabled": {
			reason:          "network.disableAffinity drops the soft rules; with nothing else the pods have no affinity at all.",
			disableAffinity: true,
		},
		"NodeAffinity": {
			reason:       "pod.nodeAffinity requires each key (sorted, so the template is stable) to have one of its values, next to the soft rules.",
			nodeAffinity: map[string][]string{"zone": {"a", "b"}, "pool": {"hpc"}},
			want:         &corev1.Affinity{PodAffinity: soft.PodAffinity, PodAntiAffinity: soft.PodAntiAffinity, NodeAffinity: nodes},
		},
		"NodeAffinityOnly": {
			reason:          "Node affinity stays when the soft rules are disabled.",
			disableAffinity: true,
			nodeAffinity:    map[string][]string{"zone": {"a", "b"}, "pool": {"hpc"}},
			want:            &corev1.Affinity{NodeAffinity: nodes},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Network.DisableAffinity = tc.disableAffinity
				m.Spec.Pod.NodeAffinity = tc.nodeAffinity
			})
			if diff := cmp.Diff(tc.want, Job(in).Spec.Template.Spec.Affinity); diff != "" {
				t.Errorf("%s\nJob(...) affinity: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPullSecrets(t *testing.T) {
	type want struct {
		broker, services []corev1.LocalObjectReference
	}
	refs := func(names ...string) []corev1.LocalObjectReference {
		var out []corev1.LocalObjectReference
		for _, n := range names {
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
		return out
	}
	cases := map[string]struct {
		reason   string
		view     string
		runner   string
		services []string
		platform []string
		want     want
	}{
		"None": {
			reason: "Without pull secrets the pods have none.",
		},
		"OrderAndOnce": {
			reason:   "The view's, the containers' and the platform's pull secrets are each listed once, in that order; the services Pod adds its containers' after them.",
			view:     "view-creds",
			runner:   "app-creds",
			services: []string{"db-creds", "app-creds", "db-creds"},
			platform: []string{"platform", "view-creds"},
			want: want{
				broker:   refs("view-creds", "app-creds", "platform"),
				services: refs("view-creds", "app-creds", "platform", "db-creds"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Flux.Container.ImagePullSecret = tc.view
				m.Spec.Containers[0].ImagePullSecret = tc.runner
				for i, s := range tc.services {
					m.Spec.Services = append(m.Spec.Services, services(v1alpha2.MiniClusterContainer{Name: "svc-" + string(rune('a'+i)), Image: "postgres", ImagePullSecret: s})...)
				}
			})
			in.ImagePullSecrets = tc.platform
			got := want{broker: Job(in).Spec.Template.Spec.ImagePullSecrets}
			if len(tc.services) > 0 {
				got.services = ServicesPod(in).Spec.ImagePullSecrets
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nimage pull secrets: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestServicesPod(t *testing.T) {
	type want struct {
		name, namespace, hostname string
		annotations               map[string]string
		containers                []string
	}
	cases := map[string]struct {
		reason      string
		annotations map[string]string
		want        want
	}{
		"Addressable": {
			reason: "The services Pod is <name>-services, with that hostname under the brokers' subdomain so it resolves as <name>-services.<service>, and runs every service in order.",
			want:   want{name: "flux-sample-services", namespace: "tenant-a", hostname: "flux-sample-services", containers: []string{"db", "cache"}},
		},
		"Annotations": {
			reason:      "spec.pod.annotations are the services Pod's too.",
			annotations: map[string]string{"example.com/owner": "hpc"},
			want: want{
				name: "flux-sample-services", namespace: "tenant-a", hostname: "flux-sample-services",
				annotations: map[string]string{"example.com/owner": "hpc"}, containers: []string{"db", "cache"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Pod.Annotations = tc.annotations
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"}, v1alpha2.MiniClusterContainer{Name: "cache", Image: "redis"})
			})
			pod := ServicesPod(in)
			got := want{name: pod.Name, namespace: pod.Namespace, hostname: pod.Spec.Hostname, annotations: pod.Annotations}
			for _, c := range pod.Spec.Containers {
				got.containers = append(got.containers, c.Name)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nServicesPod(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestServicesPodDeadline(t *testing.T) {
	type want struct {
		services, job *int64
	}
	cases := map[string]struct {
		reason   string
		deadline *int64
		want     want
	}{
		"Default": {
			reason: "Without spec.deadlineSeconds the services Pod gets the Job's default deadline: it must not outlive the brokers.",
			want:   want{services: ptr.To(v1alpha2.DefaultDeadlineSeconds), job: ptr.To(v1alpha2.DefaultDeadlineSeconds)},
		},
		"Given": {
			reason:   "spec.deadlineSeconds (bounded by the platform's maximum) is the services Pod's deadline as it is the Job's.",
			deadline: ptr.To[int64](3600),
			want:     want{services: ptr.To[int64](3600), job: ptr.To[int64](3600)},
		},
		"AbovePodMaximum": {
			reason:   "The API server refuses a pod's activeDeadlineSeconds above 2147483647, which a Job's may exceed: the services Pod gets that maximum, 68 years.",
			deadline: ptr.To[int64](1 << 40),
			want:     want{services: ptr.To[int64](2147483647), job: ptr.To[int64](1 << 40)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.DeadlineSeconds = tc.deadline
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"})
			})
			got := want{services: ServicesPod(in).Spec.ActiveDeadlineSeconds, job: Job(in).Spec.ActiveDeadlineSeconds}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nactiveDeadlineSeconds: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
