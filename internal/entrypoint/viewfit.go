package entrypoint

import (
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// ViewDoesNotFitExitCode is what a runner exits with when the Flux view's
// binaries cannot run in its image: the dynamic loader or the C library of
// the application image refuses them (a view built for another OS or
// architecture). No retry can change that, so the Job's podFailurePolicy
// fails the MiniCluster on this code at once; the termination message names
// both images and the fix.
const ViewDoesNotFitExitCode = 47

// The environment of the runner container that names its images (set by
// internal/render), so that the runner can say which two do not fit.
const (
	EnvAppImage  = "MINICLUSTER_APP_IMAGE"
	EnvViewImage = "MINICLUSTER_VIEW_IMAGE"
)

// viewFits runs the view's flux once, before anything starts Flux, and ends
// the runner with ViewDoesNotFitExitCode when the loader refuses it: a
// missing library (error while loading shared libraries), a symbol version
// the image's libraries lack (GLIBC_2.38, GLIBCXX_3.4.32, ... not found), a
// missing interpreter (exit 127) or another architecture (exit 126). Any
// other failure is left to the steps that follow, as before. With the view
// disabled the image brings its own Flux, which noFlux checks.
func viewFits(s *script, mc *v1alpha2.MiniCluster, l Layout) {
	if mc.Spec.Flux.Container.Disable {
		return
	}
	log := shell.Quote(l.fixed().TerminationLog)
	s.blank()
	s.line("# The view's binaries run with this image's C library and dynamic loader.")
	s.line("viewcheck=$(flux version 2>&1 > /dev/null; echo \"exit $?\")")
	s.line(`case "${viewcheck}" in`)
	s.in()
	s.line(`*"exit 0") ;;`)
	s.line(`*"error while loading shared libraries"*|*"' not found (required by "*|*"exit 126"|*"exit 127")`)
	s.in()
	s.line(`viewcheck=${viewcheck%%$'\n'*}`)
	// Short enough, with both image names and the loader's words, for the
	// MiniCluster's Finished message (which bounds the termination message).
	s.line(`viewcheck="the Flux view ${%s:-(unknown)} does not run in the application image ${%s:-(unknown)} (${viewcheck:0:200}): `+
		`the view's binaries run with the application image's C library: set spec.flux.container.image to a view built for the application image's OS `+
		`(or remove it to have one chosen for well-known images), or use an image of the view's OS"`, EnvViewImage, EnvAppImage)
	s.line(`echo "${viewcheck}" >&2`)
	s.line(`if [ -w %s ]; then echo "${viewcheck}" > %s || true; fi`, log, log)
	s.line("exit %d", ViewDoesNotFitExitCode)
	s.out()
	s.line(";;")
	s.out()
	s.line("esac")
}
