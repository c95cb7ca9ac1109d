package plan

import (
	"fmt"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// Warnings are valid settings that probably do not do what the user
// expects; upstream accepted them silently.
func Warnings(mc *v1alpha2.MiniCluster) []string {
	var out []string
	s := &mc.Spec
	if r := s.Runner(); r >= 0 && s.Interactive {
		// Name the field the user set: a script is as unrun as a command.
		for _, set := range []struct {
			name string
			on   bool
		}{
			{"command", s.Containers[r].Command != ""}, {"commands.script", s.Containers[r].Commands.Script != ""},
		} {
			if set.on {
				out = append(out, fmt.Sprintf("spec.containers[%d].%s is not run: with spec.interactive brokers start no initial program; submit it with flux submit, or drop interactive", r, set.name))
			}
		}
	}
	if a := s.Archive.Path; a != "" && !entrypoint.DumpsArchive(a) {
		out = append(out, "spec.archive.path is restored from when it exists, but not saved when the cluster finishes: flux dump writes only "+orList(entrypoint.DumpExtensions)+" archives")
	}
	if s.Flux.Arch != "" {
		out = append(out, "spec.flux.arch has no effect: choose an arm Flux view with spec.flux.container.image instead")
	}
	if s.Flux.MungeSecret != "" {
		out = append(out, "spec.flux.mungeSecret has no effect in v1alpha2")
	}
	if s.Flux.Container.Disable && s.Flux.Container.PythonPath != "" {
		out = append(out, "spec.flux.container.pythonPath has no effect with spec.flux.container.disable")
	}
	for i, c := range s.Containers {
		if c.RunFlux && c.Launcher && s.Flux.SubmitCommand != "" {
			out = append(out, fmt.Sprintf("spec.flux.submitCommand has no effect: spec.containers[%d] is a launcher", i))
		}
		if c.RunFlux && c.Batch && s.Flux.SubmitCommand != "" {
			out = append(out, fmt.Sprintf("spec.flux.submitCommand has no effect: spec.containers[%d] runs in batch mode", i))
		}
		if !c.RunFlux {
			// A sidecar's wrapper runs commands.init, commands.servicePre, its
			// command or commands.script, and commands.post.
			for _, set := range []struct {
				name string
				on   bool
			}{
				{"commands.pre", c.Commands.Pre != ""}, {"commands.brokerPre", c.Commands.BrokerPre != ""},
				{"commands.workerPre", c.Commands.WorkerPre != ""}, {"commands.prefix", c.Commands.Prefix != ""},
				{"launcher", c.Launcher}, {"batch", c.Batch}, {"batchRaw", c.BatchRaw},
			} {
				if set.on {
					out = append(out, fmt.Sprintf("spec.containers[%d].%s has no effect: the container does not run Flux (runFlux is not set); a sidecar runs commands.init, commands.servicePre, its command and commands.post", i, set.name))
				}
			}
		}
	}
	return out
}

// orList writes a, b or c.
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
