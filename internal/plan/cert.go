package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
)

// curveCertValue stands for spec.flux.curveCert in errors: the text holds a
// secret key, and errors end up in the claim's conditions and events.
const curveCertValue = "<curve.cert>"

// checkCurveCert refuses a certificate of the claim's own that Flux would
// not load, so the claim hears of it with its other mistakes rather than
// from a broker that fails to start. curve's messages quote no secret key.
func checkCurveCert(mc *v1alpha2.MiniCluster) field.ErrorList {
	text := mc.Spec.Flux.CurveCert
	if text == "" {
		return nil
	}
	if err := curve.Validate([]byte(text)); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "flux", "curveCert"), curveCertValue,
			"is not a CURVE certificate Flux accepts (generate one with flux keygen): "+err.Error())}
	}
	return nil
}
