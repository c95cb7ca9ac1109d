package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// startProgram runs rank 0's initial program (rc2) with FLUX_URI set to
// this broker; when it exits, the instance shuts down with its exit status
// (128+signal when killed), as flux start does. As in Flux, one word with
// shell syntax runs under $SHELL -c, no words runs $SHELL interactively.
func (b *broker) startProgram() {
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/bash"
	}
	argv := b.program
	switch {
	case b.interactive:
		argv = []string{shell, "-i"}
	case len(argv) == 1 && strings.ContainsAny(argv[0], " \t\n|&;<>()$`\\\"'*?[#~=%"):
		argv = []string{shell, "-c", argv[0]}
	}
	env := setEnv(os.Environ(), "FLUX_URI", "local://"+b.localPath)
	env = unsetEnv(env, "FLUX_STANDIN_SCOPE")
	path, err := exec.LookPath(argv[0])
	if err != nil {
		b.fatalProgram(argv[0], err)
		return
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: b.io.in, Stdout: b.io.out, Stderr: b.io.err}
	if !b.interactive {
		// Its own process group, so that a signal for the instance reaches
		// everything the program started.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		b.fatalProgram(argv[0], err)
		return
	}
	b.mu.Lock()
	b.progProc = cmd.Process
	b.mu.Unlock()
	b.log.logf(logDebug, "rc2.0: %s pid %d", strings.Join(argv, " "), cmd.Process.Pid)
	go func() {
		_ = cmd.Wait() // its exit status is in cmd.ProcessState
		code := exitCode(cmd.ProcessState)
		b.mu.Lock()
		b.progProc = nil
		b.mu.Unlock()
		b.log.logf(logInfo, "rc2.0: %s Exited (rc=%d)", strings.Join(argv, " "), code)
		b.shutdown(code, "initial program exited")
	}()
}

// fatalProgram: an initial program that cannot start ends the instance
// with 127 (not found) or 126, as a shell would.
func (b *broker) fatalProgram(name string, err error) {
	code := 126
	if os.IsNotExist(err) || errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), "executable file not found") {
		code = 127
	}
	b.log.logf(logErr, "rc2.0: %s: %s", name, errnoText(err))
	_, _ = fmt.Fprintf(b.io.err, "flux-standin: flux-broker: rc2.0: %s: %s\n", name, errnoText(err))
	b.shutdown(code, "initial program could not start")
}
