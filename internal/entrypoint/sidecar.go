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
	if !mc.Spec.Flux.NoWaitSocket {
		s.line("# Wait for this pod's broker to listen on its local socket.")
		s.line("until [ -S %s ]; do sleep 1; done", socket.sh())
	}
	s.line(`export fluxsocket="%s%s"`, localURI, socket.bare())
	if c.Commands.Script != "" {
		s.writeFile(customScript, c.Commands.Script)
		s.line("chmod +x %s", customScript)
		s.line("rc=0")
		s.line("/bin/bash %s || rc=$?", customScript)
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
