package main

import (
	"fmt"
	"io"
	"os"
)

// fluxVersion is the flux-core release whose behaviour the double follows.
const fluxVersion = "0.88.0"

// versionLine is what flux --version prints: never mistaken for Flux.
const versionLine = "flux-standin (test double of flux-core " + fluxVersion + ")"

// stdio is where a command reads and writes, apart so tests can run commands
// in-process. Errors writing to out and err are ignored (`_, _ =`): a
// command whose terminal or pipe is gone has nowhere to report them.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
}

// commands are the flux subcommands the double knows. Each returns the
// command's exit status.
var commands = map[string]func([]string, stdio) int{
	"start":    cmdStart,
	"broker":   cmdBroker,
	"submit":   cmdSubmit,
	"run":      cmdRun,
	"batch":    cmdBatch,
	"job":      cmdJob,
	"jobs":     cmdJobs,
	"cancel":   cmdCancel,
	"queue":    cmdQueue,
	"resource": cmdResource,
	"overlay":  cmdOverlay,
	"proxy":    cmdProxy,
	"R":        cmdR,
	"getattr":  cmdGetattr,
	"lsattr":   cmdLsattr,
	"uptime":   cmdUptime,
	"module":   cmdModule,
	"shutdown": cmdShutdown,
	"version":  cmdVersion,
}

func run(args []string, io stdio) int {
	if len(args) == 0 {
		_, _ = fmt.Fprintln(io.err, "usage: flux [--version] COMMAND [ARGS...]  ("+versionLine+")")
		return 1
	}
	switch args[0] {
	case "--version", "-V":
		return cmdVersion(nil, io)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fail(io, notImplemented("flux "+args[0]))
	}
	return cmd(args[1:], io)
}

func cmdVersion(_ []string, io stdio) int {
	_, _ = fmt.Fprintln(io.out, versionLine)
	return 0
}

// fail prints err the way every command of the double reports an error,
// and returns 1.
func fail(io stdio, err error) int {
	_, _ = fmt.Fprintln(io.err, "flux-standin: "+err.Error())
	return 1
}
