package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestDevDownLeavesNothing runs `make dev-up` and `make dev-down`'s command
// (hack/devenv) on the real node the way a user does, and wants the
// host as it was after each `down`:
//   - Stopped: pods with a hostPath of / have run (one still runs, one has
//     ended); down stops the control plane, exits 0 and leaves no shim, no
//     mount under its directory (the kubelet's root directory was the one
//     left), no cgroup, no bridge; the next up starts.
//   - Killed: with many pods running, the control plane does not stop
//     within down's time and is killed in the middle of its drain; down
//     still stops every container and shim the node started and removes
//     their mounts, and exits 0.
func TestDevDownLeavesNothing(t *testing.T) {
	if v := os.Getenv(EnvE2ENode); v == "" || v == "0" {
		t.Skipf("runs a real node: set %s=1 (make e2e-node does)", EnvE2ENode)
	}
	if os.Geteuid() != 0 {
		t.Skip("the real node needs root")
	}
	// The machine has one node at a time: the other tests' goes first.
	stopPlane(false)
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := harness.FindNodeTools(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	devenv := filepath.Join(t.TempDir(), "devenv")
	build := exec.CommandContext(ctx, "go", "build", "-o", devenv, "./hack/devenv")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build devenv: %v\n%s", err, out)
	}
	// Not t.TempDir: its removal would fail on what a broken down leaves
	// mounted, hiding the test's own report of it.
	dir, err := os.MkdirTemp("", "minicluster-devdown-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	netnsBefore := netnsEntries()
	dev := devEnv{t: t, bin: devenv, dir: dir, root: root, kubectl: tools.Kubectl}

	t.Run("Stopped", func(t *testing.T) {
		dev.t = t
		dev.up()
		// examples/volumes with the host's / as its hostPath, as a platform
		// allows it (the namespace label its cluster.yaml sets), run to its
		// end; beside it, plain pods with / mounted, one still running.
		if _, err := dev.kubectlOut("label", "namespace", "default", "pod-security.kubernetes.io/enforce=privileged"); err != nil {
			t.Fatal(err)
		}
		mc := manifest(t, "volumes", "default", func(o map[string]any) {
			cs, _, _ := unstructured.NestedSlice(o, "spec", "containers")
			cs[0].(map[string]any)["volumes"].(map[string]any)["data"].(map[string]any)["hostPath"] = "/"
			_ = unstructured.SetNestedSlice(o, cs, "spec", "containers")
		})
		if _, err := dev.kubectlOut("apply", "-f", mc); err != nil {
			t.Fatal(err)
		}
		dev.apply(hostPathRootPods)
		dev.waitPods("hostpath-root-done", "Succeeded")
		dev.waitPods("hostpath-root-running", "Running")
		if _, err := dev.kubectlOut("wait", "minicluster/flux-sample", "-n", "default", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=3m"); err != nil {
			t.Fatal(err)
		}
		dev.down()
		if left := leftovers(dir, netnsBefore); len(left) > 0 {
			t.Errorf("after make dev-down, the node left:\n  %s", strings.Join(left, "\n  "))
		}
	})
	t.Run("Killed", func(t *testing.T) {
		dev.t = t
		dev.up() // after Stopped: the next up starts
		dev.apply(hostPathRootPods + "---\n" + manyPods(manyPodsCount))
		dev.waitPods("hostpath-root-running", "Running")
		dev.waitRunning("job-name=many", manyPodsCount)
		shims := harness.NodeShims(filepath.Join(dir, "control-plane", "node", "containerd", "containerd.sock"))
		t.Logf("%d shims of the node before down", len(shims))
		if len(shims) < manyPodsCount {
			t.Errorf("%d shims for %d running pods: the test would not see shims left behind", len(shims), manyPodsCount)
		}
		// The drain of this many pods takes longer than this: down kills
		// the control plane in the middle of it.
		dev.down("--stop-timeout=3s")
		if left := leftovers(dir, netnsBefore); len(left) > 0 {
			t.Errorf("after make dev-down killed the control plane, the node left:\n  %s", strings.Join(left, "\n  "))
		}
	})
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("the state directory cannot be removed after down (the next make dev-up would fail): %v", err)
	}
}

// manyPodsCount is enough pods that the drain outlasts down's time.
const manyPodsCount = 30

// hostPathRootPods mount the host's / as a tenant with host access may:
// one has ended, one still runs when the node stops.
var hostPathRootPods = fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: hostpath-root-done
  namespace: default
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: %[1]s
    command: ["ls", "/host/"]
    volumeMounts: [{name: root, mountPath: /host}]
  volumes:
  - name: root
    hostPath: {path: /}
---
apiVersion: v1
kind: Pod
metadata:
  name: hostpath-root-running
  namespace: default
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: c
    image: %[1]s
    command: ["sleep", "infinity"]
    volumeMounts: [{name: root, mountPath: /host}]
  volumes:
  - name: root
    hostPath: {path: /}
`, harness.AppImageRef)

// manyPods is a Job of n pods that run until they are killed.
func manyPods(n int) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: many
  namespace: default
spec:
  parallelism: %[1]d
  completions: %[1]d
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers:
      - name: c
        image: %[2]s
        command: ["sleep", "infinity"]
        resources: {requests: {cpu: 1m, memory: 1Mi}}
`, n, harness.AppImageRef)
}

// devEnv drives the devenv command as `make dev-up` and `make dev-down` do.
type devEnv struct {
	t                       *testing.T
	bin, dir, root, kubectl string
}

func (d devEnv) run(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Dir = d.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (d devEnv) up() {
	d.t.Helper()
	start := time.Now()
	out, err := d.run(15*time.Minute, "up", "--dir", d.dir, "--kueue=false")
	if err != nil {
		d.t.Fatalf("devenv up: %v\n%s", err, lastLines(out, 40))
	}
	d.t.Logf("devenv up in %s", time.Since(start).Round(100*time.Millisecond))
}

func (d devEnv) down(args ...string) {
	d.t.Helper()
	start := time.Now()
	out, err := d.run(10*time.Minute, append([]string{"down", "--dir", d.dir}, args...)...)
	d.t.Logf("devenv down %v in %s:\n%s", args, time.Since(start).Round(100*time.Millisecond), lastLines(out, 20))
	if err != nil {
		d.t.Errorf("devenv down: %v (make dev-down would exit 1)", err)
	}
}

func (d devEnv) kubectlOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(d.dir, "control-plane", "admin.kubeconfig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func (d devEnv) apply(manifest string) {
	d.t.Helper()
	f := filepath.Join(d.t.TempDir(), "pods.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.kubectlOut("apply", "-f", f); err != nil {
		d.t.Fatal(err)
	}
}

func (d devEnv) waitPods(name, phase string) {
	d.t.Helper()
	eventually(d.t, 3*time.Minute, "pod "+name+" "+phase, func() error {
		out, err := d.kubectlOut("get", "pod", name, "-n", "default", "-o", "jsonpath={.status.phase}")
		if err != nil {
			return err
		}
		if out != phase {
			return fmt.Errorf("phase %q", out)
		}
		return nil
	})
}

func (d devEnv) waitRunning(selector string, n int) {
	d.t.Helper()
	eventually(d.t, 6*time.Minute, fmt.Sprintf("%d pods %s Running", n, selector), func() error {
		out, err := d.kubectlOut("get", "pods", "-n", "default", "-l", selector, "--field-selector=status.phase=Running", "-o", "name")
		if err != nil {
			return err
		}
		if got := len(strings.Fields(out)); got < n {
			return fmt.Errorf("%d running", got)
		}
		return nil
	})
}

// leftovers lists what of a node under dir is still on the host: its
// processes (shims, containers' processes started from its files, its
// daemons), mounts under dir, network namespaces it added, the kubepods
// cgroups, its bridge and its host state file.
func leftovers(dir string, netnsBefore map[string]bool) []string {
	var left []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !harness.Alive(pid) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if cmd := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "); strings.Contains(cmd, dir+"/") {
			left = append(left, fmt.Sprintf("process %d: %s", pid, cmd))
		}
	}
	mounts, err := harness.MountsUnder(dir)
	if err != nil {
		left = append(left, err.Error())
	}
	if len(mounts) > 0 {
		left = append(left, fmt.Sprintf("%d mounts under %s, such as %s", len(mounts), dir, strings.Join(mounts[:min(len(mounts), 3)], " ")))
	}
	for ns := range netnsEntries() {
		if !netnsBefore[ns] {
			left = append(left, "network namespace /run/netns/"+ns)
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, c := range cgroups {
		left = append(left, "cgroup "+c)
	}
	if _, err := net.InterfaceByName("mcnode0"); err == nil {
		left = append(left, "bridge mcnode0")
	}
	if _, err := os.Stat("/run/minicluster-e2e-node.json"); !errors.Is(err, os.ErrNotExist) {
		left = append(left, "/run/minicluster-e2e-node.json (the node's host state)")
	}
	return left
}

// netnsEntries are the named network namespaces on the host.
func netnsEntries() map[string]bool {
	m := map[string]bool{}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		m[e.Name()] = true
	}
	return m
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
