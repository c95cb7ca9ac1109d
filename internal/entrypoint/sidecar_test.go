package entrypoint

// Sidecar wrappers: unlike the Flux Operator's (a stale socket path and a
// wait command that is no longer installed), they wait for the real socket.

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// sidecarClaim has a runner and, at index 1, a sidecar with command.
func sidecarClaim(sb *sandbox, command string, mutate func(mc *v1alpha2.MiniCluster)) *v1alpha2.MiniCluster {
	return claim(2, "echo hello world", func(mc *v1alpha2.MiniCluster) {
		sb.use(mc)
		mc.Spec.Containers = append(mc.Spec.Containers, v1alpha2.MiniClusterContainer{Name: "sidecar", Command: command})
		if mutate != nil {
			mutate(mc)
		}
	})
}

func TestSidecarWaitsForTheBrokerSocket(t *testing.T) {
	sb := newSandbox(t)
	mc := sidecarClaim(sb, `printf 'socket=%s\n' "${fluxsocket}"; flux proxy "${fluxsocket}" hostname`, func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Logging.Quiet = true
	})
	script := Sidecar(mc, 1, plan(t, mc, sb.paths))
	file := filepath.Join(sb.root, "start-1.sh")
	mustWrite(t, file, script, 0o755)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sb.bash, file)
	cmd.Dir = sb.work
	cmd.Env = sb.env(leadHost, map[string]string{"FAKE_SLEEP": "0.05"})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	select {
	case err := <-done:
		t.Fatalf("the sidecar must wait for the broker socket, but it exited (%v):\n%s\n%s", err, stdout.String(), stderr.String())
	case <-time.After(400 * time.Millisecond):
	}
	if calls, _ := sb.calls(t); len(calls) != 0 {
		t.Fatalf("the sidecar ran its command before the socket existed: %q", calls)
	}

	socket := filepath.Join(sb.mp, "config/run/flux/local")
	mustMkdir(t, filepath.Dir(socket))
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatalf("cannot create the broker socket: %v", err)
	}
	defer func() { _ = l.Close() }()

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sidecar failed: %v\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the sidecar did not notice the socket")
	}
	uri := "local://" + socket
	if got, want := stdout.String(), "socket="+uri+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	calls, envs := sb.calls(t)
	if diff := cmp.Diff([][]string{{"proxy", uri, "hostname"}}, calls); diff != "" {
		t.Errorf("flux calls: -want, +got:\n%s", diff)
	}
	if len(envs) == 1 && envs[0]["fluxsocket"] != uri {
		t.Errorf("fluxsocket must be exported, flux saw %q", envs[0]["fluxsocket"])
	}
}

func TestSidecar(t *testing.T) {
	cases := map[string]struct {
		reason   string
		command  string
		mutate   func(mc *v1alpha2.MiniCluster)
		env      map[string]string
		want     func(sb *sandbox) [][]string
		wantExit int
		stdout   func(sb *sandbox) string
		check    func(t *testing.T, sb *sandbox, r result)
	}{
		"NoWaitSocket": {
			reason:  "With noWaitSocket the sidecar runs at once, as shell code, with ${fluxsocket} set.",
			command: `echo "$fluxsocket" | tr a-z A-Z && flux proxy "$fluxsocket" true`,
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.NoWaitSocket = true; mc.Spec.Logging.Quiet = true },
			want: func(sb *sandbox) [][]string {
				return [][]string{{"proxy", "local://" + sb.mp + "/config/run/flux/local", "true"}}
			},
			stdout: func(sb *sandbox) string {
				return strings.ToUpper("local://"+sb.mp+"/config/run/flux/local") + "\n"
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if len(r.sleeps) != 0 {
					t.Errorf("noWaitSocket must not wait: slept %q", r.sleeps)
				}
			},
		},
		"ExitCodeAndHooks": {
			reason:  "Hooks run init, servicePre, command, post; the command's exit code is the sidecar's; quiet hides init/servicePre output only.",
			command: `echo command >> "$EVENTS"; (exit 3)`,
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.NoWaitSocket = true
				mc.Spec.Logging.Quiet = true
				c := &mc.Spec.Containers[1].Commands
				c.Init = `echo init >> "$EVENTS"; echo INIT-OUT`
				c.ServicePre = `echo servicePre >> "$EVENTS"; echo SERVICEPRE-OUT`
				c.Post = `echo post >> "$EVENTS"; echo POST-OUT`
			},
			wantExit: 3,
			stdout:   func(*sandbox) string { return "POST-OUT\n" },
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"init", "servicePre", "command", "post"}, r.events); diff != "" {
					t.Errorf("order: -want, +got:\n%s", diff)
				}
			},
		},
		"Script": {
			reason:  "commands.script is written verbatim and run instead of the command.",
			command: "echo not me",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.NoWaitSocket = true
				mc.Spec.Logging.Quiet = true
				mc.Spec.Containers[1].Commands.Script = "#!/bin/bash\nprintf '%s|%s\\n' \"${fluxsocket}\" '$HOME'\nexit 4\n"
			},
			wantExit: 4,
			stdout: func(sb *sandbox) string {
				return "local://" + sb.mp + "/config/run/flux/local|$HOME\n"
			},
		},
		"HostileNameAndCommand": {
			reason:  "A hostile container name cannot break the wrapper; a single-quoted hostile command prints literally.",
			command: "printf '%s\\n' " + "'" + strings.ReplaceAll(hostile, "'", `'\''`) + "'",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.NoWaitSocket = true
				mc.Spec.Logging.Quiet = true
				mc.Spec.Containers[1].Name = hostile
			},
			stdout: func(*sandbox) string { return hostile + "\n" },
		},
		"BrokenCommand": {
			reason:  "A command with a syntax error fails alone: post still runs, the exit code is eval's.",
			command: `echo "unterminated`,
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Flux.NoWaitSocket = true
				mc.Spec.Logging.Quiet = true
				mc.Spec.Containers[1].Commands.Post = "echo POST-OUT"
			},
			wantExit: 2,
			stdout:   func(*sandbox) string { return "POST-OUT\n" },
		},
		"SocketAlreadyThere": {
			reason:  "When the broker is already up the sidecar does not sleep.",
			command: "echo ok",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Quiet = true },
			stdout:  func(*sandbox) string { return "ok\n" },
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if len(r.sleeps) != 0 {
					t.Errorf("slept %q", r.sleeps)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sb := newSandbox(t)
			mc := sidecarClaim(sb, tc.command, tc.mutate)
			script := Sidecar(mc, 1, plan(t, mc, sb.paths))
			bashSyntax(t, tc.reason, script)
			if name == "SocketAlreadyThere" {
				socket := filepath.Join(sb.mp, "config/run/flux/local")
				mustMkdir(t, filepath.Dir(socket))
				l, err := net.Listen("unix", socket)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = l.Close() }()
			}
			r := sb.run(t, script, leadHost, tc.env)
			if r.exit != tc.wantExit {
				t.Errorf("%s\nexit = %d, want %d\nstderr:\n%s", tc.reason, r.exit, tc.wantExit, r.stderr)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want(sb), r.calls); diff != "" {
					t.Errorf("%s\nflux calls: -want, +got:\n%s", tc.reason, diff)
				}
			}
			if tc.stdout != nil {
				if diff := cmp.Diff(tc.stdout(sb), r.stdout); diff != "" {
					t.Errorf("%s\nstdout: -want, +got:\n%s\nstderr:\n%s", tc.reason, diff, r.stderr)
				}
			}
			if tc.check != nil {
				tc.check(t, sb, r)
			}
			noCanary(t, tc.reason, sb)
		})
	}
}
