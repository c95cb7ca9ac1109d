package entrypoint

import (
	"fmt"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// Init is the init container's script: it installs the broker config and
// host list under <mp>/config and copies the Flux view into the shared volume.
func Init(mc *v1alpha2.MiniCluster, p Plan) string {
	l := p.Layout
	quiet := mc.Spec.Logging.Quiet
	s := &script{}
	header(s, "Init script (Flux view and configuration)", mc.Name)
	s.line("set -eu")
	s.line("mp=%s", shell.Quote(l.MountPath))
	s.line("%s", assign(atConfig))
	s.say(quiet, "Setting up Flux configuration for MiniCluster "+mc.Name)
	s.line("mkdir -p %s %s %s %s %s %s %s", cronDir.sh(), configDir.sh(), stateParent.sh(), runParent.sh(), curveDir.sh(), viewRoot.sh(), softwareCopy.sh())
	s.line("cp %s %s", shell.Quote(l.Entrypoint(HostlistKey)), hostlistFile.sh())
	s.line("cp %s %s", shell.Quote(l.Entrypoint(BrokerConfigKey)), brokerConfigFile.sh())
	s.line("# The runner may be another user, unknown here. It writes R and its")
	s.line("# certificate copy and creates the rundir and statedir Flux needs it to")
	s.line("# own: leave their parents writable for anyone, sticky so that no user")
	s.line("# can replace another's files.")
	s.line("chmod 1777 %s %s %s %s", systemDir.sh(), runParent.sh(), stateParent.sh(), curveDir.sh())
	if !quiet {
		s.line("cat %s", brokerConfigFile.sh())
	}
	into := func(d spot) string { return fmt.Sprintf(`"%s/"`, d.bare()) }
	if mc.Spec.Flux.Container.Disable {
		s.line("# The application image brings Flux: copy a view only if this image has one.")
		s.line("if [ -d %s ]; then cp -a %s/. %s; fi", imageView, imageView, into(viewRoot))
	} else {
		s.line("# The view's binaries point into %s (spack), so copy both.", SoftwareDir)
		s.line("viewsrc=$(readlink -f %s)", imageView)
		s.line(`cp -a "${viewsrc}/." %s`, into(viewRoot))
		s.line("cp -a %s/. %s", SoftwareDir, into(softwareCopy))
	}
	s.line("touch %s", initDone.sh())
	s.say(quiet, "Flux view and configuration are ready.")
	return s.String()
}
