package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// options of one render.
type options struct {
	// Crossplane is the crossplane CLI and Core the crossplane core binary.
	Crossplane, Core string
	// Function is the function binary; it is started for the render.
	Function string
	// Example is a directory with xr.yaml, claim.yaml and, optionally,
	// observed.yaml.
	Example string
	// Compositions is the directory of the functions file and the
	// Composition every example renders with (the repository's
	// compositions/; the v2 shape's Composition is in its v2/).
	Compositions string
	// Shape is "claims" (the default: the example's xr.yaml, the claim's
	// composite) or "v2" (its claim.yaml, which is the composite itself).
	Shape string
	// XRD is the CompositeResourceDefinition, so defaults of the schema
	// apply: "" for the shape's, "-" for none.
	XRD string
	// Observed overrides the example's observed.yaml; "-" means none.
	Observed string
	// Cluster overrides the example's cluster.yaml, the objects of the
	// cluster the function requires (--required-resources); "-" means
	// none: a namespace without labels.
	Cluster string
	// Input overrides the example's input.yaml, the function input the
	// Composition's step gets instead of its own; "-" means the
	// Composition's.
	Input string
}

// render renders the example and returns the CLI's YAML output.
func render(ctx context.Context, o options) ([]byte, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	fn := exec.CommandContext(ctx, o.Function, "--insecure", "--address="+addr, "--metrics-address=")
	var fnLog bytes.Buffer
	fn.Stdout, fn.Stderr = &fnLog, &fnLog
	if err := fn.Start(); err != nil {
		return nil, fmt.Errorf("cannot start function: %w", err)
	}
	defer func() {
		_ = fn.Process.Kill()
		_ = fn.Wait()
	}()
	if err := waitForPort(ctx, addr, 30*time.Second); err != nil {
		return nil, fmt.Errorf("function did not listen on %s: %w\n%s", addr, err, fnLog.String())
	}

	xr, composition, xrd := "xr.yaml", o.Compositions, o.XRD
	switch o.Shape {
	case "", "claims":
	case "v2":
		xr, composition = "claim.yaml", filepath.Join(o.Compositions, "v2")
	default:
		return nil, fmt.Errorf("unknown shape %q: want claims or v2", o.Shape)
	}
	if xrd == "" {
		xrd = filepath.Join(composition, "definition.yaml")
	}
	// What the platform provides for the example (driver.ExampleFixtures).
	cluster, input, err := driver.ExampleFixtures(o.Example)
	if err != nil {
		return nil, err
	}
	clusterFile := ""
	if cluster != nil {
		clusterFile = filepath.Join(o.Example, driver.ExampleClusterFile)
	}
	switch o.Cluster {
	case "":
	case "-":
		clusterFile = ""
	default:
		clusterFile = o.Cluster
	}
	switch o.Input {
	case "":
	case "-":
		input = nil
	default:
		if input, err = os.ReadFile(o.Input); err != nil {
			return nil, err
		}
	}
	compositionFile := filepath.Join(composition, "composition.yaml")
	if input != nil {
		dir, err := os.MkdirTemp("", "render-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir) //nolint:errcheck // temporary
		if compositionFile, err = withInput(compositionFile, input, dir); err != nil {
			return nil, err
		}
	}
	args := []string{"composition", "render",
		filepath.Join(o.Example, xr),
		compositionFile,
		filepath.Join(o.Compositions, "functions.yaml"),
		"--crossplane-binary=" + o.Core,
		"--function-annotations=render.crossplane.io/runtime-development-target=" + addr,
		"--include-function-results",
	}
	if xrd != "-" {
		args = append(args, "--xrd="+xrd)
	}
	observed := filepath.Join(o.Example, "observed.yaml")
	switch {
	case o.Observed == "-":
	case o.Observed != "":
		args = append(args, "--observed-resources="+o.Observed)
	default:
		if _, err := os.Stat(observed); err == nil {
			args = append(args, "--observed-resources="+observed)
		}
	}
	if clusterFile != "" && o.Shape == "v2" {
		// In the v2 shape the tenant's MiniCluster is the composite: a copy
		// of it among the cluster's objects (for a claim-shape composite to
		// look its claim up) would stand in for the composite itself.
		dir, err := os.MkdirTemp("", "render-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir) //nolint:errcheck // temporary
		if clusterFile, err = withoutComposite(clusterFile, filepath.Join(o.Example, xr), dir); err != nil {
			return nil, err
		}
	}
	if clusterFile != "" {
		args = append(args, "--required-resources="+clusterFile)
	}
	cmd := exec.CommandContext(ctx, o.Crossplane, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("crossplane composition render failed: %w\n%s\nfunction log:\n%s", err, stderr.String(), fnLog.String())
	}
	return stdout.Bytes(), nil
}

// withInput writes into dir the Composition of file with input as every
// pipeline step's input, as a platform team sets its own, and returns its
// path.
func withInput(file string, input []byte, dir string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var comp, in map[string]any
	if err := yaml.Unmarshal(b, &comp); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if err := yaml.Unmarshal(input, &in); err != nil {
		return "", fmt.Errorf("the function input: %w", err)
	}
	steps, _, err := unstructured.NestedSlice(comp, "spec", "pipeline")
	if err != nil || len(steps) == 0 {
		return "", fmt.Errorf("%s: no pipeline steps (%v)", file, err)
	}
	for _, st := range steps {
		if m, ok := st.(map[string]any); ok {
			m["input"] = in
		}
	}
	if err := unstructured.SetNestedSlice(comp, steps, "spec", "pipeline"); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(comp)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "composition.yaml")
	return path, os.WriteFile(path, out, 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %w", err)
	}
	defer l.Close() //nolint:errcheck // only probing
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitForPort(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withoutComposite writes into dir the objects of the YAML stream
// clusterFile but the one of xrFile's kind, namespace and name, and
// returns the file's path ("" when nothing is left).
func withoutComposite(clusterFile, xrFile, dir string) (string, error) {
	xrBytes, err := os.ReadFile(xrFile)
	if err != nil {
		return "", err
	}
	xr, err := driver.ReadMiniCluster(xrBytes)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(clusterFile)
	if err != nil {
		return "", err
	}
	objs, err := driver.ParseObjects(b)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", clusterFile, err)
	}
	var out bytes.Buffer
	for _, u := range objs {
		if u.GroupVersionKind() == xr.GroupVersionKind() && u.GetNamespace() == xr.GetNamespace() && u.GetName() == xr.GetName() {
			continue
		}
		y, err := yaml.Marshal(u.Object)
		if err != nil {
			return "", err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	if out.Len() == 0 {
		return "", nil
	}
	path := filepath.Join(dir, driver.ExampleClusterFile)
	return path, os.WriteFile(path, out.Bytes(), 0o600)
}
