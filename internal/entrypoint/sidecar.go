package entrypoint

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// Sidecar is the wrapper of a non-runner container (index i): it sets up
// the Flux view, waits for the broker's socket and runs the container's
// command as shell code with ${fluxsocket} set.
func Sidecar(mc *v1alpha2.MiniCluster, i int, p Plan) string {
	c := &mc.Spec.Containers[i]
	lg := &mc.Spec.Logging
	s := &script{}
	header(s, "Sidecar entrypoint of container "+c.Name, mc.Name)
	s.hook("commands.init", c.Commands.Init, lg.Quiet)
	if lg.Strict {
		s.line("set -eEu -o pipefail")
	}
	viewSetup(s, mc, p.Layout)
	s.hook("commands.servicePre", c.Commands.ServicePre, lg.Quiet)
	s.line("# The wrapper is the container's first process, which the signal that")
	s.line("# stops the pod reaches alone: it passes SIGTERM on to all it runs (its")
	s.line("# process group) and ends, instead of waiting for the kill.")
	s.line(`stopped=""`)
	s.line(`trap 'trap "" TERM INT; stopped=143; kill -s TERM 0 2> /dev/null || true' TERM INT`)
	if !mc.Spec.Flux.NoWaitSocket {
		s.line("# Wait for this pod's broker to listen on its local socket.")
		s.line(`until [ -S %s ] || [ -n "${stopped}" ]; do sleep 1; done`, socket.sh())
	}
	s.line(`if [ -n "${stopped}" ]; then exit "${stopped}"; fi`)
	s.line(`export fluxsocket="%s%s"`, localURI, socket.bare())
	run := ""
	if c.Commands.Script != "" {
		s.writeFile(customScript, c.Commands.Script)
		s.line("chmod +x %s", customScript)
		run = "/bin/bash " + customScript
	} else if strings.TrimSpace(c.Command) != "" {
		s.line("# command (shell code, so ${fluxsocket} and pipes work)")
		run = "eval " + shell.Quote(c.Command)
	}
	s.line("rc=0")
	if run != "" {
		s.line("# In the background, keeping stdin, so that the trap runs at once.")
		s.line("%s 0<&0 &", run)
		s.line(`wait "$!" || rc=$?`)
		s.line(`while [ -n "${stopped}" ] && kill -0 "$!" 2> /dev/null; do wait "$!" || rc=$?; done`)
		s.line(`if [ -n "${stopped}" ]; then exit "${stopped}"; fi`)
	}
	s.hook("commands.post", c.Commands.Post, false)
	s.line(`exit "${rc}"`)
	return s.String()
}
