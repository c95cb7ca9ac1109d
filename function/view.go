package function

import (
	"fmt"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// chooseView gives a MiniCluster (defaulted) whose claim named no Flux view
// (claimView is spec.flux.container.image as the claim has it) the view the
// platform's view table has for its Flux runner's image; the platform's
// fluxViewImage, or the API's default, stays for images the table does not
// know. A view the claim names is kept; when the views the platform and the
// built-in table know say it was built for another image than the runner's,
// chooseView returns a warning that names both and the fix.
func chooseView(mc *v1alpha2.MiniCluster, claimView string, d v1beta1.Defaults) string {
	view := &mc.Spec.Flux.Container
	r := mc.Spec.Runner()
	if view.Disable || r < 0 {
		return ""
	}
	app := mc.Spec.Containers[r].Image
	if claimView == "" {
		if fit, ok := v1beta1.ViewFor(d.ViewTable(), app); ok {
			view.Image = fit.View
		}
		return ""
	}
	known := d.KnownViews()
	fit, ok := v1beta1.ViewFor(known, app)
	if !ok || v1beta1.SameImage(claimView, fit.View) || !v1beta1.KnownView(known, claimView) {
		return ""
	}
	return fmt.Sprintf("spec.flux.container.image %s is a Flux view built for another OS than spec.containers[%d].image %s, whose view is %s: "+
		"the view's binaries run with the application image's C library, and the runner stops (the MiniCluster fails) when they cannot; "+
		"set spec.flux.container.image to %s, or remove it to have the view chosen for the image", claimView, r, app, fit.View, fit.View)
}
