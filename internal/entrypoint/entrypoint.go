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
//
// Every path in a pod comes from Layout (layout.go), the scripts' and
// broker.toml's alike, so the two cannot drift apart.
package entrypoint

import (
	"fmt"
	"maps"
	"slices"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// Plan is what the scripts of one MiniCluster depend on beyond its spec.
// internal/plan decides these values, defaults included, once for every
// object it composes; a script that fell back to a default of its own could
// disagree with the Job or broker.toml.
type Plan struct {
	// Layout is every path in the pods.
	Layout Layout
	// Name of the MiniCluster; pods are <Name>-<index>.
	Name string
	// Size is the number of pods the Job runs now.
	Size int32
	// Tasks is spec.tasks, defaulted; 0 gives the job one node each.
	Tasks int32
	// Quorum is the number of brokers the instance waits for (0: all hosts).
	Quorum int32
	// LogLevel is spec.flux.logLevel, defaulted. logging.quiet still
	// silences the brokers.
	LogLevel int32
	// Commands are the runner's words, from Prepare.
	Commands Commands
	// Resources are what every broker offers Flux.
	Resources Resources
}

// ScriptVariables are the shell variables of the runner and sidecar
// scripts. spec.flux.environment is exported in those scripts, after some of
// these are set and before others are read, so a variable of the same name
// would change what the script does (configroot=/x moves Flux's
// configuration away): internal/plan refuses them. A test keeps the list in
// step with every variable the generated scripts assign.
var ScriptVariables = []string{
	"brokerOptions", "cfg", "command", "configroot", "d", "fluxsocket", "hosts", "mainHost", "mp", "nodeCores",
	"prefix", "pythonpath", "rc", "timed", "timedJob", "viewcheck", "viewroot", "viewsrc", "wrap",
	// endings.go's
	"again", "broker", "code", "first", "job", "kids", "n", "p", "r", "seen", "signals", "st", "step", "stopped", "tees",
}

// viewSetup is shared by the runner and sidecars: PATH, PYTHONPATH and the
// helper scripts users source to talk to the broker.
func viewSetup(s *script, mc *v1alpha2.MiniCluster, l Layout) {
	f := &mc.Spec.Flux
	quiet := mc.Spec.Logging.Quiet
	software := shell.Quote(l.fixed().Software)
	s.line("mp=%s", shell.Quote(l.MountPath))
	s.line("%s", assign(atConfig))
	if !f.Container.Disable {
		s.line("%s", assign(atView))
		s.say(quiet, "Flux install root: "+l.View())
		s.line(`export PATH="${PATH}:%s"`, viewBin.bare())
		s.line(`export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:%s"`, viewLib.bare())
		// Entry by entry: cp -a of the directory itself would also copy its
		// times onto the volume's root, which only root may change.
		s.line(`(shopt -s dotglob nullglob; set -- %s; if [ "$#" -gt 0 ]; then mkdir -p %s && cp -a "$@" %s/; fi)`, softwareCopy.glob("*"), software, software)
		if f.Container.PythonPath != "" {
			s.line("pythonpath=%s", shell.Quote(f.Container.PythonPath))
		} else {
			s.line(`pythonpath=""`)
			s.line(`for d in %s; do if [ -d "${d}" ]; then pythonpath="${d}"; break; fi; done`, viewLib.glob("python3*/site-packages"))
		}
		s.line(`export PYTHONPATH="${PYTHONPATH:-}:${pythonpath}"`)
		if !f.Scheduler.Simple {
			s.line("# Load fluxion through the view's rc scripts.")
			s.line("# Flux looks for rc1.d in each directory of FLUX_RC_EXTRA.")
			s.line("export FLUX_RC_EXTRA=%s", viewRC.sh())
		}
	}
	s.line(`if [ "${HOME:-/}" = "/" ]; then export HOME=%s USER=flux-operator; mkdir -p "${HOME}" 2>/dev/null || true; fi`, shell.Quote(l.fixed().Home))

	// flux-view.sh: what a user sources (e.g. in kubectl exec) to get Flux.
	var view script
	view.line("# Source me to use Flux in this pod.")
	if !f.Container.Disable {
		view.line(`export PATH="${PATH}":%s`, shell.Quote(l.abs(viewBin)))
		view.line(`export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}":%s`, shell.Quote(l.abs(viewLib)))
	}
	view.line(`export fluxsocket=%s`, shell.Quote(localURI+l.Socket()))
	for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
		view.line("export %s=%s", shell.Quote(k), shell.Quote(f.Environment[k]))
	}
	s.writeFile(viewScript.sh(), view.String())
	if !f.Container.Disable {
		// line writes a format without args verbatim, so a % for bash goes
		// in as an arg (a %% would reach bash doubled). %q keeps a hostile
		// pythonPath from running when flux-view.sh is sourced.
		s.line("%s", `printf 'export PYTHONPATH="${PYTHONPATH:-}":%q\n' "${pythonpath}" >> `+viewScript.sh())
	}
	s.writeFile(connectScript.sh(), fmt.Sprintf(". %s\nflux proxy \"${fluxsocket}\" bash\n", shell.Quote(l.abs(viewScript))))
	s.writeFile(fluxionScript.sh(), "flux module remove sched-simple\nflux module load sched-fluxion-resource\nflux module load sched-fluxion-qmanager\n")
	for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
		s.line("export %s=%s", shell.Quote(k), shell.Quote(f.Environment[k]))
	}
}
