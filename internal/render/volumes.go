package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"maps"
	"slices"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// systemVolumes are the volumes of every broker pod besides the users':
// the software and home directories, the Flux view the init container
// fills, the scripts and the certificate.
func systemVolumes(in Input) []corev1.Volume {
	mc := in.MiniCluster
	var software []corev1.Volume
	if !mc.Spec.Flux.Container.Disable {
		software = []corev1.Volume{{Name: plan.VolumeSoftware, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	return append(software, []corev1.Volume{
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
			Items:       []corev1.KeyToPath{{Key: v1alpha2.CurveCertKey, Path: entrypoint.CurveFile}},
			DefaultMode: ptr.To[int32](0o444),
		}}},
	}...)
}

// viewMounts are the mounts the init container and every broker container
// share: the init container writes Flux's configuration and view into them
// for the others to run from.
func viewMounts(in Input) []corev1.VolumeMount {
	view := &in.MiniCluster.Spec.Flux.Container
	return []corev1.VolumeMount{
		{Name: plan.VolumeHome, MountPath: entrypoint.HomeDir},
		{Name: view.Name, MountPath: view.MountPath},
		{Name: plan.VolumeEntrypoint, MountPath: entrypoint.Dir, ReadOnly: true},
	}
}

// brokerMounts are the mounts of a container of spec.containers, in this
// order: the view's, the software directory the view's binaries point
// into, the container's own volumes and, for the runner only, the
// certificate its broker needs. Without a view (flux.container.disable)
// the image brings Flux, often in its own /opt/software (spack): an empty
// directory mounted there would hide it.
func brokerMounts(in Input, c *v1alpha2.MiniClusterContainer) []corev1.VolumeMount {
	out := viewMounts(in)
	if !in.MiniCluster.Spec.Flux.Container.Disable {
		out = append(out, corev1.VolumeMount{Name: plan.VolumeSoftware, MountPath: entrypoint.SoftwareDir})
	}
	out = append(out, userMounts(c)...)
	if c.RunFlux {
		out = append(out, corev1.VolumeMount{Name: plan.VolumeCurveCert, MountPath: entrypoint.CurveDir, ReadOnly: true})
	}
	return out
}

// userVolumes are the volumes the containers declare, once per name (the
// plan checked that one name means one source), sorted.
func userVolumes(cs []*v1alpha2.MiniClusterContainer) []corev1.Volume {
	byName := map[string]v1alpha2.ContainerVolume{}
	for _, c := range cs {
		for name, v := range c.Volumes {
			if _, ok := byName[name]; !ok {
				byName[name] = v
			}
		}
	}
	names := slices.Sorted(maps.Keys(byName))
	out := make([]corev1.Volume, 0, len(names))
	for _, name := range names {
		out = append(out, corev1.Volume{Name: name, VolumeSource: volumeSource(byName[name])})
	}
	return out
}

// volumeSource picks the one source a volume declares; a volume that names
// none of the others is a PersistentVolumeClaim.
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
	for _, k := range slices.Sorted(maps.Keys(items)) {
		out = append(out, corev1.KeyToPath{Key: k, Path: items[k]})
	}
	return out
}

// userMounts are the mounts of the volumes a container declares, sorted by
// volume name.
func userMounts(c *v1alpha2.MiniClusterContainer) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, name := range slices.Sorted(maps.Keys(c.Volumes)) {
		v := c.Volumes[name]
		out = append(out, corev1.VolumeMount{Name: name, MountPath: plan.MountPath(v), ReadOnly: v.ReadOnly})
	}
	return out
}
