package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// wantSystemVolumes are the MiniCluster's own volumes of flux-sample's
// broker pods with the view volume named view.
func wantSystemVolumes(view string) []corev1.Volume {
	return []corev1.Volume{
		{Name: "spack-software", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "flux-operator-home", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: view, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "flux-entrypoint", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "flux-sample-entrypoint"},
			DefaultMode:          ptr.To[int32](0o755),
		}}},
		{Name: "flux-curve-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{ //nolint:gosec // G101: a Secret name in a test, not a credential
			SecretName:  "flux-sample-curve-cert",
			Items:       []corev1.KeyToPath{{Key: "curve.cert", Path: "curve.cert"}},
			DefaultMode: ptr.To[int32](0o444),
		}}},
	}
}

func TestSystemVolumes(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   []corev1.Volume
	}{
		"Defaults": {
			reason: "Every broker pod has the software and home directories, the view (named after flux.container), the scripts from the entrypoint ConfigMap and the certificate.",
			want:   wantSystemVolumes("flux-view"),
		},
		"ClaimVolumesLast": {
			reason: "The claim's volumes follow the MiniCluster's own; a renamed view renames its volume.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Flux.Container.Name = "view"
				m.Spec.Containers[0].Volumes = map[string]v1alpha2.ContainerVolume{"data": {Path: "/data", ClaimName: "data"}}
			}},
			want: append(wantSystemVolumes("view"),
				corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}),
		},
		"NoSoftwareWithoutView": {
			reason: "With flux.container.disable the image brings Flux, often in its own /opt/software: no empty directory is mounted over it (found on a real node).",
			opts:   []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) { m.Spec.Flux.Container.Disable = true }},
			want:   wantSystemVolumes("flux-view")[1:],
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Job(input(t, tc.opts...)).Spec.Template.Spec.Volumes
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nJob(...) volumes: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUserVolumes(t *testing.T) {
	cases := map[string]struct {
		reason     string
		containers []v1alpha2.MiniClusterContainer
		want       []corev1.Volume
	}{
		"SharedByName": {
			reason: "A volume two containers declare is one volume of the pod; volumes are sorted by name, whichever container declares them.",
			containers: []v1alpha2.MiniClusterContainer{
				{Name: "a", Image: "nginx", Volumes: map[string]v1alpha2.ContainerVolume{"zeta": {Path: "/z", ClaimName: "z"}, "data": {Path: "/data", ClaimName: "data"}}},
				{Name: "b", Image: "nginx", Volumes: map[string]v1alpha2.ContainerVolume{"data": {Path: "/srv/data", ClaimName: "data"}, "alpha": {Path: "/a", ClaimName: "a"}}},
			},
			want: []corev1.Volume{
				{Name: "alpha", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "a"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "zeta", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "z"}}},
			},
		},
		"Sources": {
			reason: "Each kind of source becomes its Kubernetes volume source: items sorted by key, a memory emptyDir with its size limit, a hostPath that must be a directory, readOnly carried to the CSI and claim sources.",
			containers: []v1alpha2.MiniClusterContainer{{Name: "a", Image: "nginx", Volumes: map[string]v1alpha2.ContainerVolume{
				"csi":   {Path: "/csi", CSIDriver: "csi.example.com", ReadOnly: true, CSIDriverAttributes: map[string]string{"bucket": "b"}},
				"creds": {Path: "/creds", SecretName: "creds", Items: map[string]string{"user": "u", "password": "p"}},
				"shm":   {EmptyDir: true, EmptyDirMedium: "memory", EmptyDirSizeLimit: "1Gi"},
				"host":  {Path: "/host", HostPath: "/data"},
				"conf":  {Path: "/conf", ConfigMapName: "settings"},
				"pvc":   {Path: "/pvc", ClaimName: "claim", ReadOnly: true},
			}}},
			want: []corev1.Volume{
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", Items: []corev1.KeyToPath{{Key: "password", Path: "p"}, {Key: "user", Path: "u"}}}}},
				{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "csi.example.com", ReadOnly: ptr.To(true), VolumeAttributes: map[string]string{"bucket": "b"}}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data", Type: ptr.To(corev1.HostPathDirectory)}}},
				{Name: "pvc", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim", ReadOnly: true}}},
				{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The same declarations make the same volumes in the broker pods
			// and in the services Pod.
			runner := v1alpha2.MiniClusterContainer{Image: "rockylinux:9", Command: "hostname", RunFlux: true}
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers = append([]v1alpha2.MiniClusterContainer{runner}, tc.containers...)
				m.Spec.Services = services(tc.containers...)
			})
			job := Job(in).Spec.Template.Spec.Volumes
			if diff := cmp.Diff(tc.want, job[len(wantSystemVolumes("flux-view")):]); diff != "" {
				t.Errorf("%s\nJob(...) volumes after the MiniCluster's: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, ServicesPod(in).Spec.Volumes); diff != "" {
				t.Errorf("%s\nServicesPod(...) volumes: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUserMounts(t *testing.T) {
	cases := map[string]struct {
		reason  string
		volumes map[string]v1alpha2.ContainerVolume
		want    []corev1.VolumeMount
	}{
		"PathAndReadOnly": {
			reason:  "A volume is mounted at its path, read-only when it says so, in the order of the volumes' names.",
			volumes: map[string]v1alpha2.ContainerVolume{"b": {Path: "/b", ClaimName: "b", ReadOnly: true}, "a": {Path: "/a", ClaimName: "a"}},
			want:    []corev1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "b", MountPath: "/b", ReadOnly: true}},
		},
		"EmptyDirWithoutPath": {
			reason:  "An emptyDir without a path is shared memory, mounted at /dev/shm.",
			volumes: map[string]v1alpha2.ContainerVolume{"shm": {EmptyDir: true, EmptyDirMedium: "memory"}},
			want:    []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, func(m *v1alpha2.MiniCluster) {
				m.Spec.Containers[0].Volumes = tc.volumes
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", Volumes: tc.volumes})
			})
			runner := Job(in).Spec.Template.Spec.Containers[0].VolumeMounts
			// Between the MiniCluster's mounts and the certificate's.
			if diff := cmp.Diff(tc.want, runner[len(wantBrokerMounts):len(runner)-1]); diff != "" {
				t.Errorf("%s\nJob(...) runner's own mounts: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, ServicesPod(in).Spec.Containers[0].VolumeMounts); diff != "" {
				t.Errorf("%s\nServicesPod(...) mounts: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEveryMountHasAVolume(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
	}{
		"HelloWorld": {
			reason: "The MiniCluster's own mounts (home, view, scripts, software, certificate) resolve to its own volumes; the API server refuses a mount of a volume the pod lacks.",
		},
		"VolumesSidecarsServices": {
			reason: "Shared, per-container and per-service volumes and a renamed view all resolve within their own pod.",
			opts: []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) {
				m.Spec.Flux.Container.Name = "view"
				data := map[string]v1alpha2.ContainerVolume{"data": {Path: "/data", ClaimName: "data"}}
				m.Spec.Containers = []v1alpha2.MiniClusterContainer{
					{Image: "rockylinux:9", Command: "hostname", RunFlux: true, Volumes: data},
					{Name: "web", Image: "nginx", Volumes: map[string]v1alpha2.ContainerVolume{"data": data["data"], "shm": {EmptyDir: true}}},
				}
				m.Spec.Services = services(v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", Volumes: map[string]v1alpha2.ContainerVolume{"db": {Path: "/db", ClaimName: "db"}}})
			}},
		},
	}
	check := func(t *testing.T, reason, pod string, spec corev1.PodSpec) {
		t.Helper()
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
		}
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					t.Errorf("%s\n%s: container %s mounts %q, which is not a volume of the pod", reason, pod, c.Name, m.Name)
				}
			}
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, tc.opts...)
			check(t, tc.reason, "Job", Job(in).Spec.Template.Spec)
			if len(in.MiniCluster.Spec.Services) > 0 {
				check(t, tc.reason, "ServicesPod", ServicesPod(in).Spec)
			}
		})
	}
}
