// Command render runs `crossplane composition render` on an example with the
// function running locally; `make render` calls it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/flux-framework/minicluster-crossplane/internal/xrender"
)

func main() {
	var o xrender.Options
	flag.StringVar(&o.Example, "example", "examples/hello-world", "example directory (xr.yaml, optionally observed.yaml)")
	flag.StringVar(&o.Compositions, "compositions", "compositions", "directory of composition.yaml and functions.yaml")
	flag.StringVar(&o.Crossplane, "crossplane", "", "crossplane CLI binary")
	flag.StringVar(&o.Core, "crossplane-core", "", "crossplane core binary (the render engine)")
	flag.StringVar(&o.Function, "function", "bin/function", "function binary")
	flag.StringVar(&o.XRD, "xrd", "compositions/definition.yaml", "the MiniCluster XRD")
	flag.StringVar(&o.Observed, "observed", "", "observed resources (default: the example's observed.yaml if any; - for none)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := xrender.Render(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	_, _ = os.Stdout.Write(out)
}
