package entrypoint

import (
	"strconv"

	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// How a runner ends. The runner is the container's first process, so the
// signal that stops its pod (a delete, a scale-down, an eviction) comes to
// it alone: it passes the signal on to its broker, which leaves the instance
// as Flux means it to (a follower says goodbye to its parent and the others
// stay full; the lead aborts its initial program and shuts the instance
// down), and the pod ends at once instead of after its grace period.
//
// Once the lead's instance has run, every way the lead's runner ends is final
// for the MiniCluster: its followers have left, so a replaced lead would wait
// for them until the deadline. The runner then exits 0 only when the job
// succeeded and nothing after it failed, and JobFailedExitCode otherwise,
// and its termination message says why (see LeadMessagePrefix).

// LeadMessagePrefix starts the first line of the lead's termination message
// whenever its job ran:
//
//	flux job on <lead pod> exited with <the job's exit code>[; <what ended the lead after it>]
//
// for example "flux job on flux-sample-0 exited with 3", or "flux job on
// flux-sample-0 exited with 0; commands.post then failed with 2
// (logging.strict)", or "flux job on flux-sample-0 exited with 129; SIGTERM
// stopped the lead". The lines after it are the lead's last words: the last
// lines of the job's own output, stdout and stderr as the instance's initial
// program printed them (flux submit --watch's in submit mode, the command's
// in launcher mode, flux batch's in batch mode), cut to fit the kubelet's
// 4096 bytes; never the runner's own lines, R or the brokers' log, which
// only the container's log carries. Without mkfifo, tee or tail in the image
// the first line is all there is. A runner that ends before any job (no
// flux, no /usr/bin/time for logging.timed) writes a single line saying what
// is missing instead.
const LeadMessagePrefix = "flux job on "

// lastWordsBytes bounds the lead's last words in its termination message:
// the kubelet keeps 4096 bytes of it, and the first line needs the rest.
const lastWordsBytes = 3500

// lastWordsLines is how many lines of output the last words keep.
const lastWordsLines = 20

// The job's output passes through fifos in the view volume on its way to
// the container's log, and a tail of it stays: the lead's last words. The
// runner's own output and the brokers' go to the log directly.
var (
	outputDir   = spot{atMount, "job-output"}
	outFifo     = outputDir.join("out")
	errFifo     = outputDir.join("err")
	tailFifo    = outputDir.join("tail")
	tickFifo    = outputDir.join("tick")
	lastWords   = outputDir.join("last-words")
	signalNames = []struct {
		name string
		num  int
	}{{"TERM", 15}, {"INT", 2}}
)

// captureFDs are the descriptors the lead's runner holds its fifos open on
// while the job runs (see captureJob). No process it starts may inherit them.
const captureFDs = "7>&- 8>&- 9>&-"

// captureWrapper is the start of the lead's initial program when its output
// is captured: a bash that sends what it runs ("${@:3}") to the fifos $1
// and $2. The broker gives its initial program its own stdout and stderr
// and closes every other descriptor, so the fifos are opened by path. $0
// names it in bash's own errors (a command that cannot be run). /bin/bash
// is there: the container runs the runner with it.
var captureWrapper = []string{"/bin/bash", "-c", `exec "${@:3}" > "$1" 2> "$2"`, "job-output"}

// endings writes what every runner needs to end well: the signal
// forwarding, runBroker, flushJob, and the EXIT trap that maps the lead's
// endings to exit codes and writes its termination message. It comes after
// viewSetup (it needs ${mp}) and before anything starts a broker.
func endings(s *script, l Layout, strict bool) {
	log := shell.Quote(l.fixed().TerminationLog)
	s.blank()
	s.line("# broker: the broker runBroker waits for; stopped: the signal that stops")
	s.line("# the runner; job: the lead's job's exit code once its instance has run;")
	s.line("# step: what runs after it, for the termination message; tees: what")
	s.line("# carries the lead's job's output (see flushJob).")
	s.line(`broker=""`)
	s.line(`stopped=""`)
	s.line("signals=0")
	s.line(`job=""`)
	s.line(`step=""`)
	s.line("tees=()")
	s.line("# signalBroker passes signal $1 on to the broker: the process runBroker")
	s.line("# started, or, when that is a wrapper (logging.timed's time, flux.wrap),")
	s.line("# its children, as the wrapper would not pass the signal on.")
	s.line("# shellcheck disable=SC2317 # run by a trap")
	s.line("signalBroker() {")
	s.in()
	s.line(`local p st kids=()`)
	s.line(`if read -r st < "/proc/${broker}/comm" 2> /dev/null && [ "${st#flux}" = "${st}" ]; then`)
	s.in()
	s.line(`for p in /proc/[0-9]*/stat; do`)
	s.in()
	s.line(`st=""`)
	s.line(`read -r st < "${p}" 2> /dev/null || continue`)
	s.line(`st="${st##*) }"`)
	s.line(`st="${st#* }"`)
	s.line("%s", `if [ "${st%% *}" = "${broker}" ]; then p="${p#/proc/}"; kids+=("${p%/stat}"); fi`)
	s.out()
	s.line("done")
	s.out()
	s.line("fi")
	s.line(`if [ "${#kids[@]}" -eq 0 ]; then kids=("${broker}"); fi`)
	s.line(`kill -s "$1" "${kids[@]}" 2> /dev/null || true`)
	s.out()
	s.line("}")
	s.line("# stop is the trap of signal $1 (number $2): with no broker running the")
	s.line("# runner ends now, else the broker gets SIGTERM and the runner ends when")
	s.line("# it has left. Flux brokers take SIGINT as SIGTERM, but a background")
	s.line("# process starts with SIGINT ignored, so SIGTERM is what they get.")
	s.line("# shellcheck disable=SC2317 # run by a trap")
	s.line("stop() {")
	s.in()
	s.line("signals=$((signals + 1))")
	s.line(`stopped="${stopped:-$2}"`)
	s.line(`echo "SIG$1: stopping" >&2`)
	s.line(`if [ -z "${broker}" ]; then exit "$((128 + $2))"; fi`)
	s.line(`signalBroker TERM`)
	s.out()
	s.line("}")
	for _, sig := range signalNames {
		s.line("trap 'stop %s %d' %s", sig.name, sig.num, sig.name)
	}
	s.line("# runBroker runs a broker in the background, keeping stdin (the TTY), so")
	s.line("# that a signal to the runner reaches it, and returns its exit code. The")
	s.line("# runner's hold on the job's fifos stays here: what the broker leaves")
	s.line("# running must not keep them open.")
	s.line("runBroker() {")
	s.in()
	s.line("local r=0 again=0 seen")
	s.line(`"$@" 0<&0 %s &`, captureFDs)
	s.line("broker=$!")
	s.line(`seen="${signals}"`)
	s.line(`wait "${broker}" || r=$?`)
	s.line("# A trap ends wait early; wait again for the broker's own code (127:")
	s.line("# the first wait had it).")
	s.line(`while [ "${seen}" != "${signals}" ]; do`)
	s.in()
	s.line(`seen="${signals}"`)
	s.line("again=0")
	s.line(`wait "${broker}" || again=$?`)
	s.line(`if [ "${again}" -ne 127 ]; then r="${again}"; fi`)
	s.out()
	s.line("done")
	s.line(`broker=""`)
	s.line(`return "${r}"`)
	s.out()
	s.line("}")

	s.line("# flushJob waits until the job's output is in the log and its last lines")
	s.line("# in the last words: the tees end once the runner lets go of their fifos,")
	s.line("# unless a process the job left running still holds them (waited for 2s),")
	s.line("# and the tail once the tees are gone. Only the lead ever has tees.")
	s.line("# shellcheck disable=SC2317 # without a job, run by ending alone")
	s.line("flushJob() {")
	s.in()
	s.line("local n=0")
	s.line(`if [ "${#tees[@]}" -eq 0 ]; then return 0; fi`)
	s.line("exec 7>&- 8>&-")
	s.line(`while [ "${n}" -lt 20 ] && kill -0 "${tees[@]:1}" 2> /dev/null; do`)
	s.in()
	s.line("n=$((n + 1))")
	s.line(`read -r -t 0.1 <> %s || true`, tickFifo.sh())
	s.out()
	s.line("done")
	s.line(`kill "${tees[@]:1}" 2> /dev/null || true`)
	s.line("exec 9>&-")
	s.line(`wait "${tees[0]}" 2> /dev/null || true`)
	s.line("tees=()")
	s.out()
	s.line("}")

	s.line("# ending is the EXIT trap of every way the runner ends.")
	s.line("# shellcheck disable=SC2317 # run by a trap")
	s.line("ending() {")
	s.in()
	s.line("local code=$? first=\"\"")
	s.line("trap - EXIT")
	s.line(`if [ -n "${job}" ]; then`)
	s.in()
	s.line(`first="%s${mainHost} exited with ${job}"`, LeadMessagePrefix)
	s.line(`if [ -n "${stopped}" ]; then`)
	s.in()
	s.line(`first="${first}; SIG$(kill -l "${stopped}") stopped the lead"`)
	s.out()
	s.line(`elif [ "${code}" -ne 0 ] && [ "${code}" -ne %d ]; then`, JobFailedExitCode)
	s.in()
	// Under strict mode the runner ends at a hook's first failing command;
	// without it, only a hook that calls exit ends it.
	why := ""
	if strict {
		why = " (logging.strict)"
	}
	s.line(`first="${first}; ${step:-the runner} then failed with ${code}%s"`, why)
	s.out()
	s.line("fi")
	s.line(`if [ "${code}" -ne 0 ] || [ "${job}" -ne 0 ]; then code=%d; fi`, JobFailedExitCode)
	s.out()
	s.line("fi")
	s.line("flushJob")
	s.line(`if [ -n "${first}" ] && [ -w %s ]; then`, log)
	s.in()
	s.line(`{ printf '%%s\n' "${first}"; if [ -f %s ]; then tail -c %d %s; fi; } > %s || true`, lastWords.sh(), lastWordsBytes, lastWords.sh(), log)
	s.out()
	s.line("fi")
	s.line(`exit "${code}"`)
	s.out()
	s.line("}")
	s.line("trap ending EXIT")
}

// captureJob sends the output of the lead's job through tees to the
// runner's stdout and stderr, and through a tail to the last words; hidden,
// the tees copy it to the last words only. The wrapper that sends it there
// goes first in "${prefix[@]}", outermost in the initial program: what the
// prefix and time print about the job are the job's output too. Without
// fifos (or tee and tail) the prefix stays as it was and the job's output
// goes to the log alone, as the broker's does.
//
// Until flushJob the runner holds every fifo open for writing too: no open
// of one waits for its other end, even when the job never runs (the broker
// fails first), and neither the tail nor a tee sees the end of its input
// before the other tee has opened it.
func captureJob(s *script, hidden bool) {
	toOut, toErr := "", " >&2"
	if hidden {
		toOut, toErr = " > /dev/null", " > /dev/null"
	}
	s.line("# The job's output goes on to the container's log, and its last lines to")
	s.line("# a file: the lead's last words in its termination message. The broker")
	s.line("# gives its initial program no descriptor but stdio, so the job opens the")
	s.line("# fifos by path; the runner holds them open until flushJob. Without fifos")
	s.line("# (or tee and tail) the output only goes to the log.")
	s.line(`if (rm -rf %s && mkdir -p %s && mkfifo %s %s %s %s) 2> /dev/null && command -v tee > /dev/null && command -v tail > /dev/null; then`,
		outputDir.sh(), outputDir.sh(), outFifo.sh(), errFifo.sh(), tailFifo.sh(), tickFifo.sh())
	s.in()
	s.line("exec 7<> %s 8<> %s 9<> %s", outFifo.sh(), errFifo.sh(), tailFifo.sh())
	s.line("tail -n %d < %s > %s %s &", lastWordsLines, tailFifo.sh(), lastWords.sh(), captureFDs)
	s.line(`tees+=("$!")`)
	s.line("tee %s < %s%s %s &", tailFifo.sh(), outFifo.sh(), toOut, captureFDs)
	s.line(`tees+=("$!")`)
	s.line("tee %s < %s%s %s &", tailFifo.sh(), errFifo.sh(), toErr, captureFDs)
	s.line(`tees+=("$!")`)
	s.line(`prefix=(%s %s %s "${prefix[@]}")`, shell.Words(captureWrapper), outFifo.sh(), errFifo.sh())
	s.out()
	s.line("fi")
}

// exitIfStopped ends the runner after its broker has left, when a signal
// stopped it: the code says so (128 + the signal), and for the lead ending
// turns it into JobFailedExitCode.
func exitIfStopped(s *script) {
	s.line(`if [ -n "${stopped}" ]; then exit "$((128 + stopped))"; fi`)
}

// failNow ends a runner that cannot run for good, before any broker starts:
// the claim or the image is wrong, and a retry would not change it. The exit
// code fails the MiniCluster (see JobFailedExitCode) with msg as its
// termination message.
func failNow(s *script, l Layout, msg string) {
	log := shell.Quote(l.fixed().TerminationLog)
	s.line("echo %s >&2", shell.Quote(msg))
	s.line("if [ -w %s ]; then echo %s > %s || true; fi", log, shell.Quote(msg), log)
	s.line("exit %s", strconv.Itoa(JobFailedExitCode))
}
