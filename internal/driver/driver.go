// Package driver calls the MiniCluster composition function the way
// Crossplane does, without a cluster: it reads a claim, checks it as the API
// server would, turns it into its composite resource, builds the
// RunFunctionRequest and reads the response back as objects. The minicluster
// CLI, the function's tests, benchmarks and fuzzing, and the end-to-end tests
// all go from claim to objects through it.
//
// It does not import the function: callers hand it one (a Runner), so the
// function's own tests can use it too.
package driver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// A Runner runs a composition function: function.Function is one.
type Runner interface {
	RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)
}

// Options of one run.
type Options struct {
	// Claim is a MiniCluster claim, an upstream MiniCluster or an
	// XMiniCluster, as YAML or JSON (the first one of the stream is
	// used; other kinds are ignored).
	Claim []byte
	// Observed objects, e.g. a previous run's output.
	Observed []*unstructured.Unstructured
	// Input is the function's input as YAML (optional). Without one the
	// function's defaults apply, its secure default policy included.
	Input []byte
	// Cluster holds the objects of the cluster the function may require
	// (Namespaces, ServiceAccounts, Secrets), as Crossplane would fetch
	// them for it. The MiniCluster's Namespace exists on a real cluster:
	// when Cluster holds none of that name, an unlabelled one answers.
	Cluster []*unstructured.Unstructured
	// Shape is the cluster's shape ("" is ShapeClaims): which composite
	// resource Crossplane would compose for the claim.
	Shape Shape
}

// Run calls fn for the claim in o, as Crossplane would for the claim once
// the API server has accepted it: a claim the API server would refuse (see
// Check) is not composed; Output.Invalid says why, and its one FATAL result
// carries every error. Errors are problems of the input itself: YAML, no
// MiniCluster, another API version, no name.
func Run(ctx context.Context, fn Runner, o Options) (*Output, error) {
	mc, err := ReadMiniCluster(o.Claim)
	if err == nil {
		err = Check(ctx, mc, o.Shape)
	}
	if err != nil {
		// A nameless claim with unknown fields is refused as invalid by
		// ReadMiniCluster already, as the API server refuses it.
		var inv *InvalidError
		if errors.As(err, &inv) {
			return &Output{Fatal: true, Invalid: inv, Results: []string{"FATAL: " + inv.Error()}}, nil
		}
		return nil, err
	}
	xr, err := CompositeOf(mc, o.Shape)
	if err != nil {
		return nil, err
	}
	return RunComposite(ctx, fn, xr, o)
}

// RunComposite calls fn for the composite resource xr as it is: no checks,
// no defaults (o.Claim and o.Shape are not read).
func RunComposite(ctx context.Context, fn Runner, xr *unstructured.Unstructured, o Options) (*Output, error) {
	var input map[string]any
	if len(o.Input) > 0 {
		if err := yaml.Unmarshal(o.Input, &input); err != nil {
			return nil, fmt.Errorf("cannot parse input: %w", err)
		}
	}
	req, err := Request(xr, o.Observed, input)
	if err != nil {
		return nil, err
	}
	rsp, err := RunRequest(ctx, fn, req, o.Cluster)
	if err != nil {
		return nil, err
	}
	cert, _, _ := unstructured.NestedString(xr.Object, "spec", "flux", "curveCert")
	controller := ControllerOf(xr)
	return readResponse(rsp, cert, &controller)
}

// maxRequirementsIterations is how often Crossplane calls a function again
// with the resources it required before it gives up.
const maxRequirementsIterations = 5

// RunRequest calls fn as Crossplane does: while a response asks
// for resources the request did not carry, fn is called again with them
// (found in cluster), and only the last response counts. A Fatal result
// ends the loop, as it does in Crossplane.
func RunRequest(ctx context.Context, fn Runner, req *fnv1.RunFunctionRequest, cluster []*unstructured.Unstructured) (*fnv1.RunFunctionResponse, error) {
	_, rsp, err := Settle(ctx, fn, req, cluster)
	return rsp, err
}

// Settle is RunRequest that also returns the request of the last call:
// req with the resources the function required, as Crossplane sends it
// once it has answered them (req itself when nothing was required). A
// benchmark or a test of one call times or checks that request.
func Settle(ctx context.Context, fn Runner, req *fnv1.RunFunctionRequest, cluster []*unstructured.Unstructured) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, error) {
	var prev *fnv1.Requirements
	for i := 0; ; i++ {
		// The SDK's response shares the request's desired state: keep
		// the request as it was sent.
		sent := proto.Clone(req).(*fnv1.RunFunctionRequest)
		rsp, err := fn.RunFunction(ctx, req)
		if err != nil {
			return nil, nil, fmt.Errorf("function failed: %w", err)
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				return sent, rsp, nil
			}
		}
		reqs := rsp.GetRequirements()
		if proto.Equal(reqs, prev) || len(reqs.GetResources()) == 0 {
			return sent, rsp, nil
		}
		if i+1 >= maxRequirementsIterations {
			return nil, nil, fmt.Errorf("the function's requirements did not settle after %d calls", maxRequirementsIterations)
		}
		prev = reqs
		req = sent
		req.RequiredResources = map[string]*fnv1.Resources{}
		for name, sel := range reqs.GetResources() {
			found, err := Find(cluster, sel)
			if err != nil {
				return nil, nil, err
			}
			req.RequiredResources[name] = found
		}
	}
}
