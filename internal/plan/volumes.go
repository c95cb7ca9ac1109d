package plan

import (
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// systemVolumes are the volumes of every broker pod besides the view's.
var systemVolumes = map[string]bool{VolumeSoftware: true, VolumeHome: true, VolumeEntrypoint: true, VolumeCurveCert: true}

// EmptyDirDefaultPath is where an emptyDir volume without a path is
// mounted.
const EmptyDirDefaultPath = "/dev/shm"

// MountPath is where a volume of a container is mounted.
func MountPath(v v1alpha2.ContainerVolume) string {
	if v.Path == "" && v.EmptyDir {
		return EmptyDirDefaultPath
	}
	return v.Path
}

// checkVolumes checks every volume's source. Volumes are shared by name
// across a pod, so one name must mean one source.
func checkVolumes(mc *v1alpha2.MiniCluster) field.ErrorList {
	reserved := map[string]bool{mc.Spec.Flux.Container.Name: true}
	for k := range systemVolumes {
		reserved[k] = true
	}
	var errs field.ErrorList
	for _, l := range []struct {
		cs       []*v1alpha2.MiniClusterContainer
		p        *field.Path
		reserved map[string]bool
	}{
		{v1alpha2.Containers(mc.Spec.Containers), field.NewPath("spec", "containers"), reserved},
		{v1alpha2.Containers(mc.Spec.Services), field.NewPath("spec", "services"), nil},
	} {
		first := map[string]v1alpha2.ContainerVolume{}
		for i := range l.cs {
			for _, name := range slices.Sorted(maps.Keys(l.cs[i].Volumes)) {
				v := l.cs[i].Volumes[name]
				vp := l.p.Index(i).Child("volumes").Key(name)
				if l.reserved[name] {
					errs = append(errs, field.Invalid(vp, name, "this volume name is used by the MiniCluster itself: choose another name"))
				}
				errs = append(errs, checkVolume(v, vp)...)
				if prev, ok := first[name]; ok && !sameSource(prev, v) {
					errs = append(errs, field.Invalid(vp, name, "another container declares a volume with this name and a different source: a pod has one volume per name, so give them different names or the same source"))
				}
				if _, ok := first[name]; !ok {
					first[name] = v
				}
			}
		}
	}
	return errs
}

func checkVolume(v v1alpha2.ContainerVolume, p *field.Path) field.ErrorList {
	// One source, the paths' form, the CSI driver's length, items only
	// with a ConfigMap or Secret, the names of the ConfigMap, Secret or
	// claim and the size limit's quantity are the schema's rules.
	var errs field.ErrorList
	if v.CSIDriver != "" {
		for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(v.CSIDriver)) {
			errs = append(errs, field.Invalid(p.Child("csiDriver"), v.CSIDriver, "must be a CSI driver name such as csi.example.com: "+msg))
		}
	}
	if a, b := nestedItems(v.Items); a != "" {
		errs = append(errs, field.Invalid(p.Child("items").Key(b), v.Items[b], "is inside the path of item "+a+", a file: the kubelet cannot write both, and the volume would never mount; give them paths that do not nest"))
	}
	for _, k := range slices.Sorted(maps.Keys(v.Items)) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(p.Child("items").Key(k), k, "must be a key of the ConfigMap or Secret: "+msg))
		}
		// Kubernetes also keeps names starting with ".." for the volume's
		// own files (..data).
		if item := v.Items[k]; item == "" || strings.HasPrefix(item, "/") || hasDotDot(item) || strings.HasPrefix(item, "..") || len(item) > 4096 {
			errs = append(errs, field.Invalid(p.Child("items").Key(k), item, "must be a relative path inside the volume, without '..' and not starting with '..'"))
		}
	}
	return errs
}

// nestedItems returns two items (keys) of which the second's path lies
// under the first's, or "".
func nestedItems(items map[string]string) (string, string) {
	for _, a := range slices.Sorted(maps.Keys(items)) {
		for _, b := range slices.Sorted(maps.Keys(items)) {
			if a != b && strings.HasPrefix(path.Clean(items[b]), path.Clean(items[a])+"/") {
				return a, b
			}
		}
	}
	return "", ""
}

func sameSource(a, b v1alpha2.ContainerVolume) bool {
	return a.HostPath == b.HostPath && a.ConfigMapName == b.ConfigMapName && a.ClaimName == b.ClaimName &&
		a.SecretName == b.SecretName && a.EmptyDir == b.EmptyDir && a.EmptyDirMedium == b.EmptyDirMedium &&
		a.EmptyDirSizeLimit == b.EmptyDirSizeLimit && a.CSIDriver == b.CSIDriver &&
		maps.Equal(a.Items, b.Items) && maps.Equal(a.CSIDriverAttributes, b.CSIDriverAttributes)
}

// systemMounts are the paths the MiniCluster mounts in a container of the
// broker pods; runner adds the certificate's.
func systemMounts(mc *v1alpha2.MiniCluster, runner bool) []string {
	m := []string{entrypoint.HomeDir, mc.Spec.Flux.Container.MountPath, entrypoint.Dir, entrypoint.SoftwareDir}
	if runner {
		m = append(m, entrypoint.CurveDir)
	}
	return m
}

// checkMounts checks every mount of every container as Kubernetes does
// (absolute, no '..', unique in a container), and keeps users' mounts off
// the MiniCluster's own: a mount over one of them would hide what Flux needs.
func checkMounts(mc *v1alpha2.MiniCluster) field.ErrorList {
	var errs field.ErrorList
	// flux.container.mountPath is itself a mount of every broker container.
	mp := mc.Spec.Flux.Container.MountPath
	mpPath := field.NewPath("spec", "flux", "container", "mountPath")
	// The schema keeps it absolute, other than /, without '..' and without
	// an element Linux cannot create.
	clean := path.Clean(mp)
	for _, r := range []string{entrypoint.HomeDir, entrypoint.Dir, entrypoint.SoftwareDir, entrypoint.CurveDir} {
		if overlaps(clean, r) {
			errs = append(errs, field.Invalid(mpPath, mp, "overlaps "+r+", which the MiniCluster mounts for Flux: choose another path such as /mnt/flux"))
		}
	}
	if d := systemDir(clean); d != "" {
		errs = append(errs, field.Invalid(mpPath, mp, "would hide "+d+" of the image (an emptyDir mounted there in every broker container), which bash and Flux need to start: choose another path such as /mnt/flux"))
	}
	if underKernelFS(clean) {
		errs = append(errs, field.Invalid(mpPath, mp, "is inside /proc or /sys, where the container runtime cannot create a mount point: choose another path such as /mnt/flux"))
	}
	for _, l := range []struct {
		cs      []*v1alpha2.MiniClusterContainer
		p       *field.Path
		brokers bool
	}{
		{v1alpha2.Containers(mc.Spec.Containers), field.NewPath("spec", "containers"), true},
		{v1alpha2.Containers(mc.Spec.Services), field.NewPath("spec", "services"), false},
	} {
		for i, c := range l.cs {
			var reserved []string
			if l.brokers {
				reserved = systemMounts(mc, c.RunFlux)
			}
			seen := map[string]string{}
			for _, name := range slices.Sorted(maps.Keys(c.Volumes)) {
				v := c.Volumes[name]
				vp := l.p.Index(i).Child("volumes").Key(name)
				// The schema requires a path (but for an emptyDir) and
				// keeps it absolute, other than /, without '..' or ':'.
				mount := MountPath(v)
				clean := path.Clean(mount)
				if procMount(clean) {
					errs = append(errs, field.Invalid(vp.Child("path"), v.Path, "is /proc or inside it, where the container runtime refuses mounts (runc allows only a few files such as /proc/cpuinfo): choose another path"))
					continue
				}
				// A path the user did not write is blamed on the volume.
				pathField := vp.Child("path")
				if v.Path == "" {
					pathField = vp
				}
				if prev, ok := seen[clean]; ok {
					what := "path"
					if v.Path == "" {
						what = "path (an emptyDir without a path is mounted at " + EmptyDirDefaultPath + ")"
					}
					errs = append(errs, duplicate(pathField, mount, "volume "+prev+" of this container is mounted at the same "+what+": give each volume its own path"))
					continue
				}
				seen[clean] = name
				if l.brokers && (c.RunFlux || !c.NoWrapEntrypoint) && bashDirs[clean] {
					errs = append(errs, field.Invalid(pathField, mount, "would hide the image's "+clean+", where /bin/bash and its libraries live, and bash runs this container's entrypoint: mount the volume elsewhere"))
				}
				for _, r := range reserved {
					if overlaps(clean, path.Clean(r)) {
						what := "overlaps " + r
						if v.Path == "" {
							what = "is an emptyDir without a path, mounted at " + EmptyDirDefaultPath + ", which overlaps " + r
						}
						errs = append(errs, field.Invalid(pathField, mount, what+", which the MiniCluster mounts for Flux: choose another path"))
					}
				}
			}
		}
	}
	return errs
}

// imageSystemDirs are directories of every Linux image that the runner's
// bash, the Flux view and the scripts rely on: a volume mounted over one
// hides the image's own files.
var imageSystemDirs = []string{"/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", "/var"}

// bashDirs are the directories of an image that hold /bin/bash and the
// libraries it loads (on merged-/usr images /bin and /lib are links into
// /usr, and the container runtime mounts at the link's target).
var bashDirs = map[string]bool{"/bin": true, "/lib": true, "/lib64": true, "/usr": true, "/usr/bin": true, "/usr/lib": true, "/usr/lib64": true}

// systemDir returns the system directory a mount at the clean path p would
// hide (p itself), or "".
func systemDir(p string) string {
	for _, d := range imageSystemDirs {
		if p == d {
			return d
		}
	}
	return ""
}

// underKernelFS tells whether the clean path p lies inside /proc or /sys,
// kernel file systems where a mount point cannot be created.
func underKernelFS(p string) bool {
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")
}

// runcProcFiles are the paths under /proc that runc lets a bind mount cover
// (lxcfs and similar); any other mount at or under /proc fails the container.
var runcProcFiles = map[string]bool{
	"/proc/cpuinfo": true, "/proc/diskstats": true, "/proc/meminfo": true, "/proc/stat": true,
	"/proc/swaps": true, "/proc/uptime": true, "/proc/loadavg": true, "/proc/slabinfo": true,
	"/proc/net/dev": true, "/proc/sys/kernel/ns_last_pid": true,
}

// procMount tells whether a volume mounted at the clean path p would be
// refused by the container runtime.
func procMount(p string) bool {
	return (p == "/proc" || strings.HasPrefix(p, "/proc/")) && !runcProcFiles[p]
}

// overlaps tells whether one of two clean paths is the other or under it.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// hasDotDot tells whether a path has a ".." element.
func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}
