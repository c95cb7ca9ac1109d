package function

import (
	"context"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/admission"
)

// input is the function input of the Composition's pipeline step.
func input(req *fnv1.RunFunctionRequest) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if req.GetInput() == nil {
		return in, nil
	}
	if err := request.GetInput(req, in); err != nil {
		return nil, errors.Wrap(err, "cannot get function input from the Composition's pipeline step")
	}
	if errs := in.Defaults.ValidateFluxViews(); len(errs) > 0 {
		return nil, errors.New("invalid function input in the Composition's pipeline step: " + strings.TrimPrefix(FormatErrors(errs), "invalid MiniCluster: "))
	}
	return in, nil
}

// miniCluster reads the MiniCluster from the composite xr: checked against
// the XRD's schema exactly as the API server applies it (defaults
// included), defaulted with the platform's defaults, its Flux view chosen,
// and checked against the platform's policy. plan.New adds what a schema
// cannot say.
func (f *Function) miniCluster(ctx context.Context, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in *v1beta1.Input, pol v1beta1.Policy, xr map[string]any) (*v1alpha2.MiniCluster, string, error) {
	if errs := f.specs.check(ctx, req.GetObserved().GetComposite().GetResource().GetFields()["spec"], xr); len(errs) > 0 {
		return nil, "", invalid(FormatErrors(errs))
	}
	if r := admission.Composite(xr); r != nil {
		return nil, "", &invalidError{reason: r.Reason, msg: r.Message}
	}
	mc, ns, err := Decode(xr)
	if err != nil {
		return nil, "", invalid(err.Error())
	}
	claimView := mc.Spec.Flux.Container.Image
	v1alpha2.SetDefaults(mc, in.Defaults.PlatformDefaults())
	if rs := admission.Enforce(pol, mc); len(rs) > 0 {
		return nil, "", refused(rs.Error())
	}
	if w := chooseView(mc, claimView, in.Defaults); w != "" {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	return mc, ns, nil
}
