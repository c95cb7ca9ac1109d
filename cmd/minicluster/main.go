// Command minicluster prints the Kubernetes objects the MiniCluster
// composition function composes for a claim, without a cluster: the
// function runs in-process on a request built from the claim, exactly as
// Crossplane would call it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// CLI is the command line.
type CLI struct {
	Render RenderCmd `cmd:"" help:"Print the objects composed for a MiniCluster claim (or Flux Operator MiniCluster YAML) as a YAML stream. The claim is first checked as the API server would: unknown fields, metadata, the XRD's schema and CEL rules (defaults applied)."`
	XR     XRCmd     `cmd:"" help:"Print the composite resource (XMiniCluster) Crossplane creates for a claim, e.g. as input of crossplane composition render. The claim is checked as by render." name:"xr"`

	Convert ConvertCmd `cmd:"" help:"Convert Flux Operator v1alpha1 MiniClusters to v1alpha2 claims (stdout); every v1alpha1 field without a v1alpha2 field gets a line on stderr saying why, or what to do instead."`
}

// XRCmd prints a claim's composite resource.
type XRCmd struct {
	File string `help:"MiniCluster claim YAML ('-' for stdin)." required:"" short:"f" type:"existingfile_or_stdin"`
}

// Run prints the composite.
func (c *XRCmd) Run() error {
	b, err := readFile(c.File)
	if err != nil {
		return err
	}
	if err := warnDuplicates(os.Stderr, "", b); err != nil {
		return err
	}
	out, err := compositeYAML(b)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

// xrHeader heads the xr.yaml of every example.
const xrHeader = "# The composite resource Crossplane creates for claim.yaml (minicluster xr -f claim.yaml).\n"

// compositeYAML is what `minicluster xr` prints for the claim in b.
func compositeYAML(b []byte) ([]byte, error) {
	xr, err := driver.CheckedComposite(context.Background(), b)
	if err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(xr.Object)
	if err != nil {
		return nil, err
	}
	return append([]byte(xrHeader), out...), nil
}

// RenderCmd renders a claim.
type RenderCmd struct {
	File     string   `help:"MiniCluster claim, upstream MiniCluster or XMiniCluster YAML ('-' for stdin)." required:"" short:"f" type:"existingfile_or_stdin"`
	Observed string   `help:"Directory of YAML files with observed objects (e.g. a previous render's output), so the CURVE certificate and maximum size are read back as on a live cluster." type:"existingdir"`
	Input    string   `help:"YAML file with the function's input (kind Input), as in the Composition: its policy is the platform's. Without it, the default policy applies, as with the shipped Composition." type:"existingfile"`
	Cluster  []string `sep:"none" help:"YAML file of objects of the cluster the policy reads (the MiniCluster's Namespace and its labels, ServiceAccounts, Secrets), e.g. an example's cluster.yaml; repeatable. Without it, the namespace has no labels and no ServiceAccount or Secret exists." type:"existingfile"`
	Results  bool     `default:"true" help:"Print the function's results (warnings, errors) to stderr." negatable:""`
	Shape    string   `default:"claims" enum:"claims,v2" help:"The cluster's shape: claims (compositions/, a claim and its XMiniCluster) or v2 (compositions/v2/, the namespaced MiniCluster is the composite). The composed objects are the same."`
}

// Run renders.
func (c *RenderCmd) Run() error { return c.render(os.Stdout, os.Stderr) }

// render writes the objects to stdout, and the warnings and results to
// stderr.
func (c *RenderCmd) render(stdout, stderr io.Writer) error {
	claim, err := readFile(c.File)
	if err != nil {
		return err
	}
	if err := warnDuplicates(stderr, "", claim); err != nil {
		return err
	}
	opts := driver.Options{Claim: claim, Shape: driver.Shape(c.Shape)}
	if c.Input != "" {
		if opts.Input, err = os.ReadFile(c.Input); err != nil {
			return fmt.Errorf("cannot read input: %w", err)
		}
	}
	for _, f := range c.Cluster {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("cannot read cluster objects: %w", err)
		}
		objs, err := driver.ParseObjects(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		opts.Cluster = append(opts.Cluster, objs...)
	}
	if c.Observed != "" {
		if opts.Observed, err = driver.ReadDir(c.Observed); err != nil {
			return err
		}
	}
	out, err := driver.Run(context.Background(), function.New(), opts)
	if err != nil {
		return err
	}
	if out.Invalid != nil {
		// The API server would refuse the claim; the function was not
		// called. The error carries every problem.
		return out.Invalid
	}
	if c.Results {
		for _, r := range out.Results {
			if _, err := fmt.Fprintln(stderr, r); err != nil {
				return err
			}
		}
	}
	if out.Fatal {
		return fmt.Errorf("the function refused to compose this MiniCluster (see the results above)")
	}
	_, err = stdout.Write(out.YAML)
	return err
}

// warnDuplicates prints a warning for every key b repeats: its last value
// is used, as kubectl apply would, and the earlier ones are lost. prefix
// names the file when there may be several.
func warnDuplicates(w io.Writer, prefix string, b []byte) error {
	for _, d := range driver.DuplicateFields(b) {
		if _, err := fmt.Fprintf(w, "%sWarning: %s\n", prefix, d); err != nil {
			return err
		}
	}
	return nil
}

func readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return b, nil
}

func main() {
	ctx := kong.Parse(&CLI{},
		kong.Name("minicluster"),
		kong.Description("MiniCluster for Crossplane: render a Flux MiniCluster into the Kubernetes objects the composition function creates."),
		kong.UsageOnError())
	ctx.FatalIfErrorf(ctx.Run())
}
