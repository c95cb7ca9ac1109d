package main

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCert is a valid certificate, made the way the project makes one
// (X25519, Z85, ZPL) but by the test, so the double's checks are checked
// against an independent writer.
func testCert(t *testing.T) (text string, pub, sec string) {
	t.Helper()
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, sec = encodeZ85(k.PublicKey().Bytes()), encodeZ85(k.Bytes())
	return certText("flux-cert-generator", pub, sec), pub, sec
}

func certText(name, pub, sec string) string {
	meta := ""
	if name != "" {
		meta = fmt.Sprintf("    name = \"%s\"\n", name)
	}
	return "#   ZeroMQ CURVE **Secret** Certificate\n\nmetadata\n" + meta +
		"curve\n    public-key = \"" + pub + "\"\n    secret-key = \"" + sec + "\"\n"
}

// built is the double, built once for every test that runs it.
var built struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir) // a temporary directory; a leftover harms nothing
	}
	os.Exit(code)
}

// fluxBinary builds the double as the node tier does (static, no cgo) into
// a directory that then goes first on the brokers' PATH, as `flux`.
func fluxBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "fluxstandin-bin-")
		if built.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(built.dir, "flux"), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("building the double: %v\n%s", built.err, built.out)
	}
	return built.dir
}

// freePort is a TCP port on 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only its port was wanted
	return l.Addr().(*net.TCPAddr).Port
}

// instance is an instance of n brokers on this machine: hosts node-0 …
// node-(n-1), each binding its own port on 127.0.0.1 (per-host bind and
// connect keys, as a burst cluster's broker.toml has), each its own rundir.
type instance struct {
	t      *testing.T
	dir    string
	n      int
	bin    string
	config string
	cmds   []*exec.Cmd
	outs   []*syncBuffer
	errs   []*syncBuffer
	exits  []chan int
	// extraEnv goes to every broker and client, as the runner's exports do.
	extraEnv []string
}

func newInstance(t *testing.T, n int, extraToml string) *instance {
	t.Helper()
	in := &instance{t: t, dir: shortTempDir(t), n: n, bin: fluxBinary(t)}
	in.config = filepath.Join(in.dir, "config")
	must(t, os.MkdirAll(in.config, 0o755))
	cert, _, _ := testCert(t)
	certPath := filepath.Join(in.dir, "curve.cert")
	must(t, os.WriteFile(certPath, []byte(cert), 0o600))
	var hosts []string
	for i := 0; i < n; i++ {
		uri := fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))
		hosts = append(hosts, fmt.Sprintf("{host = 'node-%d', bind = '%s', connect = '%s'}", i, uri, uri))
		must(t, os.MkdirAll(in.rundir(i), 0o755))
	}
	toml := fmt.Sprintf("[bootstrap]\ncurve_cert = '%s'\ndefault_port = 8050\nhosts = [%s]\n%s", certPath, strings.Join(hosts, ", "), extraToml)
	must(t, os.WriteFile(filepath.Join(in.config, "broker.toml"), []byte(toml), 0o644))
	in.cmds = make([]*exec.Cmd, n)
	in.outs = make([]*syncBuffer, n)
	in.errs = make([]*syncBuffer, n)
	in.exits = make([]chan int, n)
	t.Cleanup(in.kill)
	return in
}

// shortTempDir keeps socket paths under the 107 bytes AF_UNIX allows.
func shortTempDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "fsi-")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(d) }) // a temporary directory; a leftover harms nothing
	return d
}

func (in *instance) rundir(i int) string { return filepath.Join(in.dir, fmt.Sprintf("run%d", i)) }
func (in *instance) socket(i int) string { return filepath.Join(in.rundir(i), "local") }

// env is a broker's or client's environment: the double first on PATH,
// its hostname, and a C locale so job ids start with "f".
func (in *instance) env(i int) []string {
	env := []string{"PATH=" + in.bin + ":" + os.Getenv("PATH"), "HOME=" + in.dir, "LANG=C",
		hostnameEnvForTests + fmt.Sprintf("=node-%d", i)}
	return append(env, in.extraEnv...)
}

// start runs broker i: flux start with the scripts' kind of options, and
// program as rank 0's initial program.
func (in *instance) start(i int, opts []string, program ...string) {
	args := append([]string{"start", "--config-path=" + in.config,
		"-Srundir=" + in.rundir(i), "-Slocal-uri=local://" + in.socket(i),
		"-Stbon.connect_timeout=2s", "-Slog-stderr-level=6", "-Slog-stderr-mode=local"}, opts...)
	args = append(args, program...)
	cmd := exec.Command(filepath.Join(in.bin, "flux"), args...)
	cmd.Env = in.env(i)
	cmd.Dir = in.dir
	in.outs[i], in.errs[i] = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = in.outs[i], in.errs[i]
	must(in.t, cmd.Start())
	in.cmds[i] = cmd
	in.exits[i] = make(chan int, 1)
	go func(ch chan int) {
		_ = cmd.Wait() // its exit status is in cmd.ProcessState
		ch <- exitCode(cmd.ProcessState)
	}(in.exits[i])
}

// wait returns broker i's exit status, failing the test after d.
func (in *instance) wait(i int, d time.Duration) int {
	in.t.Helper()
	select {
	case c := <-in.exits[i]:
		in.exits[i] <- c
		return c
	case <-time.After(d):
		in.t.Fatalf("broker %d did not exit within %s\nstdout:\n%s\nstderr:\n%s", i, d, in.outs[i], in.errs[i])
	}
	return -1
}

func (in *instance) kill() {
	for _, c := range in.cmds {
		if c != nil {
			_ = c.Process.Kill() // an error once it has exited, harmless
		}
	}
}

// logs is every broker's output, for failure messages.
func (in *instance) logs() string {
	var b strings.Builder
	for i := range in.cmds {
		if in.outs[i] != nil {
			fmt.Fprintf(&b, "--- broker %d stdout:\n%s--- broker %d stderr:\n%s", i, in.outs[i], i, in.errs[i])
		}
	}
	return b.String()
}

// client runs a flux command against broker i's socket.
func (in *instance) client(i int, args ...string) (string, string, int) {
	cmd := exec.Command(filepath.Join(in.bin, "flux"), args...)
	cmd.Env = append(in.env(i), "FLUX_URI=local://"+in.socket(i))
	cmd.Dir = in.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A non-zero exit is the status returned; any other error is that flux
	// did not run.
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		in.t.Fatalf("flux %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), exitCode(cmd.ProcessState)
}

// waitSocket waits for broker i's local socket, as the readiness probe does.
func (in *instance) waitSocket(i int, d time.Duration) {
	in.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if st, err := os.Stat(in.socket(i)); err == nil && st.Mode()&os.ModeSocket != 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	in.t.Fatalf("no socket for broker %d after %s\n%s", i, d, in.logs())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe to write from a process while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
