package function

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
)

// The conditions and reasons the function writes itself, as the strings
// the SDK takes: v1alpha2 defines each (observe's conditions carry
// v1alpha2's types, converted in writeConditions).
const (
	// ConditionValid is false while the claim has an error the function
	// refuses to compose.
	ConditionValid = string(v1alpha2.ConditionValid)
	// ConditionScaled is false while spec.size exceeds the maximum size.
	ConditionScaled = string(v1alpha2.ConditionScaled)

	// ReasonPolicy is the reason of Valid=False when the platform's
	// policy refuses the claim.
	ReasonPolicy = string(v1alpha2.ReasonPolicy)

	// reasonValid is the reason of Valid=True.
	reasonValid = string(v1alpha2.ReasonValid)
	// reasonInvalidSpec is the reason of Valid=False for a user's mistake.
	reasonInvalidSpec = string(v1alpha2.ReasonInvalidSpec)
)

// writeStatus writes what observe reported: the composite's status and
// readiness, the conditions and the warnings.
//
// Readiness is the MiniCluster's, reported on the composite; every
// composed object is reported ready. Crossplane takes an explicit
// composite readiness over its composed objects', and it records an event
// for every unready object on every composition run: the Job alone would
// cost one each run until its brokers are up.
func writeStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, r observe.Report) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get desired composite resource")
	}
	// Equivalent to dxr.Resource.SetValue("status", ...), without its JSON
	// round trip: the status is plain strings and integers, which become the
	// same protobuf numbers either way.
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r.Status)
	if err != nil {
		return errors.Wrap(err, "cannot convert the MiniCluster's status")
	}
	// The Job's counts go out when they are 0 too. Crossplane applies the
	// status with server-side apply: an empty job object, after counts the
	// apply owned, leaves job null, which the API server refuses, and the
	// whole status with it (a running cluster whose brokers all went
	// unready kept saying Running, all brokers up).
	st["job"] = map[string]any{
		"ready":     int64(r.Status.Job.Ready),
		"succeeded": int64(r.Status.Job.Succeeded),
		"failed":    int64(r.Status.Job.Failed),
	}
	dxr.Resource.Object["status"] = st
	dxr.Ready = resource.ReadyFalse
	if r.Ready {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set desired composite resource")
	}
	writeConditions(rsp, r.Conditions...)
	for _, w := range r.Warnings {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	return nil
}

// writeConditions puts the conditions observe reported on the composite
// and its claim.
func writeConditions(rsp *fnv1.RunFunctionResponse, cs ...observe.Condition) {
	for _, c := range cs {
		var cond *response.ConditionOption
		if c.True {
			cond = response.ConditionTrue(rsp, string(c.Type), string(c.Reason))
		} else {
			cond = response.ConditionFalse(rsp, string(c.Type), string(c.Reason))
		}
		if c.Message != "" {
			cond = cond.WithMessage(c.Message)
		}
		cond.TargetCompositeAndClaim()
	}
}
