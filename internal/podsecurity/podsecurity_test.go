package podsecurity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/utils/ptr"
)

// brokers is a broker pod template as the MiniCluster composes it, with no
// security settings: a root view init container and runner, emptyDir and
// ConfigMap volumes.
func brokers(opts ...func(*corev1.PodSpec)) Template {
	t := Template{
		Name: "the broker pods",
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "flux-view", Image: "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"}},
			Containers:     []corev1.Container{{Name: "flux-sample", Image: "rockylinux:9"}},
			Volumes: []corev1.Volume{
				{Name: "flux-view", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "flux-entrypoint", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			},
		},
		Pod: field.NewPath("spec", "pod"),
		Containers: map[string]*field.Path{
			"flux-view":   field.NewPath("spec", "flux", "container"),
			"flux-sample": field.NewPath("spec", "containers").Index(0),
		},
		Volumes: map[string]*field.Path{},
	}
	for _, o := range opts {
		o(&t.Spec)
	}
	return t
}

// restricted gives the pod what restricted requires: as render does for a
// non-root MiniCluster.
func restricted(p *corev1.PodSpec) {
	p.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	for _, cs := range [][]corev1.Container{p.InitContainers, p.Containers} {
		for i := range cs {
			cs[i].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		}
	}
}

func runner(f func(*corev1.SecurityContext)) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		if p.Containers[0].SecurityContext == nil {
			p.Containers[0].SecurityContext = &corev1.SecurityContext{}
		}
		f(p.Containers[0].SecurityContext)
	}
}

func TestCheck(t *testing.T) {
	type want struct {
		results []Result
		errs    int
	}
	cases := map[string]struct {
		reason   string
		labels   map[string]string
		template Template
		want     want
	}{
		"NoLabels": {
			reason:   "A namespace without labels is privileged, as the admission default: nothing to say.",
			template: brokers(),
		},
		"BaselineDefault": {
			reason:   "The pods the MiniCluster composes by default pass baseline.",
			labels:   map[string]string{"pod-security.kubernetes.io/enforce": "baseline"},
			template: brokers(),
		},
		"RestrictedNonRoot": {
			reason:   "With the settings render gives a non-root MiniCluster, the pods pass restricted.",
			labels:   map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
			template: brokers(restricted),
		},
		"RestrictedRoot": {
			reason:   "The default pods fail restricted: enforce and (defaulted to it) warn name each violation and the fields of each container.",
			labels:   map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.30"},
			template: brokers(),
			want: want{results: func() []Result {
				vs := []Violation{
					{Pods: "the broker pods", Reason: "allowPrivilegeEscalation != false", Detail: `containers "flux-view", "flux-sample" must set securityContext.allowPrivilegeEscalation=false`, Fields: []string{"spec.containers[0].securityContext.allowPrivilegeEscalation", "spec.flux.container.securityContext.allowPrivilegeEscalation"}},
					{Pods: "the broker pods", Reason: "unrestricted capabilities", Detail: `containers "flux-view", "flux-sample" must set securityContext.capabilities.drop=["ALL"]`, Fields: []string{"spec.containers[0].securityContext.capabilities", "spec.flux.container.securityContext.capabilities"}},
					{Pods: "the broker pods", Reason: "runAsNonRoot != true", Detail: `pod or containers "flux-view", "flux-sample" must set securityContext.runAsNonRoot=true`, Fields: []string{"spec.containers[0].securityContext.runAsNonRoot", "spec.flux.container.securityContext.runAsNonRoot"}},
					{Pods: "the broker pods", Reason: "seccompProfile", Detail: `pod or containers "flux-view", "flux-sample" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`, Fields: []string{"spec.containers[0].securityContext.seccompProfile", "spec.flux.container.securityContext.seccompProfile"}},
				}
				return []Result{
					{Mode: ModeEnforce, Level: "restricted", Version: mustVersion(t, "v1.30"), Violations: vs},
					{Mode: ModeWarn, Level: "restricted", Version: mustVersion(t, "v1.30"), Violations: vs},
				}
			}()},
		},
		"PrivilegedRunner": {
			reason:   "A privileged runner fails baseline: the field is the runner's.",
			labels:   map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "privileged"},
			template: brokers(runner(func(sc *corev1.SecurityContext) { sc.Privileged = ptr.To(true) })),
			want: want{results: []Result{{Mode: ModeEnforce, Level: "baseline", Version: mustVersion(t, "latest"), Violations: []Violation{
				{Pods: "the broker pods", Reason: "privileged", Detail: `container "flux-sample" must not set securityContext.privileged=true`, Fields: []string{"spec.containers[0].securityContext.privileged"}},
			}}}},
		},
		"HostIPCAndHostPath": {
			reason: "Pod-level and volume violations name the pod's field and the volume's declaration; warn alone is not enforced.",
			labels: map[string]string{"pod-security.kubernetes.io/warn": "baseline"},
			template: func() Template {
				t := brokers(func(p *corev1.PodSpec) {
					p.HostIPC = true
					p.Volumes = append(p.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}})
				})
				t.Volumes["data"] = field.NewPath("spec", "containers").Index(0).Child("volumes").Key("data")
				return t
			}(),
			want: want{results: []Result{{Mode: ModeWarn, Level: "baseline", Version: mustVersion(t, "latest"), Violations: []Violation{
				{Pods: "the broker pods", Reason: "host namespaces", Detail: "hostIPC=true", Fields: []string{"spec.pod.hostIPC"}},
				{Pods: "the broker pods", Reason: "hostPath volumes", Detail: `volume "data"`, Fields: []string{"spec.containers[0].volumes[data]"}},
			}}}},
		},
		"PodLevelRunAsNonRootFalse": {
			reason: "A pod-level setting that fails names the pod's field, not every container that inherits it.",
			labels: map[string]string{"pod-security.kubernetes.io/audit": "restricted"},
			template: brokers(restricted, func(p *corev1.PodSpec) {
				p.SecurityContext.RunAsNonRoot = ptr.To(false)
			}),
			want: want{results: []Result{{Mode: ModeAudit, Level: "restricted", Version: mustVersion(t, "latest"), Violations: []Violation{
				{Pods: "the broker pods", Reason: "runAsNonRoot != true", Detail: "pod must not set securityContext.runAsNonRoot=false", Fields: []string{"spec.pod.securityContext.runAsNonRoot"}},
			}}}},
		},
		"UnparsableLevel": {
			reason:   "As the API server, an enforce level it cannot parse is restricted; the label is reported.",
			labels:   map[string]string{"pod-security.kubernetes.io/enforce": "strict"},
			template: brokers(restricted),
			want:     want{errs: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs, err := Check(tc.labels, tc.template)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.results, got, cmpopts.EquateComparable(api.Version{})); diff != "" {
				t.Errorf("%s\nresults: -want, +got:\n%s", tc.reason, diff)
			}
			if len(errs) != tc.want.errs {
				t.Errorf("%s\nlabel errors %v, want %d", tc.reason, errs, tc.want.errs)
			}
		})
	}
}

func TestViolationString(t *testing.T) {
	v := Violation{Pods: "the broker pods", Reason: "privileged", Detail: `container "x" must not set securityContext.privileged=true`, Fields: []string{"spec.containers[0].securityContext.privileged"}}
	want := `privileged (container "x" must not set securityContext.privileged=true): set spec.containers[0].securityContext.privileged`
	if got := v.String(); got != want {
		t.Errorf("String(): got %q, want %q", got, want)
	}
}

func mustVersion(t *testing.T, v string) api.Version {
	t.Helper()
	out, err := api.ParseVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
