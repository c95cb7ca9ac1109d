package function

import (
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// require asks Crossplane for existing resources the function needs to
// decide. Crossplane answers by calling the function again with them (its
// cached client reads them, and a change to one wakes the composite), so
// each concern adds its own selector under its own name, and asks only
// while the answer can change what the function returns.
func require(rsp *fnv1.RunFunctionResponse, name string, sel *fnv1.ResourceSelector) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[name] = sel
}

// Names of the function's requirements: every name it asks Crossplane for
// in rsp.Requirements is one of these.
const (
	// The admission room's lookups: admission.Decision.Lookups names them
	// (admission.Lookup*: these, the claim and the Workload API), and
	// requireLookups asks for them under those names.
	requiredNamespace      = admission.LookupNamespace
	requiredServiceAccount = admission.LookupServiceAccount
	requiredSecret         = admission.LookupSecret
	requiredExisting       = admission.LookupExisting
	requiredJob            = requiredExisting + render.KeyJob

	// What the function reads to explain the status (readForStatus;
	// observe.ReadsFor says when).
	requiredPods       = "broker-pods"
	requiredEvents     = "namespace-events"
	requiredWorkloads  = "kueue-workloads"
	requiredLocalQueue = "kueue-localqueue"
)

// requireLookups asks Crossplane for what the admission room looks up,
// each object under the lookup's name.
func requireLookups(rsp *fnv1.RunFunctionResponse, lookups []admission.Lookup) {
	for _, l := range lookups {
		sel := &fnv1.ResourceSelector{ApiVersion: l.APIVersion, Kind: l.Kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: l.Object}}
		if l.Namespace != "" {
			sel.Namespace = ptr.To(l.Namespace)
		}
		require(rsp, l.Name, sel)
	}
}

// requireAll asks for the resources sel selects under name, and returns
// what Crossplane answered (nothing until it does).
func requireAll(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, name string, sel *fnv1.ResourceSelector) ([]resource.Required, error) {
	require(rsp, name, sel)
	found, _, err := request.GetRequiredResource(req, name)
	return found, err
}
