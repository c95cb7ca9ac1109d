// Package entrypoint writes the bash scripts a MiniCluster's pods run: the
// init script that lays out the Flux view and configuration, the runner
// script that starts the lead broker or a worker, and the wrappers of
// sidecar containers.
//
// Every user value reaches a script single-quoted. Commands given to Flux
// are split into words by Prepare (see shell.Split) and written quoted, so
// no quote, $, backtick or newline in a claim can change what a script does;
// hooks (commands.pre, ...) are shell code by design and run through eval of
// a quoted string, so even a broken hook cannot break the script around it.
package entrypoint

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// Where the pods find what the MiniCluster mounts for them.
const (
	// Dir holds the entrypoint ConfigMap's files.
	Dir = "/flux_operator"
	// CurveDir holds the CURVE certificate Secret's file.
	CurveDir = "/mnt/curve"
	// CurveFile is the certificate's key in the Secret and its file name.
	CurveFile = "curve.cert"
	// SoftwareDir receives the view's spack software tree.
	SoftwareDir = "/opt/software"
	// HomeDir is the home of a user without one.
	HomeDir = "/home/flux-operator"
	// TerminationLog is the container's termination message file
	// (terminationMessagePath's default).
	TerminationLog = "/dev/termination-log"

	// Keys of the entrypoint ConfigMap.
	BrokerConfigKey = "broker.toml"
	HostlistKey     = "hostlist"
	InitKey         = "flux-init.sh"
)

// RunnerKey is the ConfigMap key of the runner script of container i.
func RunnerKey(i int) string { return "wait-" + strconv.Itoa(i) + ".sh" }

// SidecarKey is the ConfigMap key of the wrapper of container i.
func SidecarKey(i int) string { return "start-" + strconv.Itoa(i) + ".sh" }

// Layout is where Flux lives inside a pod, derived from the view's mount path.
type Layout struct {
	MountPath string
}

// Config is <mp>/config, the install root of the generated configuration.
func (l Layout) Config() string { return path.Join(l.MountPath, "config") }

// View is <mp>/view, where the init container copies the Flux view.
func (l Layout) View() string { return path.Join(l.MountPath, "view") }

// ConfigDir holds broker.toml.
func (l Layout) ConfigDir() string { return path.Join(l.Config(), "etc/flux/config") }

// SystemDir holds the hostlist, R and cron.d.
func (l Layout) SystemDir() string { return path.Join(l.Config(), "etc/flux/system") }

// RunDir is the brokers' rundir.
func (l Layout) RunDir() string { return path.Join(l.Config(), "run/flux") }

// StateDir is the brokers' statedir.
func (l Layout) StateDir() string { return path.Join(l.Config(), "var/lib/flux") }

// Socket is the broker's local socket, the one sidecars and probes wait for.
func (l Layout) Socket() string { return path.Join(l.RunDir(), "local") }

// CurveCert is where the runner installs the certificate for broker.toml.
func (l Layout) CurveCert() string { return path.Join(l.Config(), "curve", CurveFile) }

// Paths are the fixed places the pods mount things at. Tests point them
// into a temporary directory to run the scripts outside a pod.
type Paths struct {
	// Entrypoints holds the entrypoint ConfigMap's files (Dir).
	Entrypoints string
	// Curve holds the CURVE certificate Secret's file (CurveDir).
	Curve string
	// Software receives the view's spack tree (SoftwareDir).
	Software string
	// Home is the home of a user without one (HomeDir).
	Home string
	// TerminationLog is where the lead says why its job failed (TerminationLog).
	TerminationLog string
}

// DefaultPaths are the paths in a MiniCluster's pods.
var DefaultPaths = Paths{Entrypoints: Dir, Curve: CurveDir, Software: SoftwareDir, Home: HomeDir, TerminationLog: TerminationLog}

// orDefault fills every path left empty from DefaultPaths.
func (p Paths) orDefault() Paths {
	for _, f := range []struct {
		v *string
		d string
	}{
		{&p.Entrypoints, DefaultPaths.Entrypoints}, {&p.Curve, DefaultPaths.Curve}, {&p.Software, DefaultPaths.Software},
		{&p.Home, DefaultPaths.Home}, {&p.TerminationLog, DefaultPaths.TerminationLog},
	} {
		if *f.v == "" {
			*f.v = f.d
		}
	}
	return p
}

// Plan is what the scripts of one MiniCluster depend on beyond its spec.
type Plan struct {
	// Paths in the pod; DefaultPaths when zero.
	Paths Paths
	// Name of the MiniCluster; pods are <Name>-<index>.
	Name string
	// Size is the number of pods the Job runs now.
	Size int32
	// Quorum is the number of brokers the instance waits for (0: all hosts).
	Quorum int32
	// Commands are the runner's words, from Prepare.
	Commands Commands
}

// script accumulates lines of bash.
type script struct {
	b      strings.Builder
	indent string
}

func (s *script) line(format string, args ...any) {
	s.b.WriteString(s.indent)
	if len(args) == 0 {
		s.b.WriteString(format)
	} else {
		fmt.Fprintf(&s.b, format, args...)
	}
	s.b.WriteByte('\n')
}

func (s *script) blank() { s.b.WriteByte('\n') }

func (s *script) in()  { s.indent += "  " }
func (s *script) out() { s.indent = s.indent[:len(s.indent)-2] }

// hook runs shell code a user wrote as if it stood in the script, while a
// syntax error in it cannot break the script around it.
func (s *script) hook(what, code string, quiet bool) {
	if strings.TrimSpace(code) == "" {
		return
	}
	redirect := ""
	if quiet {
		redirect = " > /dev/null"
	}
	s.line("# %s", what)
	s.line("eval %s%s", shell.Quote(code), redirect)
}

// say prints a progress line unless the cluster is quiet.
func (s *script) say(quiet bool, msg string) {
	if !quiet {
		s.line("echo %s", shell.Quote(msg))
	}
}

// writeFile writes content verbatim to file, with no heredoc whose
// delimiter a user could end early.
func (s *script) writeFile(file, content string) {
	s.line("printf '%%s' %s > %s", shell.Quote(content), file)
}

func (s *script) String() string { return s.b.String() }

// comment makes text safe in a # comment: a line break would end it.
func comment(text string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, text)
}

func header(s *script, what, name string) {
	s.line("#!/bin/bash")
	s.line("# %s of MiniCluster %s. Generated by minicluster-crossplane: do not edit.", comment(what), comment(name))
}

// Init is the init container's script: it installs the broker config and
// host list under <mp>/config and copies the Flux view into the shared volume.
func Init(mc *v1alpha2.MiniCluster, p Plan) string {
	paths := p.Paths.orDefault()
	l := Layout{MountPath: mc.Spec.Flux.Container.MountPath}
	quiet := mc.Spec.Logging.Quiet
	s := &script{}
	header(s, "Init script (Flux view and configuration)", mc.Name)
	s.line("set -eu")
	s.line("mp=%s", shell.Quote(l.MountPath))
	s.line(`configroot="${mp}/config"`)
	s.say(quiet, "Setting up Flux configuration for MiniCluster "+mc.Name)
	s.line(`mkdir -p "${configroot}/etc/flux/system/cron.d" "${configroot}/etc/flux/config" "${configroot}/var/lib" "${configroot}/run" "${configroot}/curve" "${mp}/view" "${mp}/software"`)
	s.line(`cp %s "${configroot}/etc/flux/system/hostlist"`, shell.Quote(path.Join(paths.Entrypoints, HostlistKey)))
	s.line(`cp %s "${configroot}/etc/flux/config/broker.toml"`, shell.Quote(path.Join(paths.Entrypoints, BrokerConfigKey)))
	s.line("# The runner may be another user, unknown here. It writes R and its")
	s.line("# certificate copy and creates the rundir and statedir Flux needs it to")
	s.line("# own: leave their parents writable for anyone, sticky so that no user")
	s.line("# can replace another's files.")
	s.line(`chmod 1777 "${configroot}/etc/flux/system" "${configroot}/run" "${configroot}/var/lib" "${configroot}/curve"`)
	if !quiet {
		s.line(`cat "${configroot}/etc/flux/config/broker.toml"`)
	}
	if mc.Spec.Flux.Container.Disable {
		s.line("# The application image brings Flux: copy a view only if this image has one.")
		s.line(`if [ -d /opt/view ]; then cp -a /opt/view/. "${mp}/view/"; fi`)
	} else {
		s.line("# The view's binaries point into /opt/software (spack), so copy both.")
		s.line(`viewsrc=$(readlink -f /opt/view)`)
		s.line(`cp -a "${viewsrc}/." "${mp}/view/"`)
		s.line(`cp -a /opt/software/. "${mp}/software/"`)
	}
	s.line(`touch "${mp}/flux-operator-done.txt"`)
	s.say(quiet, "Flux view and configuration are ready.")
	return s.String()
}

// viewSetup is shared by the runner and sidecars: PATH, PYTHONPATH and the
// helper scripts users source to talk to the broker.
func viewSetup(s *script, mc *v1alpha2.MiniCluster, l Layout, paths Paths) {
	f := &mc.Spec.Flux
	quiet := mc.Spec.Logging.Quiet
	s.line("mp=%s", shell.Quote(l.MountPath))
	s.line(`configroot="${mp}/config"`)
	if !f.Container.Disable {
		s.line(`viewroot="${mp}/view"`)
		s.say(quiet, "Flux install root: "+l.View())
		s.line(`export PATH="${PATH}:${viewroot}/bin"`)
		s.line(`export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:${viewroot}/lib"`)
		// Entry by entry: cp -a of the directory itself would also copy its
		// times onto the volume's root, which only root may change.
		s.line(`(shopt -s dotglob nullglob; set -- "${mp}"/software/*; if [ "$#" -gt 0 ]; then mkdir -p %s && cp -a "$@" %s/; fi)`, shell.Quote(paths.Software), shell.Quote(paths.Software))
		if f.Container.PythonPath != "" {
			s.line("pythonpath=%s", shell.Quote(f.Container.PythonPath))
		} else {
			s.line(`pythonpath=""`)
			s.line(`for d in "${viewroot}"/lib/python3*/site-packages; do if [ -d "${d}" ]; then pythonpath="${d}"; break; fi; done`)
		}
		s.line(`export PYTHONPATH="${PYTHONPATH:-}:${pythonpath}"`)
		if !f.Scheduler.Simple {
			s.line("# Load fluxion through the view's rc scripts.")
			s.line("# Flux looks for rc1.d in each directory of FLUX_RC_EXTRA.")
			s.line(`export FLUX_RC_EXTRA="${viewroot}/etc/flux"`)
		}
	}
	s.line(`if [ "${HOME:-/}" = "/" ]; then export HOME=%s USER=flux-operator; mkdir -p "${HOME}" 2>/dev/null || true; fi`, shell.Quote(paths.Home))

	// flux-view.sh: what a user sources (e.g. in kubectl exec) to get Flux.
	var view script
	view.line("# Source me to use Flux in this pod.")
	if !f.Container.Disable {
		view.line(`export PATH="${PATH}":%s`, shell.Quote(path.Join(l.View(), "bin")))
		view.line(`export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}":%s`, shell.Quote(path.Join(l.View(), "lib")))
	}
	view.line(`export fluxsocket=%s`, shell.Quote("local://"+l.Socket()))
	for _, k := range v1alpha2.SortedKeys(f.Environment) {
		view.line("export %s=%s", shell.Quote(k), shell.Quote(f.Environment[k]))
	}
	s.writeFile(`"${mp}/flux-view.sh"`, view.String())
	if !f.Container.Disable {
		// line writes a format without args verbatim, so a % for bash goes
		// in as an arg (a %% would reach bash doubled). %q keeps a hostile
		// pythonPath from running when flux-view.sh is sourced.
		s.line("%s", `printf 'export PYTHONPATH="${PYTHONPATH:-}":%q\n' "${pythonpath}" >> "${mp}/flux-view.sh"`)
	}
	s.writeFile(`"${mp}/flux-connect.sh"`, fmt.Sprintf(". %s\nflux proxy \"${fluxsocket}\" bash\n", shell.Quote(path.Join(l.MountPath, "flux-view.sh"))))
	s.writeFile(`"${mp}/load-fluxion.sh"`, "flux module remove sched-simple\nflux module load sched-fluxion-resource\nflux module load sched-fluxion-qmanager\n")
	for _, k := range v1alpha2.SortedKeys(f.Environment) {
		s.line("export %s=%s", shell.Quote(k), shell.Quote(f.Environment[k]))
	}
}

// BrokerOptions are the -S attributes every broker of mc starts with.
func BrokerOptions(mc *v1alpha2.MiniCluster, p Plan) []string {
	l := Layout{MountPath: mc.Spec.Flux.Container.MountPath}
	f := &mc.Spec.Flux
	opts := []string{
		"-Scron.directory=" + path.Join(l.SystemDir(), "cron.d"),
		"-Stbon.fanout=256",
		"-Srundir=" + l.RunDir(),
	}
	if mc.Spec.Interactive {
		opts = append(opts, "-Sbroker.rc2_none")
	}
	opts = append(opts, "-Sstatedir="+l.StateDir())
	if !f.DisableSocket {
		opts = append(opts, "-Slocal-uri=local://"+l.Socket())
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
	level := int32(v1alpha2.DefaultLogLevel)
	if f.LogLevel != nil {
		level = *f.LogLevel
	}
	if mc.Spec.Logging.Quiet {
		level = 0
	}
	opts = append(opts, "-Slog-stderr-level="+strconv.Itoa(int(level)), "-Slog-stderr-mode=local")
	return opts
}

// array is a bash array literal of words. Words with a comma are quoted
// although bash does not need it: in an array an unquoted comma reads like
// a mistake (shellcheck SC2054).
func array(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shell.Quote(w)
		if strings.Contains(w, ",") && q[i] == w {
			q[i] = "'" + w + "'"
		}
	}
	return "(" + strings.Join(q, " ") + ")"
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

// BatchFile is the lead's batch script, in the view volume: the container's
// working directory may not be writable for its user.
func (l Layout) BatchFile() string { return path.Join(l.MountPath, "flux-job.batch") }

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
	l := Layout{MountPath: f.Container.MountPath}
	paths := p.Paths.orDefault()
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
		s.line("if [ ! -x /usr/bin/time ]; then echo 'logging.timed needs /usr/bin/time in the application image' >&2; exit 1; fi")
	}
	viewSetup(s, mc, l, paths)
	s.line(`cfg="${configroot}/etc/flux/config"`)
	noFlux(s, mc, paths)

	if m == modeSubmit || m == modeLauncher {
		s.blank()
		s.line("# The job: a command split into words, never re-parsed by a shell.")
		if c.Commands.Script != "" {
			s.writeFile("/tmp/custom-entrypoint.sh", c.Commands.Script)
			s.line("chmod +x /tmp/custom-entrypoint.sh")
			s.line("command=(/bin/bash /tmp/custom-entrypoint.sh)")
		} else {
			s.line("command=%s", array(cmds.Command))
		}
	}

	s.blank()
	s.line("# Flux rejects a certificate that group or others can read, so this user")
	s.line("# installs its own copy, never readable by others.")
	s.line(`mkdir -p "${configroot}/curve"`)
	s.line(`rm -f "${configroot}/curve/%s"`, CurveFile)
	s.line(`(umask 077 && cp %s "${configroot}/curve/%s")`, shell.Quote(path.Join(paths.Curve, CurveFile)), CurveFile)
	s.line(`chmod 0600 "${configroot}/curve/%s"`, CurveFile)

	s.blank()
	s.line("# Resources: this pod's topology, replicated over every host of the instance.")
	s.line(`hosts=$(cat "${configroot}/etc/flux/system/hostlist")`)
	s.line(`flux R encode --hosts="${hosts}" --local > "${configroot}/etc/flux/system/R"`)
	if !quiet {
		s.line(`cat "${configroot}/etc/flux/system/R"`)
	}
	s.blank()
	s.line("# Flux requires the user it runs as to own its rundir and statedir. The")
	s.line("# rundir stays searchable: sidecars of other users reach the local socket.")
	s.line(`mkdir -p "${configroot}/etc/flux/system/cron.d" "${configroot}/run" "${configroot}/var/lib"`)
	s.line(`[ -d "${configroot}/run/flux" ] || mkdir -m 0755 "${configroot}/run/flux"`)
	s.line(`[ -d "${configroot}/var/lib/flux" ] || mkdir -m 0700 "${configroot}/var/lib/flux"`)
	s.line(`for d in "${configroot}/run/flux" "${configroot}/var/lib/flux"; do`)
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
		s.line("if [ -e %s ]; then brokerOptions+=(%s); fi", shell.Quote(a), shell.Quote("-Scontent.restore="+a))
	}
	if m != modeInteractive {
		s.line("timed=()")
		s.line("timedJob=()")
		if lg.Timed {
			s.line("%s", `timed=(/usr/bin/time -f 'FLUXTIME fluxstart wall time %E')`)
			s.line("%s", `timedJob=(/usr/bin/time -f 'FLUXTIME fluxsubmit wall time %E')`)
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
	lead(s, mc, c, l, paths, cmds, m)
	s.out()
	s.line("else")
	s.in()
	worker(s, mc, c, quiet)
	s.out()
	s.line("fi")
	s.hook("commands.post", c.Commands.Post, false)
	s.line(`touch "${mp}/flux-operator-complete.txt"`)
	s.line(`exit "${rc}"`)
	return s.String()
}

func lead(s *script, mc *v1alpha2.MiniCluster, c *v1alpha2.MiniClusterContainer, l Layout, paths Paths, cmds Commands, m mode) {
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
	start := `"${timed[@]}" flux start "${wrap[@]}" --config-path="${cfg}" "${brokerOptions[@]}" "${prefix[@]}" "${timedJob[@]}"`
	switch m {
	case modeInteractive:
		s.say(quiet, "Running in interactive mode: the cluster stays up until flux shutdown.")
		s.line(`flux broker --config-path="${cfg}" "${brokerOptions[@]}" || rc=$?`)
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
		return
	}
	s.line(`if [ "${rc}" -ne 0 ]; then`)
	s.in()
	s.line("# The Job fails the MiniCluster on exactly this exit code; the job's own")
	s.line("# goes to the termination message, written first so that a failing")
	s.line("# commands.post under strict mode cannot lose it.")
	log := shell.Quote(paths.TerminationLog)
	s.line("%s", fmt.Sprintf(`if [ -w %s ]; then printf 'flux job on %%s exited with %%s\n' "${mainHost}" "${rc}" > %s || true; fi`, log, log))
	s.line("rc=%d", JobFailedExitCode)
	s.out()
	s.line("fi")
}

// noFlux ends a runner that finds no flux to run, at once and for good: a
// missing Flux is the image's or the claim's, and no retry brings it. The
// exit code fails the MiniCluster (see JobFailedExitCode) with the reason in
// the termination message.
func noFlux(s *script, mc *v1alpha2.MiniCluster, paths Paths) {
	msg := "flux is not on PATH in this container: the Flux view was not copied (see the init container's log)"
	if mc.Spec.Flux.Container.Disable {
		msg = "flux is not on PATH in this container: with spec.flux.container.disable, the application image must bring Flux"
	}
	log := shell.Quote(paths.TerminationLog)
	s.line("if ! command -v flux > /dev/null 2>&1; then")
	s.in()
	s.line("echo %s >&2", shell.Quote(msg))
	s.line("if [ -w %s ]; then echo %s > %s || true; fi", log, shell.Quote(msg), log)
	s.line("exit %d", JobFailedExitCode)
	s.out()
	s.line("fi")
}

func worker(s *script, mc *v1alpha2.MiniCluster, c *v1alpha2.MiniClusterContainer, quiet bool) {
	s.hook("commands.workerPre", c.Commands.WorkerPre, quiet)
	s.say(quiet, "Starting a follower broker of "+mc.Name)
	s.line("while true; do")
	s.in()
	s.line(`rc=0`)
	s.line(`flux start --config-path="${cfg}" "${brokerOptions[@]}" || rc=$?`)
	if mc.Spec.Flux.CompleteWorkers {
		s.line(`echo "The follower broker exited (${rc}); completeWorkers is set, so this worker is done."`)
		s.line("rc=0")
		s.line("break")
	} else {
		s.line(`if [ "${rc}" -eq 0 ]; then echo "The follower broker exited cleanly. Goodbye!"; break; fi`)
		s.line(`echo "The follower broker exited with ${rc}; trying again in 15s..."`)
		s.line("sleep 15")
	}
	s.out()
	s.line("done")
}

// Sidecar is the wrapper of a non-runner container (index i): it sets up
// the Flux view, waits for the broker's socket and runs the container's
// command as shell code with ${fluxsocket} set.
func Sidecar(mc *v1alpha2.MiniCluster, i int, p Plan) string {
	paths := p.Paths.orDefault()
	c := &mc.Spec.Containers[i]
	lg := &mc.Spec.Logging
	l := Layout{MountPath: mc.Spec.Flux.Container.MountPath}
	s := &script{}
	header(s, "Sidecar entrypoint of container "+c.Name, mc.Name)
	s.hook("commands.init", c.Commands.Init, lg.Quiet)
	if lg.Strict {
		s.line("set -eEu -o pipefail")
	}
	viewSetup(s, mc, l, paths)
	s.hook("commands.servicePre", c.Commands.ServicePre, lg.Quiet)
	if !mc.Spec.Flux.NoWaitSocket {
		s.line("# Wait for this pod's broker to listen on its local socket.")
		s.line(`until [ -S "${configroot}/run/flux/local" ]; do sleep 1; done`)
	}
	s.line(`export fluxsocket="local://${configroot}/run/flux/local"`)
	if c.Commands.Script != "" {
		s.writeFile("/tmp/custom-entrypoint.sh", c.Commands.Script)
		s.line("chmod +x /tmp/custom-entrypoint.sh")
		s.line("rc=0")
		s.line("/bin/bash /tmp/custom-entrypoint.sh || rc=$?")
	} else {
		s.line("rc=0")
		if strings.TrimSpace(c.Command) != "" {
			s.line("# command (shell code, so ${fluxsocket} and pipes work)")
			s.line("eval %s || rc=$?", shell.Quote(c.Command))
		}
	}
	s.hook("commands.post", c.Commands.Post, false)
	s.line(`exit "${rc}"`)
	return s.String()
}
