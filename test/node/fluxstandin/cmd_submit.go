package main

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// jobOpts are the options of flux submit, run and batch the double takes.
// Scheduling options it cannot honour (queues, dependencies, begin times,
// custom inputs) are not in the table, so they fail as not implemented.
var jobOpts = []opt{
	{'N', "nodes", true}, {'n', "ntasks", true}, {'c', "cores-per-task", true},
	{'g', "gpus-per-task", true}, {0, "tasks-per-node", true}, {'x', "exclusive", false},
	{'t', "time-limit", true}, {0, "urgency", true}, {0, "job-name", true},
	{'o', "setopt", true}, {'S', "setattr", true}, {0, "flags", true},
	{0, "output", true}, {0, "error", true}, {'u', "unbuffered", false},
	{'l', "label-io", false}, {0, "quiet", false}, {'v', "verbose", false},
	{0, "env", true}, {0, "cwd", true}, {0, "progress", false}, {0, "jps", false},
	{0, "debug", false},
}

func cmdSubmit(args []string, io stdio) int {
	table := append(append([]opt{}, jobOpts...), opt{0, "watch", false}, opt{0, "wait", false})
	return submitCommand("flux submit", table, args, io, false)
}

// cmdRun is flux run: submit, then attach.
func cmdRun(args []string, io stdio) int {
	return submitCommand("flux run", jobOpts, args, io, true)
}

func submitCommand(name string, table []opt, args []string, io stdio, run bool) int {
	o, err := parseOpts(name, table, args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) == 0 {
		return fail(io, fmt.Errorf("%s: job command and arguments are missing", path.Base(name)))
	}
	req, err := jobRequestFrom(name, o)
	if err != nil {
		return fail(io, err)
	}
	req.Argv = o.rest
	resp, err := call1(request{Op: opSubmit, Job: req})
	if err != nil {
		return fail(io, fmt.Errorf("%s: ERROR: %s", strings.TrimPrefix(name, "flux "), err))
	}
	noteShellOpts(o, io)
	if o.count("verbose") > 0 {
		_, _ = fmt.Fprintf(io.err, "jobid: %s\n", f58(resp.ID))
	}
	watch := run || o.has("watch")
	if !run && !o.has("quiet") {
		_, _ = fmt.Fprintln(io.out, f58(resp.ID))
	}
	switch {
	case watch:
		return attach(resp.ID, o.has("label-io"), true, io)
	case o.has("wait"):
		return attach(resp.ID, false, false, io)
	}
	return 0
}

// cmdBatch is flux batch: the script must start with #!, runs once on the
// first node of its allocation, and its output goes to flux-{{id}}.out
// unless --output says otherwise. The script's jobs are scoped to it (see
// the package doc), instead of running in a nested instance.
func cmdBatch(args []string, io stdio) int {
	o, err := parseOpts("flux batch", jobOpts, args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) == 0 {
		return fail(io, notImplemented("flux batch without a script (reading stdin)"))
	}
	script, err := os.ReadFile(o.rest[0])
	if err != nil {
		return fail(io, fmt.Errorf("batch: ERROR: %s: %s", o.rest[0], errnoText(err)))
	}
	if !bytes.HasPrefix(script, []byte("#!")) {
		return fail(io, fmt.Errorf("batch: ERROR: %s does not appear to start with '#!'", o.rest[0]))
	}
	req, err := jobRequestFrom("flux batch", o)
	if err != nil {
		return fail(io, err)
	}
	req.Script, req.Argv = string(script), o.rest[1:]
	if req.Name == "" {
		req.Name = filepath.Base(o.rest[0])
	}
	resp, err := call1(request{Op: opSubmit, Job: req})
	if err != nil {
		return fail(io, fmt.Errorf("batch: ERROR: %s", err))
	}
	noteShellOpts(o, io)
	if !o.has("quiet") {
		_, _ = fmt.Fprintln(io.out, f58(resp.ID))
	}
	return 0
}

// jobRequestFrom turns the options into a job request: the submitter's
// environment and working directory go with it, as in jobspec.
func jobRequestFrom(name string, o opts) (*jobRequest, error) {
	req := &jobRequest{Env: os.Environ(), Name: o.last("job-name", ""), Output: o.last("output", ""),
		Error: o.last("error", ""), Attrs: o.all("setattr"), ShellOpts: o.all("setopt"), Exclusive: o.has("exclusive")}
	var err error
	if req.Cwd, err = os.Getwd(); err != nil {
		return nil, fmt.Errorf("%s: getcwd: %s", name, errnoText(err))
	}
	if d := o.last("cwd", ""); d != "" {
		req.Cwd = d
	}
	ints := []struct {
		opt string
		dst *int
	}{{"nodes", &req.NNodes}, {"ntasks", &req.NTasks}, {"cores-per-task", &req.CoresPerTask}, {"gpus-per-task", &req.GPUsPerTask}}
	for _, n := range ints {
		if v := o.last(n.opt, ""); v != "" {
			if *n.dst, err = strconv.Atoi(v); err != nil || *n.dst < 1 {
				return nil, fmt.Errorf("%s: ERROR: --%s=%s: must be a positive integer", name, n.opt, v)
			}
		}
	}
	if v := o.last("tasks-per-node", ""); v != "" {
		per, err := strconv.Atoi(v)
		if err != nil || per < 1 || req.NNodes == 0 {
			return nil, fmt.Errorf("%s: ERROR: --tasks-per-node=%s needs --nodes and a positive integer", name, v)
		}
		req.NTasks = per * req.NNodes
	}
	if v := o.last("time-limit", ""); v != "" {
		d, err := parseTimeLimit(v)
		if err != nil {
			return nil, fmt.Errorf("%s: ERROR: --time-limit=%s: %s", name, v, err)
		}
		req.TimeLimit = d.Seconds()
	}
	for _, fl := range o.all("flags") {
		for _, f := range strings.Split(fl, ",") {
			switch f {
			case "waitable":
				req.Waitable = true
			case "debug", "novalidate":
			default:
				return nil, fmt.Errorf("%s: ERROR: Unknown flag '%s'", name, f)
			}
		}
	}
	for _, e := range o.all("env") {
		switch k, v, hasVal := strings.Cut(e, "="); {
		case strings.HasPrefix(e, "-"):
			pat := e[1:]
			var keep []string
			for _, kv := range req.Env {
				if ok, _ := path.Match(pat, strings.SplitN(kv, "=", 2)[0]); !ok {
					keep = append(keep, kv)
				}
			}
			req.Env = keep
		case hasVal:
			req.Env = setEnv(req.Env, k, os.ExpandEnv(v))
		default:
			if val, ok := os.LookupEnv(k); ok {
				req.Env = setEnv(req.Env, k, val)
			}
		}
	}
	return req, nil
}

// parseTimeLimit reads --time-limit: a bare number is minutes, else FSD.
func parseTimeLimit(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Minute)), nil
	}
	return parseFSD(v)
}

// attach streams job id's output (stdout to stdout, stderr to stderr) and
// returns the job's exit code, as flux job attach and --watch do. With
// show false it only waits (flux submit --wait).
func attach(id uint64, label, show bool, io stdio) int {
	code := 1
	err := call(clientURI(), request{Op: opAttach, ID: id}, func(r response) error {
		if r.Done {
			code = r.ExitCode
			if strings.HasPrefix(r.ErrStr, "Fatal exception") {
				_, _ = fmt.Fprintf(io.err, "flux-standin: flux-job: %s: %s\n", f58(id), r.ErrStr)
			}
			return nil
		}
		if !show {
			return nil
		}
		w := io.out
		if r.Stream == "stderr" {
			w = io.err
		}
		data := r.Data
		if label {
			data = append([]byte(strconv.Itoa(r.TaskID)+": "), data...)
		}
		_, _ = w.Write(data) // as every write to stdout/stderr: nowhere to report it
		return nil
	})
	if err != nil {
		return fail(io, fmt.Errorf("flux-job: %s", err))
	}
	return code
}

// noteShellOpts says that -o options were taken but change nothing: an MPI
// job (-o mpi=...) runs its tasks without PMI, each a singleton, which the
// submitter must not mistake for Flux's doing.
func noteShellOpts(o opts, io stdio) {
	for _, so := range o.all("setopt") {
		_, _ = fmt.Fprintf(io.err, "flux-standin: shell option %s recorded, not acted on: the test double has no job shell plugins (no PMI, no affinity)\n", so)
	}
}
