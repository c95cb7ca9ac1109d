package render

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// Validate checks what only rendering knows: the volume names and mount
// paths the MiniCluster itself uses in every pod, which a user's volume
// must not take.
func Validate(mc *v1alpha2.MiniCluster) field.ErrorList {
	var errs field.ErrorList
	reservedNames := map[string]bool{VolumeSoftware: true, VolumeHome: true, VolumeEntrypoint: true, VolumeCurveCert: true, mc.Spec.Flux.Container.Name: true}
	reservedPaths := []string{entrypoint.Dir, entrypoint.CurveDir, entrypoint.SoftwareDir, entrypoint.HomeDir, mc.Spec.Flux.Container.MountPath}
	check := func(cs []v1alpha2.MiniClusterContainer, p *field.Path) {
		for i := range cs {
			for _, name := range v1alpha2.SortedKeys(cs[i].Volumes) {
				vp := p.Index(i).Child("volumes").Key(name)
				if reservedNames[name] {
					errs = append(errs, field.Invalid(vp, name, "this volume name is used by the MiniCluster itself: choose another name"))
				}
				mount := path.Clean(cs[i].Volumes[name].Path)
				for _, r := range reservedPaths {
					if mount == r || strings.HasPrefix(mount, r+"/") || strings.HasPrefix(r, mount+"/") {
						errs = append(errs, field.Invalid(vp.Child("path"), cs[i].Volumes[name].Path, "overlaps "+r+", which the MiniCluster mounts for Flux: choose another path"))
					}
				}
			}
		}
	}
	check(mc.Spec.Containers, field.NewPath("spec", "containers"))
	return errs
}
