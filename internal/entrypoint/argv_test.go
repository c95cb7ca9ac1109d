package entrypoint

// Expected argv of the fake flux's calls, derived from reference §3.2-§3.4
// (not from the generator).

import (
	"fmt"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// submit is the default submit-mode initial program for tasks 1 on size > 1.
func submit(command ...string) []string {
	return cat(words("flux", "submit", "-n1", "--quiet", "--watch"), command)
}

var hello = words("echo", "hello", "world")

// batchProgram is the lead's initial program in batch mode: flux batch with
// flags runs <mp>/flux-job.batch.
func batchProgram(mp, flags string) string {
	return "flux batch " + flags + " --flags waitable " + shell.Quote(mp+"/flux-job.batch") + " && flux job wait --all"
}

// bo describes the broker options of reference §3.2.
type bo struct {
	rc2none  bool   // interactive
	noSocket bool   // flux.disableSocket
	timeout  string // flux.connectTimeout ("" omits it)
	topo     string // flux.topology
	quorum   int    // minSize
	zmq      bool   // logging.zeromq
	level    int    // logLevel, 0 when quiet
}

// std are the options of a defaulted, non-quiet claim.
func std() bo { return bo{timeout: "5s", level: 6} }

// quietOpts are the options of a defaulted quiet claim.
func quietOpts() bo { return bo{timeout: "5s", level: 0} }

func (o bo) args(mp string) []string {
	c := mp + "/config"
	a := []string{"-Scron.directory=" + c + "/etc/flux/system/cron.d", "-Stbon.fanout=256", "-Srundir=" + c + "/run/flux"}
	if o.rc2none {
		a = append(a, "-Sbroker.rc2_none")
	}
	a = append(a, "-Sstatedir="+c+"/var/lib/flux")
	if !o.noSocket {
		a = append(a, "-Slocal-uri=local://"+c+"/run/flux/local")
	}
	if o.timeout != "" {
		a = append(a, "-Stbon.connect_timeout="+o.timeout)
	}
	if o.topo != "" {
		a = append(a, "-Stbon.topo="+o.topo)
	}
	if o.quorum > 0 {
		a = append(a, fmt.Sprintf("-Sbroker.quorum=%d", o.quorum))
	}
	if o.zmq {
		a = append(a, "-Stbon.zmqdebug=1")
	}
	return append(a, fmt.Sprintf("-Slog-stderr-level=%d", o.level), "-Slog-stderr-mode=local")
}

// encode is the resource set call every runner makes first.
func encode() []string {
	return []string{"R", "encode", "--hosts=flux-sample-[0-3]", "--local"}
}

// start is `flux start [pre...] --config-path=<cfg> <options> [initial program...]`,
// initial's leading -S words being more options. An initial program Flux
// runs (not rc2_none) is the lead's job, which starts with the capture of
// its output.
func start(mp string, o bo, pre []string, initial ...string) []string {
	return startCaptured(mp, o, !o.rc2none, pre, initial...)
}

// uncaptured is start where the runner could not capture the job's output
// (no fifos, tee or tail): the job's words follow the options at once.
func uncaptured(mp string, o bo, pre []string, initial ...string) []string {
	return startCaptured(mp, o, false, pre, initial...)
}

func startCaptured(mp string, o bo, captured bool, pre []string, initial ...string) []string {
	a := append([]string{"start"}, pre...)
	a = append(a, "--config-path="+mp+"/config/etc/flux/config")
	a = append(a, o.args(mp)...)
	n := 0
	for n < len(initial) && strings.HasPrefix(initial[n], "-S") {
		n++
	}
	a = append(a, initial[:n]...)
	if captured && n < len(initial) {
		a = append(a, capture(mp)...)
	}
	return append(a, initial[n:]...)
}

// capture is the start of a captured job: bash sends the rest of the
// initial program's stdout and stderr to the fifos of <mp>/job-output.
func capture(mp string) []string {
	return []string{"/bin/bash", "-c", `exec "${@:3}" > "$1" 2> "$2"`, "job-output", mp + "/job-output/out", mp + "/job-output/err"}
}

// broker is the interactive lead: `flux broker --config-path=<cfg> <options>`.
func broker(mp string, o bo) []string {
	return append([]string{"broker", "--config-path=" + mp + "/config/etc/flux/config"}, o.args(mp)...)
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func words(s ...string) []string { return s }
