package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// brokerArgs are a broker's command line: flux broker's, or what flux start
// passes on to it.
type brokerArgs struct {
	configPath string
	setattrs   []string
	program    []string
}

// startOpts are flux start's options the double takes: the test options
// (--test-size, ...) and --recovery are not among them.
var startOpts = []opt{
	{'c', "config-path", true}, {'S', "setattr", true}, {'o', "broker-opts", true},
	{'v', "verbose", false}, {0, "wrap", true},
}

// brokerOpts are flux-broker's.
var brokerOpts = []opt{{'c', "config-path", true}, {'S', "setattr", true}, {'v', "verbose", false}}

// cmdStart is flux start without --test-size: with a config path it runs
// the broker (real flux start execs flux-broker; --wrap=ARGS execs
// ARGS... flux-broker ..., which the double does too, with itself as the
// broker).
func cmdStart(args []string, io stdio) int {
	o, err := parseOpts("flux start", startOpts, args)
	if err != nil {
		return fail(io, err)
	}
	ba := brokerArgs{configPath: o.last("config-path", ""), setattrs: o.all("setattr"), program: o.rest}
	for _, bo := range o.all("broker-opts") {
		bargs := strings.Split(bo, ",")
		bo, err := parseOpts("flux start --broker-opts", brokerOpts, bargs)
		if err != nil {
			return fail(io, err)
		}
		if len(bo.rest) > 0 {
			return fail(io, fmt.Errorf("flux start: --broker-opts %q has a non-option", strings.Join(bargs, ",")))
		}
		ba.setattrs = append(ba.setattrs, bo.all("setattr")...)
		if bo.has("config-path") {
			ba.configPath = bo.last("config-path", "")
		}
	}
	if w := o.last("wrap", ""); w != "" {
		return execWrapped(strings.Split(w, ","), ba, io)
	}
	return runBroker(ba, io)
}

func cmdBroker(args []string, io stdio) int {
	o, err := parseOpts("flux broker", brokerOpts, args)
	if err != nil {
		return fail(io, err)
	}
	return runBroker(brokerArgs{configPath: o.last("config-path", ""), setattrs: o.all("setattr"), program: o.rest}, io)
}

// execWrapped replaces this process with wrap... <self> broker ARGS, as
// flux start --wrap does with flux-broker.
func execWrapped(wrap []string, ba brokerArgs, io stdio) int {
	self, err := os.Executable()
	if err != nil {
		return fail(io, fmt.Errorf("flux start: %s", err))
	}
	argv := append(append([]string{}, wrap...), self, "broker")
	if ba.configPath != "" {
		argv = append(argv, "--config-path="+ba.configPath)
	}
	for _, s := range ba.setattrs {
		argv = append(argv, "-S"+s)
	}
	if len(ba.program) > 0 {
		argv = append(append(argv, "--"), ba.program...)
	}
	path, err := exec.LookPath(wrap[0])
	if err != nil {
		return fail(io, fmt.Errorf("flux start: --wrap: %s: %s", wrap[0], errnoText(err)))
	}
	err = syscall.Exec(path, argv, os.Environ())
	return fail(io, fmt.Errorf("flux start: exec %s: %s", path, errnoText(err)))
}

// runBroker is flux-broker: bootstrap from the configuration, join the
// overlay, serve the local socket, run the initial program on rank 0, and
// return the broker's exit status.
func runBroker(ba brokerArgs, io stdio) int {
	b, err := newBroker(ba, io)
	if err != nil {
		_, _ = fmt.Fprintf(io.err, "flux-standin: flux-broker: %s\n", err)
		return 1
	}
	return b.run()
}
