// Package node_test runs what the README promises on a real node: the
// control plane of test/e2e plus containerd, CoreDNS, kube-scheduler and a
// kubelet (harness.NodeOptions), with images built here. Pods really run:
// the Flux view carries real flux-core when MC_FLUX_PREFIX names an
// install, and otherwise the stand-in of test/node/fluxstandin, a test
// double that reads the mounted broker.toml and certificate as Flux does,
// binds and connects its brokers over the pods' network and DNS, and runs
// the initial program on the lead (see its package doc for what it cannot
// give). The README's commands run with a real kubectl.
//
// `make e2e-node` runs them; `go test ./...` skips them unless MC_E2E_NODE=1
// is set. They need root: without it they skip and say so.
package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// conditionJSONPath is kubectl's -o jsonpath of the fields (status,
// reason, message) of a MiniCluster's condition typ, separated by sep
// (jsonpath text: "|", or {"\n"} for a newline).
func conditionJSONPath(typ v1alpha2.ConditionType, sep string, fields ...string) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		parts = append(parts, `{.status.conditions[?(@.type=="`+string(typ)+`")].`+f+`}`)
	}
	return "jsonpath=" + strings.Join(parts, sep)
}

// EnvE2ENode must be set (to anything but "" or "0") for these tests to run.
const EnvE2ENode = "MC_E2E_NODE"

// plane is the one control plane with a real node. A machine has one node
// at a time, so the tests of the v2 shape (…V2, last in each file's order
// of run) get it after the claim shape's plane has stopped.
var plane struct {
	mu     sync.Mutex
	cp     *harness.ControlPlane
	shape  driver.Shape
	images *harness.NodeImages
	tools  harness.NodeTools
	failed bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopPlane(code != 0)
	os.Exit(code)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func stopPlane(failed bool) {
	plane.mu.Lock()
	defer plane.mu.Unlock()
	if plane.cp == nil {
		return
	}
	if failed || plane.failed {
		plane.cp.KeepDir()
		fmt.Fprintf(os.Stderr, "\ne2e-node: tests failed; logs are kept in %s\n", plane.cp.LogDir)
		plane.cp.DumpLogs(os.Stderr, 30)
	}
	if err := plane.cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-node:", err)
	}
	plane.cp = nil
}

// buildNodeImages builds the node's images and finds its tools once per
// process, for every plane that runs the real node; plane.mu is held.
func buildNodeImages(ctx context.Context, t *testing.T, root string) {
	t.Helper()
	if plane.images != nil {
		return
	}
	start := time.Now()
	imgs, err := harness.BuildNodeImages(ctx, root, harness.NodeImageCache(), logf)
	if err != nil {
		t.Fatalf("cannot build the node's images: %v", err)
	}
	plane.images = &imgs
	logf("e2e-node: images ready in %s (real Flux: %v)", time.Since(start).Round(100*time.Millisecond), imgs.RealFlux)
	if plane.tools, err = harness.FindNodeTools(ctx, root); err != nil {
		t.Fatal(err)
	}
}

// nodePlane returns the control plane with the real node, serving shape.
func nodePlane(t *testing.T, shape driver.Shape) *harness.ControlPlane {
	t.Helper()
	if v := os.Getenv(EnvE2ENode); v == "" || v == "0" {
		t.Skipf("the real-node tests run pods on this machine: set %s=1 (make e2e-node does, after installing the tools)", EnvE2ENode)
	}
	if os.Geteuid() != 0 {
		t.Skip("the real-node tests need root (a network bridge, cgroups, mounts, containerd): run them as root; CI does")
	}
	t.Cleanup(func() {
		if t.Failed() {
			plane.mu.Lock()
			plane.failed = true
			plane.mu.Unlock()
		}
	})
	plane.mu.Lock()
	if plane.cp != nil && plane.shape == shape {
		cp := plane.cp
		plane.mu.Unlock()
		return cp
	}
	plane.mu.Unlock()
	stopPlane(false)
	plane.mu.Lock()
	defer plane.mu.Unlock()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	buildNodeImages(ctx, t, root)
	start := time.Now()
	cp, err := harness.Start(ctx, harness.Options{
		Name:         "node-" + string(shape),
		Shape:        shape,
		StartTimeout: 10 * time.Minute,
		Logf:         logf,
		Node:         &harness.NodeOptions{Images: plane.images.Tarballs, PauseImage: harness.PauseImageRef},
		// Kueue as a platform runs it (batch/job, webhooks on): Jobs without
		// a queue name pass it untouched; kueue_test.go queues MiniClusters.
		Kueue: &harness.KueueOptions{},
	})
	if err != nil {
		if errors.Is(err, harness.ErrToolsMissing) {
			t.Fatalf("%s is set but %v", EnvE2ENode, err)
		}
		t.Fatal(err)
	}
	logf("e2e-node: control plane and node up in %s", time.Since(start).Round(100*time.Millisecond))
	plane.cp, plane.shape = cp, shape
	return cp
}

// realFlux tells whether the view carries real flux-core.
func realFlux() bool { return plane.images != nil && plane.images.RealFlux }

// ---------------------------------------------------------------- kubectl

// kubectl runs the real kubectl against the control plane, as a user of the
// README would, and returns its standard output.
func kubectl(t *testing.T, cp *harness.ControlPlane, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plane.tools.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func mustKubectl(t *testing.T, cp *harness.ControlPlane, args ...string) string {
	t.Helper()
	out, err := kubectl(t, cp, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ---------------------------------------------------------------- claims

// localImages points a MiniCluster manifest at the node's images, the one
// change the tests make to an example: no registry is reachable here. The
// application containers get the application image (the nginx one where
// the example names nginx, the one with stand-ins of the examples' own
// programs where it names an application's image).
func localImages(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	viewDisabled, _, _ := unstructured.NestedBool(spec, "flux", "container", "disable")
	app := func(image string) string {
		switch {
		case strings.HasPrefix(image, "nginx"):
			return harness.NginxImageRef
		case viewDisabled:
			return harness.AppsImageRef // brings Flux, as the example's image does
		case strings.HasPrefix(image, "rockylinux") || strings.HasPrefix(image, "ubuntu"):
			return harness.AppImageRef
		default:
			return harness.AppsImageRef // the stand-ins of the example's programs
		}
	}
	for _, key := range []string{"containers", "services"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				img, _ := m["image"].(string)
				m["image"] = app(img)
			}
		}
	}
	// The view comes from the platform default the harness sets (the
	// node's view image), as a platform team's Composition would give it;
	// an example that names its own view gets the node's.
	if view, found, _ := unstructured.NestedMap(spec, "flux", "container"); found {
		if _, named := view["image"]; named {
			_ = unstructured.SetNestedField(spec, harness.ViewImageRef, "flux", "container", "image")
		}
	}
}

// manifest reads an example's claim, sets its namespace, lets edit change
// it, points it at the node's images, and writes it to a file for kubectl.
func manifest(t *testing.T, example, namespace string, edit func(map[string]any)) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", example, "claim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("examples/%s/claim.yaml: %v", example, err)
	}
	u := unstructured.Unstructured{Object: obj}
	u.SetNamespace(namespace)
	// A command that names the example's namespace in a DNS name follows it.
	if namespace != "default" {
		u.Object = renameNamespace(u.Object, namespace).(map[string]any)
	}
	if edit != nil {
		edit(u.Object)
	}
	localImages(u.Object)
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), example+".yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// namespace creates a namespace for one test and deletes it at the end.
func namespace(t *testing.T, cp *harness.ControlPlane, name string) string {
	t.Helper()
	mustKubectl(t, cp, "create", "namespace", name)
	t.Cleanup(func() {
		// The MiniClusters go first, as a tenant deletes them, so that their
		// composites are gone before the namespace's content is: a
		// composite left running would compose into a terminating
		// namespace.
		if _, err := kubectl(t, cp, "delete", "miniclusters", "--all", "-n", name, "--timeout=2m"); err != nil {
			t.Log(err)
		}
		if _, err := kubectl(t, cp, "delete", "namespace", name, "--wait=false"); err != nil {
			t.Log(err)
		}
	})
	return name
}

// eventually polls f every 500ms until it returns nil, failing the test
// with f's last error after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := f()
		if err == nil {
			t.Logf("%s (after %s)", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s: %v", timeout, what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// columns reads `kubectl get miniclusters NAME` as the README shows it:
// header names to values.
func columns(t *testing.T, cp *harness.ControlPlane, ns, name string) (map[string]string, error) {
	out, err := kubectl(t, cp, "get", "miniclusters", name, "-n", ns)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("kubectl get printed %q", out)
	}
	return parseColumns(lines[0], lines[1]), nil
}

// parseColumns splits a kubectl table row by the header's column starts, so
// an empty cell (BROKERS before any pod) reads as "".
func parseColumns(header, row string) map[string]string {
	m := map[string]string{}
	var starts []int
	var names []string
	for i := 0; i < len(header); i++ {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
			j := strings.IndexByte(header[i:], ' ')
			if j < 0 {
				j = len(header) - i
			}
			names = append(names, header[i:i+j])
		}
	}
	for k, s := range starts {
		end := len(row)
		if k+1 < len(starts) && starts[k+1] < len(row) {
			end = starts[k+1]
		}
		if s < len(row) {
			m[names[k]] = strings.TrimSpace(row[s:end])
		}
	}
	return m
}

// renameNamespace replaces ".default.svc" in every string of v.
func renameNamespace(v any, ns string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = renameNamespace(e, ns)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = renameNamespace(e, ns)
		}
		return x
	case string:
		return strings.ReplaceAll(x, ".default.svc", "."+ns+".svc")
	default:
		return v
	}
}
