package function

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

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

// Names of the admission room's lookups, as the function requires them.
const (
	requiredNamespace      = admission.LookupNamespace
	requiredServiceAccount = admission.LookupServiceAccount
	requiredSecret         = admission.LookupSecret
	requiredExisting       = admission.LookupExisting
	requiredJob            = requiredExisting + render.KeyJob
)
