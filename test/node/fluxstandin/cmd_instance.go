package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cmdProxy is flux proxy URI [COMMAND...]: the broker at URI must answer,
// then COMMAND (default $SHELL) runs with FLUX_URI=URI. A real proxy
// relays through a socket of its own; the double hands out the URI itself.
func cmdProxy(args []string, io stdio) int {
	o, err := parseOpts("flux proxy", optTables["flux proxy"], args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) == 0 {
		return fail(io, fmt.Errorf("flux-proxy: a URI is required"))
	}
	uri := o.rest[0]
	if err := call(uri, request{Op: opPing}, nil); err != nil {
		return fail(io, fmt.Errorf("flux-proxy: %s: %s", uri, err))
	}
	argv := o.rest[1:]
	if len(argv) == 0 {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = setEnv(os.Environ(), "FLUX_URI", uri)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.in, io.out, io.err
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return exitCode(ee.ProcessState)
		}
		_, _ = fmt.Fprintf(io.err, "flux-standin: flux-proxy: %s: %s\n", argv[0], errnoText(err))
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOENT) {
			return 127
		}
		return 126
	}
	return 0
}

func cmdGetattr(args []string, io stdio) int {
	if len(args) != 1 {
		return fail(io, fmt.Errorf("flux-getattr: usage: flux getattr NAME"))
	}
	r, err := call1(request{Op: opGetattr, Name: args[0]})
	if err != nil {
		return fail(io, fmt.Errorf("flux-getattr: %s", err))
	}
	_, _ = fmt.Fprintln(io.out, r.Value)
	return 0
}

func cmdLsattr(args []string, io stdio) int {
	o, err := parseOpts("flux lsattr", optTables["flux lsattr"], args)
	if err != nil {
		return fail(io, err)
	}
	r, err := call1(request{Op: opLsattr})
	if err != nil {
		return fail(io, fmt.Errorf("flux-lsattr: %s", err))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Attrs)) {
		if o.has("values") {
			_, _ = fmt.Fprintf(io.out, "%-30s %s\n", k, r.Attrs[k])
		} else {
			_, _ = fmt.Fprintln(io.out, k)
		}
	}
	return 0
}

// cmdUptime prints flux uptime's line: time, state, age, owner, size.
func cmdUptime(args []string, io stdio) int {
	if len(args) > 0 {
		return fail(io, notImplemented("flux uptime "+args[0]))
	}
	r, err := call1(request{Op: opUptime})
	if err != nil {
		return fail(io, fmt.Errorf("flux-uptime: %s", err))
	}
	f := strings.Fields(r.Value)
	if len(f) != 3 {
		return fail(io, fmt.Errorf("flux-uptime: malformed answer"))
	}
	owner := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		owner = u.Username
	}
	_, _ = fmt.Fprintf(io.out, " %s %s %s,  owner %s,  depth 0,  size %s\n", time.Now().Format("15:04:05"), f[0], f[1], owner, f[2])
	return 0
}

// cmdModule is flux module list, load and remove: recorded by the broker,
// nothing loaded (see the package doc).
func cmdModule(args []string, io stdio) int {
	if len(args) == 0 {
		return fail(io, notImplemented("flux module without a subcommand"))
	}
	sub := args[0]
	if sub == "unload" || sub == "rmmod" {
		sub = "remove"
	}
	switch sub {
	case "list":
		r, err := call1(request{Op: opModule, Name: "list"})
		if err != nil {
			return fail(io, fmt.Errorf("flux-module: %s", err))
		}
		_, _ = fmt.Fprintf(io.out, "%-24s %s\n", "Module", "Note")
		for _, m := range r.Modules {
			_, _ = fmt.Fprintf(io.out, "%-24s %s\n", m, "recorded by flux-standin, not loaded")
		}
		return 0
	case "load", "remove":
		o, err := parseOpts("flux module "+sub, optTables["flux module load"], args[1:])
		if err != nil {
			return fail(io, err)
		}
		if len(o.rest) == 0 {
			return fail(io, fmt.Errorf("flux-module: %s: a module name is required", sub))
		}
		_, err = call1(request{Op: opModule, Name: sub, Args: o.rest})
		forced := sub == "remove" && o.has("force")
		if err != nil && !forced {
			return fail(io, fmt.Errorf("flux-module: %s", err))
		}
		if sub == "load" {
			_, _ = fmt.Fprintf(io.err, "flux-standin: module %s recorded, not loaded: the test double has no modules (its own FCFS scheduler keeps scheduling)\n", o.rest[0])
		}
		return 0
	}
	return fail(io, notImplemented("flux module "+args[0]))
}

// cmdShutdown is flux shutdown: the instance ends (its initial program,
// if running, gets SIGHUP first).
func cmdShutdown(args []string, io stdio) int {
	o, err := parseOpts("flux shutdown", optTables["flux shutdown"], args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, notImplemented("flux shutdown with a target"))
	}
	if _, err := call1(request{Op: opShutdown}); err != nil {
		return fail(io, fmt.Errorf("flux-shutdown: %s", err))
	}
	return 0
}
