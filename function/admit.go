package function

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
)

// report asks Crossplane for what the admission room looks up, and says
// what it decided: its Pod Security warnings and audits, and, when it did
// not let the MiniCluster be composed, why (a refusal) or that it waits
// for Crossplane's answers.
func report(rsp *fnv1.RunFunctionResponse, d admission.Decision) error {
	requireLookups(rsp, d.Lookups)
	switch {
	case d.Waiting:
		return errWaiting
	case d.Refused != nil:
		return &invalidError{reason: d.Refused.Reason, msg: d.Refused.Message}
	}
	for _, w := range d.Warnings {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	for _, a := range d.Audits {
		response.Normal(rsp, a).TargetCompositeAndClaim()
	}
	return nil
}

// answerFrom reads what Crossplane answered to a lookup from req.
func answerFrom(req *fnv1.RunFunctionRequest) func(string) ([]*unstructured.Unstructured, bool) {
	return func(name string) ([]*unstructured.Unstructured, bool) {
		found, answered, err := request.GetRequiredResource(req, name)
		if err != nil || !answered {
			// An answer that does not decode is no answer: nothing is
			// composed until Crossplane sends one that does.
			return nil, false
		}
		out := make([]*unstructured.Unstructured, 0, len(found))
		for _, r := range found {
			out = append(out, r.Resource)
		}
		return out, true
	}
}

// observedObjects are the observed composed resources by composition
// resource name.
func observedObjects(observed map[resource.Name]resource.ObservedComposed) map[string]*unstructured.Unstructured {
	out := make(map[string]*unstructured.Unstructured, len(observed))
	for name, o := range observed {
		if o.Resource != nil {
			out[string(name)] = &o.Resource.Unstructured
		}
	}
	return out
}
