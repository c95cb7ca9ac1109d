package entrypoint

import (
	"path"
	"strconv"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// TBONFanout is the brokers' tbon.fanout. internal/plan checks
// minimalService against it: in the flat overlay every broker is a child of
// rank 0 only up to this many brokers.
const TBONFanout = 256

// BrokerOptions are the -S attributes every broker of mc starts with.
func BrokerOptions(mc *v1alpha2.MiniCluster, p Plan) []string {
	l := p.Layout
	f := &mc.Spec.Flux
	opts := []string{
		"-Scron.directory=" + l.abs(cronDir),
		"-Stbon.fanout=" + strconv.Itoa(TBONFanout),
		"-Srundir=" + l.RunDir(),
	}
	if mc.Spec.Interactive {
		opts = append(opts, "-Sbroker.rc2_none")
	}
	opts = append(opts, "-Sstatedir="+l.StateDir())
	if !f.DisableSocket {
		opts = append(opts, "-Slocal-uri="+localURI+l.Socket())
	}
	if f.ConnectTimeout != nil && *f.ConnectTimeout != "" {
		opts = append(opts, "-Stbon.connect_timeout="+*f.ConnectTimeout)
	}
	if f.Topology != "" {
		opts = append(opts, "-Stbon.topo="+f.Topology)
	}
	if p.Quorum > 0 {
		opts = append(opts, "-Sbroker.quorum="+strconv.Itoa(int(p.Quorum)))
	}
	if mc.Spec.Logging.Zeromq {
		opts = append(opts, "-Stbon.zmqdebug=1")
	}
	level := p.LogLevel
	if mc.Spec.Logging.Quiet {
		level = 0
	}
	opts = append(opts, "-Slog-stderr-level="+strconv.Itoa(int(level)), "-Slog-stderr-mode=local")
	return opts
}

// mode is what the lead broker runs.
type mode int

const (
	// modeInteractive: no job; the lead broker runs until flux shutdown.
	modeInteractive mode = iota
	modeSubmit
	modeLauncher
	modeBatch
)

func jobMode(c *v1alpha2.MiniClusterContainer, cmds Commands) mode {
	hasJob := c.Commands.Script != "" || len(cmds.Command) > 0 || len(cmds.Batch) > 0 ||
		(c.Batch && c.BatchRaw && strings.TrimSpace(c.Command) != "")
	switch {
	case !hasJob:
		return modeInteractive
	case c.Batch:
		return modeBatch
	case c.Launcher:
		return modeLauncher
	default:
		return modeSubmit
	}
}

// batchScript is what flux batch runs: the jobs of the command, the
// command's lines verbatim with batchRaw, or commands.script.
func batchScript(c *v1alpha2.MiniClusterContainer, cmds Commands) string {
	switch {
	case c.Commands.Script != "":
		return withShebang(c.Commands.Script)
	case c.BatchRaw:
		return withShebang(c.Command)
	}
	var b script
	b.line("#!/bin/bash")
	for _, j := range cmds.Batch {
		b.line(`flux submit --flags waitable --error="${FLUX_OUTPUT_DIR}/job-%d.err" --output="${FLUX_OUTPUT_DIR}/job-%d.out" %s`, j.Line, j.Line, shell.Words(j.Words))
	}
	b.line("flux queue idle")
	b.line("flux jobs -a")
	b.line("# The batch job fails, and with it the MiniCluster, when one of its jobs did.")
	b.line("flux job wait --all")
	return b.String()
}

// withShebang makes shell code a batch script: flux batch refuses a script
// that does not start with #!.
func withShebang(code string) string {
	if !strings.HasPrefix(code, "#!") {
		code = "#!/bin/bash\n" + code
	}
	if !strings.HasSuffix(code, "\n") {
		code += "\n"
	}
	return code
}

// Runner is the script of the Flux runner container (index i): it installs
// the certificate and resource set, then starts the lead broker with the
// job on <name>-0 and a worker broker everywhere else. The job's words are
// p.Commands, which Prepare checked.
//
// The runner may run as any user (a securityContext, or an image whose
// USER is not root), unknown here. The init container leaves the
// directories the runner writes world-writable with the sticky bit; the
// runner creates what Flux requires it to own (rundir, statedir, the
// certificate copy) itself.
func Runner(mc *v1alpha2.MiniCluster, i int, p Plan) string {
	c := &mc.Spec.Containers[i]
	f := &mc.Spec.Flux
	lg := &mc.Spec.Logging
	quiet := lg.Quiet
	l := p.Layout
	cmds := p.Commands
	m := jobMode(c, cmds)

	s := &script{}
	header(s, "Flux broker entrypoint", mc.Name)
	if lg.Strict {
		s.line("set -eEu -o pipefail")
	}
	s.hook("commands.init", c.Commands.Init, quiet)
	if lg.Timed {
		s.line("# Checked after commands.init, which may be what installs it.")
		s.line("if [ ! -x %s ]; then", timeBin)
		s.in()
		failNow(s, l, "logging.timed needs "+timeBin+" in the application image: install it in commands.init or use an image that has it")
		s.out()
		s.line("fi")
	}
	viewSetup(s, mc, l)
	endings(s, l, lg.Strict)
	s.line("cfg=%s", configDir.sh())
	noFlux(s, mc, l)
	viewFits(s, mc, l)

	if m == modeSubmit || m == modeLauncher {
		s.blank()
		s.line("# The job: a command split into words, never re-parsed by a shell.")
		if c.Commands.Script != "" {
			s.writeFile(customScript, c.Commands.Script)
			s.line("chmod +x %s", customScript)
			s.line("command=(/bin/bash %s)", customScript)
		} else {
			s.line("command=%s", array(cmds.Command))
		}
	}

	s.blank()
	s.line("# Flux rejects a certificate that group or others can read, so this user")
	s.line("# installs its own copy, never readable by others.")
	s.line("mkdir -p %s", curveDir.sh())
	s.line("rm -f %s", curveCert.sh())
	s.line("(umask 077 && cp %s %s)", shell.Quote(l.CurveSecret()), curveCert.sh())
	s.line("chmod 0600 %s", curveCert.sh())

	s.blank()
	encodeResources(s, l, p.Resources)
	if !quiet {
		s.line("cat %s", resourcesFile.sh())
	}
	s.blank()
	s.line("# Flux requires the user it runs as to own its rundir and statedir. The")
	s.line("# rundir stays searchable: sidecars of other users reach the local socket.")
	s.line("mkdir -p %s %s %s", cronDir.sh(), runParent.sh(), stateParent.sh())
	s.line("[ -d %s ] || mkdir -m 0755 %s", runDir.sh(), runDir.sh())
	s.line("[ -d %s ] || mkdir -m 0700 %s", stateDir.sh(), stateDir.sh())
	s.line("for d in %s %s; do", runDir.sh(), stateDir.sh())
	s.in()
	s.line(`if [ ! -O "${d}" ]; then echo "${d} belongs to another user: Flux runs as uid $(id -u) and must own it" >&2; fi`)
	s.out()
	s.line("done")
	s.line("export FLUX_OUTPUT_DIR=%s", shell.Quote(c.Logs))
	s.line(`mkdir -p "${FLUX_OUTPUT_DIR}"`)
	s.line("mainHost=%s", shell.Quote(mc.Name+"-0"))
	if !quiet {
		s.line(`echo "Hostname: $(hostname), lead broker: ${mainHost}, working directory: $(pwd)"`)
	}

	s.blank()
	s.line("brokerOptions=%s", array(BrokerOptions(mc, p)))
	if a := mc.Spec.Archive.Path; a != "" {
		// A regular file only: Flux cannot restore a directory, and the
		// lead broker would not start.
		s.line("if [ -f %s ]; then brokerOptions+=(%s); fi", shell.Quote(a), shell.Quote("-Scontent.restore="+a))
	}
	if m != modeInteractive {
		s.line("timed=()")
		s.line("timedJob=()")
		if lg.Timed {
			// %E is time's, not a verb: the lines go in as args.
			s.line("%s", "timed=("+timeBin+" -f 'FLUXTIME fluxstart wall time %E')")
			s.line("%s", "timedJob=("+timeBin+" -f 'FLUXTIME fluxsubmit wall time %E')")
		}
		s.line("wrap=()")
		if f.Wrap != "" {
			s.line("wrap=%s", array([]string{"--wrap=" + f.Wrap}))
		}
		s.line("prefix=%s", array(cmds.Prefix))
	}
	s.hook("commands.pre", c.Commands.Pre, quiet)

	s.blank()
	s.line("rc=0")
	s.line(`if [ "$(hostname)" = "${mainHost}" ]; then`)
	s.in()
	lead(s, mc, c, l, cmds, m)
	s.out()
	s.line("else")
	s.in()
	worker(s, mc, c, quiet)
	s.out()
	s.line("fi")
	if c.Commands.Post != "" {
		s.line("step=commands.post")
	}
	s.hook("commands.post", c.Commands.Post, false)
	s.line("touch %s", runnerDone.sh())
	s.line(`exit "${rc}"`)
	return s.String()
}

func lead(s *script, mc *v1alpha2.MiniCluster, c *v1alpha2.MiniClusterContainer, l Layout, cmds Commands, m mode) {
	quiet := mc.Spec.Logging.Quiet
	if a := mc.Spec.Archive.Path; DumpsArchive(a) {
		s.line("# The lead broker dumps the instance's content there when it shuts down.")
		s.line("mkdir -p %s", shell.Quote(path.Dir(a)))
		s.line("brokerOptions+=(%s)", shell.Quote("-Scontent.dump="+a))
	}
	if m == modeBatch {
		s.line("# Batch mode: one flux batch runs this script.")
		s.writeFile(shell.Quote(l.BatchFile()), batchScript(c, cmds))
		s.line("chmod +x %s", shell.Quote(l.BatchFile()))
	}
	s.hook("commands.brokerPre", c.Commands.BrokerPre, quiet)
	start := `runBroker "${timed[@]}" flux start "${wrap[@]}" --config-path="${cfg}" "${brokerOptions[@]}" "${prefix[@]}" "${timedJob[@]}"`
	if m != modeInteractive && !mc.Spec.Interactive {
		// Quiet batch mode keeps flux batch's output out of the log, not
		// out of the last words.
		captureJob(s, quiet && m == modeBatch)
	}
	switch m {
	case modeInteractive:
		s.say(quiet, "Running in interactive mode: the cluster stays up until flux shutdown.")
		s.line(`runBroker flux broker --config-path="${cfg}" "${brokerOptions[@]}" || rc=$?`)
		exitIfStopped(s)
		return
	case modeBatch:
		inner := shell.Words(append(append([]string{"flux", "batch"}, cmds.Flags...), "--flags", "waitable", l.BatchFile())) + " && flux job wait --all"
		s.say(quiet, "Batch mode: flux batch "+strings.Join(cmds.Flags, " "))
		redirect := ""
		if quiet {
			redirect = " > /dev/null 2>&1"
		}
		s.line("%s sh -c %s%s || rc=$?", start, shell.Quote(inner), redirect)
	case modeLauncher:
		s.say(quiet, "Launcher mode: the command is the instance's initial program.")
		s.line(`%s "${command[@]}" || rc=$?`, start)
	default:
		s.say(quiet, "Submit mode: "+strings.Join(cmds.Submit, " ")+" "+strings.Join(cmds.Flags, " "))
		s.line(`%s %s %s --quiet --watch "${command[@]}" || rc=$?`, start, shell.Words(cmds.Submit), shell.Words(cmds.Flags))
	}
	if mc.Spec.Interactive {
		// broker.rc2_none: the job never ran, so its exit says nothing about it.
		exitIfStopped(s)
		return
	}
	s.line("# The instance has run: from here on every ending is final (see ending).")
	s.line(`job="${rc}"`)
	s.line("# The job's output reaches the log before anything the runner prints next.")
	s.line("flushJob")
	exitIfStopped(s)
	s.line("# The Job fails the MiniCluster on exactly this exit code.")
	s.line(`if [ "${rc}" -ne 0 ]; then rc=%d; fi`, JobFailedExitCode)
}

// noFlux ends a runner that finds no flux to run, at once and for good: a
// missing Flux is the image's or the claim's, and no retry brings it. The
// exit code fails the MiniCluster (see JobFailedExitCode) with the reason in
// the termination message.
func noFlux(s *script, mc *v1alpha2.MiniCluster, l Layout) {
	msg := "flux is not on PATH in this container: the Flux view was not copied (see the init container's log)"
	if mc.Spec.Flux.Container.Disable {
		msg = "flux is not on PATH in this container: with spec.flux.container.disable, the application image must bring Flux"
	}
	s.line("if ! command -v flux > /dev/null 2>&1; then")
	s.in()
	failNow(s, l, msg)
	s.out()
	s.line("fi")
}

func worker(s *script, mc *v1alpha2.MiniCluster, c *v1alpha2.MiniClusterContainer, quiet bool) {
	s.hook("commands.workerPre", c.Commands.WorkerPre, quiet)
	s.say(quiet, "Starting a follower broker of "+mc.Name)
	s.line("while true; do")
	s.in()
	s.line(`rc=0`)
	s.line(`runBroker flux start --config-path="${cfg}" "${brokerOptions[@]}" || rc=$?`)
	exitIfStopped(s)
	if mc.Spec.Flux.CompleteWorkers {
		s.line(`echo "The follower broker exited (${rc}); completeWorkers is set, so this worker is done."`)
		s.line("rc=0")
		s.line("break")
	} else {
		s.line(`if [ "${rc}" -eq 0 ]; then echo "The follower broker exited cleanly. Goodbye!"; break; fi`)
		s.line(`echo "The follower broker exited with ${rc}; trying again in 15s..."`)
		s.line("# In the background: a signal ends wait, not sleep.")
		s.line(`sleep 15 & wait "$!" || true`)
	}
	s.out()
	s.line("done")
}
