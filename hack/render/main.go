// Command render runs `crossplane composition render` on an example with the
// function running as a local process, as a developer would: the render
// engine is Crossplane core's own binary, so the output is what a real
// control plane would compose. `make render` and the goldens of test/render
// use it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	var o options
	flag.StringVar(&o.Example, "example", "examples/hello-world", "example directory (xr.yaml and claim.yaml, optionally observed.yaml, cluster.yaml and input.yaml)")
	flag.StringVar(&o.Compositions, "compositions", "compositions", "directory of composition.yaml and functions.yaml (and v2/composition.yaml)")
	flag.StringVar(&o.Shape, "shape", "claims", "claims: render the example's xr.yaml (the claim's XMiniCluster) with composition.yaml; v2: render its claim.yaml, the namespaced MiniCluster, with v2/composition.yaml")
	flag.StringVar(&o.Crossplane, "crossplane", "", "crossplane CLI binary")
	flag.StringVar(&o.Core, "crossplane-core", "", "crossplane core binary (the render engine)")
	flag.StringVar(&o.Function, "function", "bin/function", "function binary")
	flag.StringVar(&o.XRD, "xrd", "", "the MiniCluster XRD (default: the shape's, definition.yaml or v2/definition.yaml in -compositions; - for none)")
	flag.StringVar(&o.Observed, "observed", "", "observed resources (default: the example's observed.yaml if any; - for none)")
	flag.StringVar(&o.Cluster, "cluster", "", "objects of the cluster the function requires, passed as --required-resources (default: the example's cluster.yaml if any; - for none: a namespace without labels)")
	flag.StringVar(&o.Input, "input", "", "function input for the Composition's step (default: the example's input.yaml if any; - for the Composition's own)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := render(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	_, _ = os.Stdout.Write(out)
}
