package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// openOutputs opens --output and --error (a batch job's default is
// flux-{{id}}.out in its working directory), relative to the job's working
// directory. The job shell writes them on the job's first node; the double
// writes them here, on rank 0.
func (jm *jobManager) openOutputs(j *job) error {
	out, errf := j.req.Output, j.req.Error
	if out == "" && j.req.Script != "" {
		out = "flux-{{id}}.out"
	}
	j.files = map[string]*os.File{}
	for _, s := range []struct{ stream, tmpl string }{{"stdout", out}, {"stderr", errf}} {
		if s.tmpl == "" {
			continue
		}
		name := expandTemplate(s.tmpl, j)
		if !filepath.IsAbs(name) {
			name = filepath.Join(j.req.Cwd, name)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644) //nolint:gosec // G302: job output is for people to read, not a secret
		if err != nil {
			return fmt.Errorf("output: %s: %s", name, errnoText(err))
		}
		j.files[s.stream] = f
	}
	if j.files["stderr"] == nil && j.files["stdout"] != nil {
		j.files["stderr"] = j.files["stdout"] // flux: stderr follows --output
	}
	return nil
}

// expandTemplate substitutes the mustache tags of flux's output paths.
func expandTemplate(t string, j *job) string {
	name := "unknown"
	if len(j.req.Argv) > 0 {
		name = filepath.Base(j.req.Argv[0])
	}
	if j.req.Name != "" {
		name = j.req.Name
	}
	return strings.NewReplacer("{{id}}", f58(j.id), "{{jobid}}", f58(j.id), "{{id.f58}}", f58(j.id),
		"{{id.f58plain}}", "f"+f58Plain(j.id), "{{id.dec}}", strconv.FormatUint(j.id, 10), "{{name}}", name).Replace(t)
}

// output is a line of a task: to the job's file for its stream, else kept
// for attach and sent to those attached.
func (jm *jobManager) output(id uint64, task int, stream string, data []byte) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j := jm.jobs[id]
	if j == nil {
		return
	}
	if f := j.files[stream]; f != nil {
		_, _ = f.Write(data) // a write error (full disk) loses output, it does not fail the job
		return
	}
	ev := response{ID: id, Stream: stream, TaskID: task, Data: data}
	j.events = append(j.events, ev)
	for _, s := range j.subs {
		s.reply(ev)
	}
}
