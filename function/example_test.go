package function_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// helloWorld is the Flux Operator's hello-world MiniCluster
// (examples/hello-world/claim.yaml): four brokers, and the lead runs
// `echo hello world` as a Flux job.
const helloWorld = `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: default
spec:
  size: 4
  logging:
    quiet: true
  containers:
    - image: ubuntu:noble
      command: echo hello world
`

// zeros is a deterministic source of randomness for the example: the
// function generates the brokers' CURVE certificate from it.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// RunFunction composes the objects of a MiniCluster. Crossplane calls it with
// the composite resource of the claim; internal/driver builds that request
// and, like Crossplane, calls the function again with the resources it asks
// for (here the claim's Namespace).
func ExampleFunction_RunFunction() {
	claim, err := driver.ReadMiniCluster([]byte(helloWorld))
	if err != nil {
		panic(err)
	}
	// The XMiniCluster Crossplane's claim controller makes of the claim.
	xr, err := driver.Composite(claim)
	if err != nil {
		panic(err)
	}
	// A first request: nothing composed yet, no function input.
	req, err := driver.Request(xr, nil, nil)
	if err != nil {
		panic(err)
	}

	fn := function.New(function.WithRandom(zeros{}))
	rsp, err := driver.RunRequest(context.Background(), fn, req, nil)
	if err != nil {
		panic(err)
	}

	// The composed resources, by composition resource name.
	composed := rsp.GetDesired().GetResources()
	for _, name := range slices.Sorted(maps.Keys(composed)) {
		obj := composed[name].GetResource().AsMap()
		meta := obj["metadata"].(map[string]any)
		fmt.Printf("%-11s %s %s/%s\n", name, obj["kind"], meta["namespace"], meta["name"])
	}
	// Output:
	// curve-cert  Secret default/flux-sample-curve-cert
	// entrypoint  ConfigMap default/flux-sample-entrypoint
	// job         Job default/flux-sample
	// service     Service default/flux-sample
}
