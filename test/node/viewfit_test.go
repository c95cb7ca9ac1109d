package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
	"github.com/flux-framework/minicluster-crossplane/test/harness/nodeimage"
)

// foreignViewRef is a test double of a Flux view built for another OS: a
// view image of Debian trixie whose flux is one of trixie's own programs,
// a real trixie ELF that needs a newer glibc than bookworm's (the node's
// application image). It is no Flux: in the application image it never
// gets past the dynamic loader, which is all the test needs of it.
const foreignViewRef = "localhost/minicluster-e2e/flux-view-trixie-double:1"

// bookwormGlibc is the glibc of the node's application image.
const bookwormGlibc = "2.36"

var foreignView struct {
	once sync.Once
	tar  string
	elf  string
	err  error
}

// foreignViewTarball builds foreignViewRef once: mmdebstrap of trixie
// (minutes the first time, then cached beside the node's other images).
func foreignViewTarball(t *testing.T) (string, string) {
	t.Helper()
	foreignView.once.Do(func() {
		ctx := context.Background()
		cache := harness.NodeImageCache()
		rootfs, err := nodeimage.Rootfs(ctx, nodeimage.RootfsSpec{CacheDir: cache, Suite: "trixie"}, logf)
		if err != nil {
			foreignView.err = err
			return
		}
		build := filepath.Join(cache, "build")
		if err := os.MkdirAll(build, 0o755); err != nil {
			foreignView.err = err
			return
		}
		bin := filepath.Join(build, "flux-trixie-double")
		path, need, err := nodeimage.ELFNeedingGlibc(rootfs, bookwormGlibc, bin)
		if err != nil {
			foreignView.err = err
			return
		}
		foreignView.elf = fmt.Sprintf("trixie's %s (needs GLIBC_%s)", path, need)
		soft := "/opt/software/flux-trixie-double"
		img := nodeimage.Image{Ref: foreignViewRef, Base: rootfs, Files: []nodeimage.File{
			{Path: soft + "/bin/flux", SourcePath: bin, Mode: 0o755},
			{Path: soft + "/README", Content: []byte("A test double of a Flux view built for another OS (e2e-node tests): bin/flux is " + foreignView.elf + ", not Flux.\n")},
			{Path: "/opt/view", Symlink: soft},
		}}
		foreignView.tar = filepath.Join(build, "flux-view-trixie-double.tar")
		foreignView.err = nodeimage.WriteTarball(img, foreignView.tar)
	})
	if foreignView.err != nil {
		t.Fatalf("cannot build the trixie view %s: %v", foreignViewRef, foreignView.err)
	}
	return foreignView.tar, foreignView.elf
}

// TestViewDoesNotFitEndsFailed runs hello-world in the node's bookworm
// application image with a view whose flux needs trixie's glibc: the
// runner's check ends the MiniCluster Failed within a minute, not retried,
// and kubectl describe says which two images do not fit and the fix.
func TestViewDoesNotFitEndsFailed(t *testing.T) {
	tarball, elf := foreignViewTarball(t)
	cp := nodePlane(t, driver.ShapeClaims)
	if err := nodeimage.Import(context.Background(), nodeimage.ImportSpec{Ctr: plane.tools.Ctr, Address: cp.Node().ContainerdAddress, Tarball: tarball}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the view's flux: %s", elf)
	ns := namespace(t, cp, "viewfit")
	f := manifest(t, "hello-world", ns, func(o map[string]any) {
		spec := o["spec"].(map[string]any)
		spec["size"] = int64(2)
		spec["flux"] = map[string]any{"container": map[string]any{"image": foreignViewRef}}
	})
	// The view the claim names is the node's own after localImages: name
	// the trixie double again.
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), harness.ViewImageRef, foreignViewRef))
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	mustKubectl(t, cp, "apply", "-f", f)

	wantColumns(t, cp, ns, "flux-sample", time.Minute, map[string]string{"PHASE": "Failed"})
	t.Logf("Failed %s after the claim was applied", time.Since(applied).Round(100*time.Millisecond))
	want := []string{
		"the Flux view " + foreignViewRef + " does not run in the application image " + harness.AppImageRef,
		"GLIBC_2.",
		"set spec.flux.container.image to a view built for the application image's OS",
	}
	var msg string
	eventually(t, time.Minute-time.Since(applied), "Finished names both images, the loader's error and the fix", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionFinished, "", "message"))
		if err != nil {
			return err
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Errorf("Finished message %q, want %q in it", out, w)
			}
		}
		msg = out
		return nil
	})
	t.Logf("Finished: %s", msg)
	if describe := mustKubectl(t, cp, "describe", "minicluster", "flux-sample", "-n", ns); !strings.Contains(describe, "does not run in the application image") {
		t.Errorf("kubectl describe minicluster does not say the view does not fit:\n%s", describe)
	}
	// Not retried: the Job failed on the first failure of each index.
	job := mustKubectl(t, cp, "get", "job", "flux-sample", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.failed}`)
	if !strings.HasPrefix(job, "PodFailurePolicy ") {
		t.Errorf("Job Failed reason and failed pods %q, want PodFailurePolicy", job)
	}
}

// TestViewFits: the node's own view (the stand-in, or real Flux with
// MC_FLUX_PREFIX) passes the runner's check in the application image, and
// the view the function picks for ubuntu:noble is the noble view.
func TestViewFits(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "viewfits")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, nil))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
	if !strings.Contains(logs, "hello world") || strings.Contains(logs, "does not run in the application image") {
		t.Errorf("the lead's log: want hello world and no view error in\n%s", logs)
	}
}
