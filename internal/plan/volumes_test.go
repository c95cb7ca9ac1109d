package plan

import (
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// volumesInvalid: volumes and where they are mounted (checkVolumes,
// checkMounts).
func volumesInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"ItemPathDotDot": {
			reason: "An item must stay inside its volume.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/etc/app", Items: map[string]string{"key": "../../etc/passwd"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[key]"}, msg: "without '..'"},
		},
		"ItemPathAbsolute": {
			reason: "An item path is relative to the volume.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{SecretName: "cfg", Path: "/etc/app", Items: map[string]string{"key": "/etc/passwd"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[key]"}, msg: "must be a relative path inside the volume"},
		},
		"SameVolumeNameDifferentSources": {
			reason: "A pod has one volume per name.",
			args: mc(
				withVolume("data", v1alpha2.ContainerVolume{ClaimName: "data", Path: "/data"}),
				withSidecar("app", func(c *v1alpha2.MiniClusterContainer) {
					c.Volumes = map[string]v1alpha2.ContainerVolume{"data": {HostPath: "/mnt/data", Path: "/data"}}
				}),
			),
			want: invalid{fields: []string{"spec.containers[1].volumes[data]"}, msg: "give them different names or the same source"},
		},
		"MountPathDuplicate": {
			reason: "Two volumes of one container cannot be mounted at one path.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {Path: "/data", EmptyDir: true}, "b": {Path: "/data/", ClaimName: "pvc"}}
			})),
			want: invalid{fields: []string{"spec.containers[0].volumes[b].path"}, msg: "give each volume its own path"},
		},
		"TwoEmptyDirsDefaultPath": {
			reason: "Two emptyDir volumes without a path would both be mounted at /dev/shm.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {EmptyDir: true}, "b": {EmptyDir: true}}
			})),
			want: invalid{fields: []string{"spec.containers[0].volumes[b]"}, msg: "mounted at /dev/shm"},
		},
		"MountOverFluxView": {
			reason: "A user mount over the Flux view hides it.",
			args:   mc(withVolume("data", v1alpha2.ContainerVolume{Path: "/mnt/flux/data", EmptyDir: true})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[data].path"}, msg: "overlaps /mnt/flux"},
		},
		"MountOverEntrypoints": {
			reason: "The entrypoint ConfigMap's mount is the MiniCluster's.",
			args:   mc(withVolume("data", v1alpha2.ContainerVolume{Path: "/flux_operator", EmptyDir: true})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[data].path"}, msg: "overlaps /flux_operator"},
		},
		"ViewMountPathOnCurveDir": {
			reason: "flux.container.mountPath is a mount of every broker container too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/mnt/curve" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "overlaps /mnt/curve"},
		},
		"ViewMountPathOnMnt": {
			reason: "/mnt contains the certificate's mount.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/mnt" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "overlaps /mnt/curve"},
		},
		"VolumeOverUsr": {
			reason: "A volume at /usr hides bash, which runs the runner's entrypoint.",
			args:   mc(withVolume("tools", v1alpha2.ContainerVolume{ConfigMapName: "tools", Path: "/usr"})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[tools].path"}, msg: "where /bin/bash and its libraries live"},
		},
		"VolumeItemsNested": {
			reason: "The kubelet writes item a as a file and cannot then make it the directory of item b.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/cfg", Items: map[string]string{"a": "conf", "b": "conf/app.ini"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[b]"}, msg: "is inside the path of item a, a file"},
		},
		"VolumeItemDotDotPrefix": {
			reason: "Kubernetes refuses item paths starting with '..'.",
			args:   mc(withVolume("cfg", v1alpha2.ContainerVolume{ConfigMapName: "cfg", Path: "/cfg", Items: map[string]string{"k": "..data"}})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[cfg].items[k]"}, msg: "not starting with '..'"},
		},
		"ViewMountPathSystemDir": {
			reason: "The view's emptyDir over /usr hides bash.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/usr" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "would hide /usr of the image"},
		},
		"ViewMountPathUnderSys": {
			reason: "No mount point can be made in sysfs.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/sys/flux" })),
			want:   invalid{fields: []string{"spec.flux.container.mountPath"}, msg: "is inside /proc or /sys"},
		},
		"VolumeAtProc": {
			reason: "runc refuses mounts at /proc.",
			args:   mc(withVolume("p", v1alpha2.ContainerVolume{HostPath: "/proc", Path: "/proc"})),
			want:   invalid{fields: []string{"spec.containers[0].volumes[p].path"}, msg: "where the container runtime refuses mounts"},
		},
		"ViewMountPathOnPathlessEmptyDir": {
			reason: "An emptyDir without a path goes to /dev/shm: the error names the volume, not a path the user never wrote.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Container.MountPath = "/dev/shm" }),
				withVolume("shm", v1alpha2.ContainerVolume{EmptyDir: true})),
			want: invalid{fields: []string{"spec.containers[0].volumes[shm]"}, msg: "an emptyDir without a path"},
		},
	}
}

// volumesValid: every volume source and shared volumes.
func volumesValid() map[string]validCase {
	return map[string]validCase{
		"EveryVolumeType": {
			reason: "Every volume source, with and without optional fields.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				c.Volumes = map[string]v1alpha2.ContainerVolume{
					"data":    {ClaimName: "data-pvc", Path: "/data", ReadOnly: true},
					"scratch": {HostPath: "/mnt/scratch", Path: "/scratch"},
					"config":  {ConfigMapName: "app-config", Path: "/etc/app", Items: map[string]string{"app.toml": "app.toml"}},
					"creds":   {SecretName: "creds", Path: "/etc/creds", Items: map[string]string{"token": "auth/token", "ca": "ca..pem"}},
					"shm":     {EmptyDir: true},
					"ram":     {EmptyDir: true, EmptyDirMedium: "memory", EmptyDirSizeLimit: "1Gi", Path: "/ram"},
					"bucket":  {CSIDriver: "gcsfuse.csi.storage.gke.io", CSIDriverAttributes: map[string]string{"bucketName": "b"}, Path: "/bucket"},
				}
			})),
		},
		"SharedVolume": {
			reason: "Two containers may mount the same volume (same name, same source) at different paths.",
			args: mc(
				withVolume("data", v1alpha2.ContainerVolume{ClaimName: "data", Path: "/data"}),
				withSidecar("app", func(c *v1alpha2.MiniClusterContainer) {
					c.Volumes = map[string]v1alpha2.ContainerVolume{"data": {ClaimName: "data", Path: "/srv/data"}}
				}),
			),
		},
		"VolumeOverProcFile": {
			reason: "runc lets a bind mount cover a few /proc files (lxcfs).",
			args:   mc(withVolume("cpuinfo", v1alpha2.ContainerVolume{HostPath: "/var/lib/lxcfs/proc/cpuinfo", Path: "/proc/cpuinfo"})),
		},
	}
}
