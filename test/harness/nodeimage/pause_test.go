package nodeimage

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// buildPause builds the pause image once per test that needs it, and
// returns the binary too.
func buildPause(t *testing.T) (Image, string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to build the pause program")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	img, err := PauseImage(ctx, t.TempDir(), "localhost/minicluster-e2e/pause:test")
	if err != nil {
		t.Fatalf("PauseImage: %v", err)
	}
	return img, img.Files[0].SourcePath
}

func TestPauseImage(t *testing.T) {
	img, bin := buildPause(t)

	// A static binary has no program interpreter: the scratch image has
	// no dynamic loader to run it.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked", bin)
		}
	}

	path := filepath.Join(t.TempDir(), "pause.tar")
	if err := WriteTarball(img, path); err != nil {
		t.Fatalf("WriteTarball: %v", err)
	}
	got := readWritten(t, path, img.Ref)
	for i := range got.Layers {
		for j := range got.Layers[i] {
			got.Layers[i][j].Content = "" // the binary
		}
	}
	want := written{
		RepoTags: []string{img.Ref}, OS: "linux", Arch: "amd64",
		Env: []string{DefaultPath}, Entrypoint: []string{"/pause"}, User: "65535:65535",
		Layers: [][]tarEntry{{{Name: "pause", Type: 48, Mode: 0o755}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pause image: -want, +got:\n%s", diff)
	}
}

func TestPauseSignals(t *testing.T) {
	_, bin := buildPause(t)
	cases := map[string]struct {
		reason string
		sig    syscall.Signal
	}{
		"SIGTERM": {reason: "The runtime stops a sandbox with SIGTERM; pause exits 0.", sig: syscall.SIGTERM},
		"SIGINT":  {reason: "SIGINT stops it the same way.", sig: syscall.SIGINT},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Let it install its handlers; a signal before that would kill
			// it the default way, which is not what is tested.
			time.Sleep(300 * time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("pause exited by itself: %v", err)
			default:
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("\n%s\npause after %s: %v", tc.reason, tc.sig, err)
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("\n%s\npause did not exit after %s", tc.reason, tc.sig)
			}
		})
	}
}

// TestPauseReaps runs pause as PID 1 of a new PID namespace, orphans a
// process there, and checks pause reaps it once it exits rather than
// leaving a zombie.
func TestPauseReaps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a PID namespace needs root")
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Skip("no nsenter")
	}
	_, bin := buildPause(t)
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	time.Sleep(300 * time.Millisecond)

	// sh exits at once, so its sleep is reparented to the namespace's init.
	// The sleep must not hold nsenter's output open, or this would wait for
	// it to end and never see it as pause's child.
	out, err := exec.Command(nsenter, "--target", strconv.Itoa(pid), "--pid", "--", "sh", "-c", "sleep 2 </dev/null >/dev/null 2>&1 & exit 0").CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter: %v\n%s", err, out)
	}
	sawChild := false
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		kids := childrenOf(t, pid)
		if len(kids) > 0 {
			sawChild = true
		}
		if sawChild && len(kids) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sawChild {
		t.Fatal("the orphan was never reparented to pause")
	}
	t.Errorf("pause left its child a zombie: %v", childrenOf(t, pid))
}

// childrenOf lists the processes whose parent is pid, with their state.
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			continue
		}
		var ppid, state string
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "State:"); ok {
				state = strings.TrimSpace(v)
			}
		}
		if ppid == strconv.Itoa(pid) {
			out = append(out, e.Name()+" "+state)
		}
	}
	return out
}
