package convert

import (
	"fmt"
	"maps"
	"slices"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// hostpath is the v1alpha1 storage class of a volume the node provides.
const hostpath = "hostpath"

// claimName is the PersistentVolumeClaim v1alpha1 made for volume v.
func claimName(v string) string { return v + "-claim" }

// volumes maps the containers' references to top-level volumes. v1alpha1
// made a PersistentVolume <v> and a claim <v>-claim for each; v1alpha2
// makes none. A hostpath volume becomes a hostPath volume, which is what
// its PersistentVolume was; any other is mounted by its claim's name,
// which the user now makes.
func (c *converter) volumes() error {
	top := c.in.Spec.Volumes
	used := map[string]bool{}
	for _, list := range []struct {
		in   []v1alpha1Container
		out  []*v1alpha2.MiniClusterContainer
		path string
	}{{c.in.Spec.Containers, v1alpha2.Containers(c.out.Spec.Containers), "spec.containers"}, {c.in.Spec.Services, v1alpha2.Containers(c.out.Spec.Services), "spec.services"}} {
		for i, ct := range list.in {
			o := list.out[i]
			for _, k := range slices.Sorted(maps.Keys(ct.Volumes)) {
				ref := ct.Volumes[k]
				p := fmt.Sprintf("%s[%d].volumes.%s", list.path, i, k)
				v, ok := top[k]
				if !ok {
					return fmt.Errorf("%s: no volume %q in spec.volumes: define it there, or mount an existing volume with existingVolumes", p, k)
				}
				if _, dup := ct.ExistingVolumes[k]; dup {
					return fmt.Errorf("%s: %s[%d].existingVolumes.%s has the same name: v1alpha2 has one volumes map, so rename one of them", p, list.path, i, k)
				}
				used[k] = true
				cv := v1alpha2.ContainerVolume{Path: ref.Path, ReadOnly: ref.ReadOnly}
				if isHostpath(v) {
					if v.Path == "" {
						return fmt.Errorf("spec.volumes.%s.path: required for a hostpath volume: it is the directory on the node", k)
					}
					cv.HostPath = v.Path
				} else {
					cv.ClaimName = claimName(k)
				}
				if o.Volumes == nil {
					o.Volumes = map[string]v1alpha2.ContainerVolume{}
				}
				o.Volumes[k] = cv
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		c.volumeNotes(k, top[k], used[k])
	}
	return nil
}

func isHostpath(v v1alpha1Volume) bool { return v.StorageClass == "" || v.StorageClass == hostpath }

// volumeNotes say what became of a top-level volume and each of its fields.
func (c *converter) volumeNotes(k string, v v1alpha1Volume, used bool) {
	p := "spec.volumes." + k
	if !used {
		c.note(p, "no container mounts it (containers[].volumes.%s); v1alpha2 makes no PersistentVolumes, so it is dropped", k)
		return
	}
	type field struct {
		name string
		set  bool
		what string // where it goes on a PersistentVolume or claim the user makes
	}
	fields := []field{
		{"storageClass", v.StorageClass != "" && v.StorageClass != hostpath, fmt.Sprintf("storageClassName: %s on both", v.StorageClass)},
		{"driver", v.Driver != "", fmt.Sprintf("the PersistentVolume's spec.csi.driver: %s", v.Driver)},
		{"volumeHandle", v.VolumeHandle != "", fmt.Sprintf("the PersistentVolume's spec.csi.volumeHandle: %s", v.VolumeHandle)},
		{"attributes", len(v.Attributes) > 0, "the PersistentVolume's spec.csi.volumeAttributes"},
		{"capacity", v.Capacity != "", fmt.Sprintf("the PersistentVolume's spec.capacity.storage and the claim's spec.resources.requests.storage: %s", v.Capacity)},
		{"secret", v.Secret != "", fmt.Sprintf("the PersistentVolume's spec.csi.nodePublishSecretRef (and nodeStageSecretRef, controllerPublishSecretRef): %s", v.Secret)},
		{"secretNamespace", v.SecretNamespace != "", fmt.Sprintf("the namespace of those secret references: %s", v.SecretNamespace)},
		{"labels", len(v.Labels) > 0, "the PersistentVolume's metadata.labels"},
		{"annotations", len(v.Annotations) > 0, "the PersistentVolume's metadata.annotations"},
		{"claimAnnotations", len(v.ClaimAnnotations) > 0, "the claim's metadata.annotations"},
		{"delete", v.Delete != nil, "the PersistentVolume's persistentVolumeReclaimPolicy (Delete or Retain)"},
	}
	if isHostpath(v) {
		c.note(p, "mounted as hostPath %s: v1alpha1 made a hostpath PersistentVolume %s and claim %s for it, v1alpha2 mounts the node's directory directly", v.Path, k, claimName(k))
		for _, f := range fields {
			if f.set {
				c.note(p+"."+f.name, "no v1alpha2 field: a hostpath volume is mounted directly, with no PersistentVolume to carry it; dropped")
			}
		}
		return
	}
	c.note(p, "v1alpha2 makes no PersistentVolumes or claims: create PersistentVolume %s and PersistentVolumeClaim %s (ReadWriteMany) yourself; the containers mount claim %s", k, claimName(k), claimName(k))
	for _, f := range fields {
		if f.set {
			c.note(p+"."+f.name, "no v1alpha2 field: put it on the volume you create, as %s", f.what)
		}
	}
	if v.Path != "" {
		c.note(p+".path", "no v1alpha2 field: a CSI volume had no use for it in v1alpha1 either; dropped")
	}
}
