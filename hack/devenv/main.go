// Command devenv runs the end-to-end control plane (etcd, kube-apiserver,
// kube-controller-manager, Crossplane core and the MiniCluster function,
// with the repository's RBAC, XRD and Composition installed: the Crossplane
// v2 shape of compositions/v2/ unless --shape=claims) and, as root,
// a real node (containerd, CoreDNS, kube-scheduler, a kubelet and images
// built here) and Kueue (batch/job, its webhooks on) in the background, for
// trying MiniClusters by hand:
//
//	devenv up      start it and print `export KUBECONFIG=...`
//	devenv down    stop it
//	devenv status  say whether it runs
//
// `make dev-up` and `make dev-down` run it. Its state (pid file, log,
// certificates, etcd data, the control plane's logs) lives in
// $MC_DEVENV_DIR, default $TMPDIR/minicluster-devenv.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

const usage = `usage: devenv up|down|status|serve [--dir DIR] [--shape v2|claims]

  up      start the control plane in the background; prints export KUBECONFIG=...
  down    stop it
  status  print whether it runs, and its KUBECONFIG
  serve   run it in the foreground until interrupted (what up starts)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("devenv "+cmd, flag.ExitOnError)
	def := os.Getenv("MC_DEVENV_DIR")
	if def == "" {
		def = filepath.Join(os.TempDir(), "minicluster-devenv")
	}
	dir := fs.String("dir", def, "state directory ($MC_DEVENV_DIR)")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long up waits for the control plane to start")
	stopTimeout := fs.Duration("stop-timeout", 5*time.Minute, "how long down waits for the control plane to stop before it kills it and cleans up after its node")
	node := fs.Bool("node", os.Geteuid() == 0, "add a real node (kubelet, containerd, CoreDNS, images built here); needs root")
	kueue := fs.Bool("kueue", os.Geteuid() == 0, "run Kueue beside the control plane (batch/job, webhooks on; examples/kueue); needs root")
	// v2 first: Crossplane v2 recommends namespaced composites over claims,
	// and they cost half the writes here (docs/performance.md).
	shape := fs.String("shape", string(driver.ShapeV2), "the MiniCluster shape to install: v2 (compositions/v2/, the namespaced MiniCluster is the composite) or claims (compositions/)")
	_ = fs.Parse(os.Args[2:])
	if *shape != string(driver.ShapeV2) && *shape != string(driver.ShapeClaims) {
		fmt.Fprintf(os.Stderr, "devenv: --shape %q: want v2 or claims\n", *shape)
		os.Exit(2)
	}
	st := state{dir: *dir, node: *node, kueue: *kueue, shape: driver.Shape(*shape)}

	var err error
	switch cmd {
	case "up":
		err = st.up(*timeout)
	case "down":
		err = st.down(*stopTimeout)
	case "status":
		err = st.status()
	case "serve":
		err = st.serve()
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devenv:", err)
		os.Exit(1)
	}
}

type state struct {
	dir string
	// node adds a real node (kubelet, containerd, CoreDNS): as root only.
	node bool
	// kueue runs Kueue beside the control plane: as root only.
	kueue bool
	// shape is the MiniCluster shape installed.
	shape driver.Shape
}

func (s state) pidFile() string    { return filepath.Join(s.dir, "devenv.pid") }
func (s state) logFile() string    { return filepath.Join(s.dir, "devenv.log") }
func (s state) readyFile() string  { return filepath.Join(s.dir, "ready") }
func (s state) cpDir() string      { return filepath.Join(s.dir, "control-plane") }
func (s state) kubeconfig() string { return filepath.Join(s.cpDir(), "admin.kubeconfig") }

// running returns the pid of a running devenv serve, or 0.
func (s state) running() int {
	b, err := os.ReadFile(s.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if !harness.Alive(pid) {
		return 0
	}
	// The pid may have been reused by another program.
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !strings.Contains(string(cmdline), "serve") {
		return 0
	}
	return pid
}

func (s state) printExport() {
	fmt.Printf("export KUBECONFIG=%s\n", s.kubeconfig())
}

func (s state) up(timeout time.Duration) error {
	if pid := s.running(); pid != 0 {
		fmt.Fprintf(os.Stderr, "devenv: already running (pid %d); `make dev-down` stops it\n", pid)
		s.printExport()
		return nil
	}
	// A control plane that was killed left its node: clean up after it
	// first, or its mounts keep the directory from being removed.
	if err := s.cleanNode(); err != nil {
		return err
	}
	// A fresh control plane every time: stale etcd data and certificates
	// from an earlier run would only confuse.
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.Create(s.logFile())
	if err != nil {
		return err
	}
	defer logf.Close() //nolint:errcheck // the child has its own descriptor
	cmd := exec.Command(self, "serve", "--dir", s.dir, "--node="+strconv.FormatBool(s.node), "--kueue="+strconv.FormatBool(s.kueue), "--shape="+string(s.shape))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command and its terminal
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "devenv: starting the control plane (pid %d, log %s)...\n", cmd.Process.Pid, s.logFile())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Follow the log until the control plane is ready or the server dies.
	deadline := time.After(timeout)
	var off int64
	follow := func() {
		f, err := os.Open(s.logFile())
		if err != nil {
			return
		}
		defer f.Close() //nolint:errcheck // read-only
		if _, err := f.Seek(off, io.SeekStart); err == nil {
			n, _ := io.Copy(os.Stderr, f)
			off += n
		}
	}
	for {
		follow()
		if _, err := os.Stat(s.readyFile()); err == nil {
			fmt.Fprint(os.Stderr, readyHint(s.shape))
			s.printExport()
			return nil
		}
		select {
		case err := <-exited:
			follow()
			return fmt.Errorf("the control plane exited during start (%v); see %s", err, s.logFile())
		case <-deadline:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
			return fmt.Errorf("the control plane was not ready after %s; stopping it (log: %s)", timeout, s.logFile())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// down stops the control plane: SIGTERM, so that it drains and stops its
// node and puts the host back itself. One that has not stopped within
// timeout (a node with many pods drains for minutes) is killed, and down
// then does what its Stop did not get to: kill the node's processes,
// containers and shims, unmount everything under its directory and put
// the host back. It fails only when something is left.
func (s state) down(timeout time.Duration) error {
	pid := s.running()
	killed := false
	if pid == 0 {
		fmt.Fprintln(os.Stderr, "devenv: not running")
		_ = os.Remove(s.pidFile())
	} else {
		fmt.Fprintf(os.Stderr, "devenv: stopping pid %d...\n", pid)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return err
		}
		if !waitExit(pid, timeout) {
			fmt.Fprintf(os.Stderr, "devenv: the control plane did not stop within %s; killing it\n", timeout)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !waitExit(pid, 30*time.Second) {
				return fmt.Errorf("pid %d survived SIGKILL", pid)
			}
			killed = true
			_ = os.Remove(s.pidFile())
		}
	}
	if err := s.cleanNode(); err != nil {
		return err
	}
	if killed {
		fmt.Fprintf(os.Stderr, "devenv: killed; cleaned up after its node (logs kept in %s)\n", s.dir)
	} else if pid != 0 {
		fmt.Fprintf(os.Stderr, "devenv: stopped (logs kept in %s)\n", s.dir)
	}
	return nil
}

// cleanNode puts the host back after a node whose control plane was killed
// (by down, or by anything else): a no-op after a clean stop. Then nothing
// may stay mounted under the state directory.
func (s state) cleanNode() error {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "devenv: "+format+"\n", args...) }
	if err := harness.CleanStaleNode(s.dir, logf); err != nil {
		return err
	}
	if _, err := os.Stat(s.dir); err != nil {
		return nil
	}
	return harness.UnmountUnder(s.dir)
}

// waitExit waits until pid has exited, and tells whether it did within
// timeout.
func waitExit(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for harness.Alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
	return true
}

func (s state) status() error {
	if pid := s.running(); pid != 0 {
		fmt.Fprintf(os.Stderr, "devenv: running (pid %d)\n", pid)
		s.printExport()
		return nil
	}
	fmt.Fprintln(os.Stderr, "devenv: not running")
	return nil
}

// serve runs the control plane in the foreground until SIGTERM or SIGINT.
func (s state) serve() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(s.pidFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(s.pidFile()) //nolint:errcheck // best effort
	opts := harness.Options{Name: "dev", Dir: s.cpDir(), Shape: s.shape}
	if s.node {
		root, err := harness.RepoRoot()
		if err != nil {
			return err
		}
		logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		imgs, err := harness.BuildNodeImages(ctx, root, harness.NodeImageCache(), logf)
		if err != nil {
			return fmt.Errorf("cannot build the node's images: %w", err)
		}
		opts.Node = &harness.NodeOptions{Images: imgs.Tarballs, PauseImage: harness.PauseImageRef}
		opts.StartTimeout = 10 * time.Minute
	}
	if s.kueue {
		opts.Kueue = &harness.KueueOptions{}
		opts.StartTimeout = 10 * time.Minute
	}
	cp, err := harness.Start(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "devenv:", shapeLine(s.shape))
	if cp.Kueue() != nil {
		fmt.Fprintf(os.Stderr, "devenv: Kueue runs (webhooks at %s); queue a MiniCluster with examples/kueue (kubectl apply -f examples/kueue/kueue.yaml first)\n", cp.Kueue().WebhookURL)
	}
	if n := cp.Node(); n != nil {
		root, err := harness.RepoRoot()
		if err != nil {
			_ = cp.Stop()
			return err
		}
		hint, err := nodeHint(root)
		if err != nil {
			_ = cp.Stop()
			return err
		}
		fmt.Fprintf(os.Stderr, "devenv: node %s runs pods (%s); no registry is reachable, so point an example at the node's images:\n"+
			"  %s\n  (the Flux view defaults to %s on this node)\n", n.Name, n.IP, hint, harness.ViewImageRef)
	}
	if err := os.WriteFile(s.readyFile(), []byte(cp.Kubeconfig+"\n"), 0o600); err != nil {
		_ = cp.Stop()
		return err
	}
	fmt.Fprintf(os.Stderr, "devenv: serving; processes %v\n", cp.Pids())
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "devenv: stopping")
	_ = os.Remove(s.readyFile())
	return cp.Stop()
}

// shapeLine says which shape the control plane serves and how to get the
// other: a cluster serves one of them (they share the MiniCluster CRD).
func shapeLine(shape driver.Shape) string {
	if shape == driver.ShapeClaims {
		return "MiniClusters are Crossplane claims (compositions/, each with a cluster-scoped XMiniCluster); `make dev-up` without SHAPE=claims serves the Crossplane v2 shape"
	}
	return "MiniClusters are Crossplane v2 namespaced composites (compositions/v2/, as configuration-minicluster-v2 installs them); `make dev-up SHAPE=claims` serves claims instead"
}

// readyHint is what up prints once the control plane is ready: the
// README's first commands, which apply unchanged in either shape.
func readyHint(shape driver.Shape) string {
	return "devenv: ready (" + string(shape) + " shape). Try:\n" +
		"  kubectl apply -f examples/hello-world/claim.yaml\n" +
		"  kubectl get miniclusters,jobs,services,configmaps,secrets -n default\n" +
		"Stop it with `make dev-down`.\n"
}

// helloWorld is the example the hints run, relative to the repository.
const helloWorld = "examples/hello-world/claim.yaml"

// nodeHint is the command that runs hello-world on the node: no registry
// is reachable, so each image the example names becomes the node's
// application image. The images are read from the example, not written
// here, so the hint follows the example when its image changes (a hint
// looking for an image the example no longer names applies it unchanged,
// and its pods cannot pull).
func nodeHint(repoRoot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(repoRoot, helloWorld))
	if err != nil {
		return "", err
	}
	var mc struct {
		Spec struct {
			Containers []struct {
				Image string `json:"image"`
			} `json:"containers"`
			Services []struct {
				Image string `json:"image"`
			} `json:"services"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &mc); err != nil {
		return "", fmt.Errorf("%s: %w", helloWorld, err)
	}
	var images []string
	for _, c := range mc.Spec.Containers {
		images = append(images, c.Image)
	}
	for _, c := range mc.Spec.Services {
		images = append(images, c.Image)
	}
	slices.Sort(images)
	images = slices.Compact(images)
	if len(images) == 0 || images[0] == "" {
		return "", fmt.Errorf("%s names no image to point at the node's", helloWorld)
	}
	var sed strings.Builder
	sed.WriteString("sed")
	for _, img := range images {
		// Image references hold no quote; the regular expression's
		// specials (the dots of a registry) and the delimiter are escaped.
		fmt.Fprintf(&sed, " -e 's#image: %s#image: %s#'", sedEscape(img), harness.AppImageRef)
	}
	return sed.String() + " " + helloWorld + " | kubectl apply -f -", nil
}

// sedEscape quotes s for a basic regular expression between # delimiters.
func sedEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.*[]^$#`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
