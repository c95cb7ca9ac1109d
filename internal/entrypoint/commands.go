package entrypoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// Commands are a runner's user strings split into words, checked once before anything renders.
// Rendering the runner script then has nothing left that can fail.
type Commands struct {
	// Command is the job of submit and launcher mode (spec.containers[i].command).
	// Empty in batch mode, whose jobs are Batch, and with commands.script.
	Command []string
	// Prefix comes before the lead's initial program (commands.prefix).
	Prefix []string
	// Submit is what submits the job in submit mode: spec.flux.submitCommand, or flux submit.
	Submit []string
	// Flags are flux submit's and flux batch's node and task flags, then
	// spec.flux.optionFlags and -vvv when logging.debug.
	Flags []string
	// Batch are the jobs of a batch-mode command, one per non-blank line.
	// Empty with batchRaw, whose lines are shell code and written verbatim.
	Batch []BatchJob
}

// BatchJob is one line of a batch-mode command.
type BatchJob struct {
	// Line is the line's index in the command, blank lines included: the
	// job's output files are job-<Line>.out and job-<Line>.err, as upstream.
	Line int
	// Words of the line, the job's argv.
	Words []string
}

// maxShownValue bounds how much of a bad value an error repeats: a command
// may be 64 KiB.
const maxShownValue = 256

// Prepare splits the user strings of runner container i that become words
// of commands, for a Job of pl.Size pods and pl.Tasks tasks. Every string
// that cannot be split is a field error naming the field and how to fix it.
func Prepare(mc *v1alpha2.MiniCluster, i int, pl Plan) (Commands, field.ErrorList) {
	if i < 0 || i >= len(mc.Spec.Containers) {
		return Commands{}, field.ErrorList{field.InternalError(field.NewPath("spec", "containers"), fmt.Errorf("no container %d to prepare the runner of", i))}
	}
	c := &mc.Spec.Containers[i]
	f := &mc.Spec.Flux
	cp := field.NewPath("spec", "containers").Index(i)
	var errs field.ErrorList
	split := func(p *field.Path, s string) ([]string, bool) {
		w, err := shell.Split(s)
		if err != nil {
			errs = append(errs, field.Invalid(p, shown(s), splitHint(err)))
			return nil, false
		}
		return w, true
	}

	var out Commands
	switch {
	case c.Commands.Script != "":
		// The script is the job; a command beside it is refused by validation.
	case c.Batch && c.BatchRaw:
		// Shell code of the batch script, written as it is.
	case c.Batch:
		out.Batch, errs = batchJobs(cp.Child("command"), c.Command, errs)
	default:
		out.Command, _ = split(cp.Child("command"), c.Command)
	}
	out.Prefix, _ = split(cp.Child("commands", "prefix"), c.Commands.Prefix)

	out.Submit = []string{"flux", "submit"}
	if f.SubmitCommand != "" {
		p := field.NewPath("spec", "flux", "submitCommand")
		var ok bool
		if out.Submit, ok = split(p, f.SubmitCommand); ok && len(out.Submit) == 0 {
			errs = append(errs, field.Invalid(p, f.SubmitCommand, "names no command: give the command that submits the job (e.g. flux submit), or leave it unset for flux submit"))
		}
	}

	out.Flags = nodeFlags(pl.Size, pl.Tasks)
	extra, _ := split(field.NewPath("spec", "flux", "optionFlags"), f.OptionFlags)
	out.Flags = append(out.Flags, extra...)
	if mc.Spec.Logging.Debug {
		out.Flags = append(out.Flags, "-vvv")
	}
	if len(errs) > 0 {
		return Commands{}, errs
	}
	return out, nil
}

// batchJobs splits every non-blank line of a batch command on its own: a
// line is one job, so a quote cannot carry over to the next line. A line
// that starts with # is a comment, as in a shell script (otherwise "#"
// would be submitted as a program, and an apostrophe in the comment would
// be an open quote); a # later in a line is data like any other word.
func batchJobs(p *field.Path, command string, errs field.ErrorList) ([]BatchJob, field.ErrorList) {
	var jobs []BatchJob
	for j, line := range strings.Split(command, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		w, err := shell.Split(line)
		if err != nil {
			errs = append(errs, field.Invalid(p, shown(line), fmt.Sprintf("line %d: %s; in batch mode each line is one job, so a quote or backslash cannot continue onto the next line (set batchRaw to write the lines as shell code instead)", j+1, splitHint(err))))
			continue
		}
		jobs = append(jobs, BatchJob{Line: j, Words: w})
	}
	return jobs, errs
}

func splitHint(err error) string {
	if errors.Is(err, shell.ErrTrailingBackslash) {
		return err.Error() + ": remove it, or write \\\\ for a literal backslash"
	}
	return err.Error() + ": close every quote, or escape a lone quote with a backslash"
}

// shown is a bad value as an error repeats it.
func shown(s string) any {
	if len(s) > maxShownValue {
		return field.OmitValueType{}
	}
	return s
}

// nodeFlags are -N <size> -n<tasks> when there are at least as many tasks as
// nodes, -n<tasks> otherwise, -N <size> alone for tasks: 0.
func nodeFlags(size, tasks int32) []string {
	switch {
	case tasks == 0:
		return []string{"-N", strconv.Itoa(int(size))}
	case tasks >= size:
		return []string{"-N", strconv.Itoa(int(size)), "-n" + strconv.Itoa(int(tasks))}
	default:
		return []string{"-n" + strconv.Itoa(int(tasks))}
	}
}
