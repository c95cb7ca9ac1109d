package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cmdJob is flux job attach, wait and cancel.
func cmdJob(args []string, io stdio) int {
	if len(args) == 0 {
		return fail(io, notImplemented("flux job without a subcommand"))
	}
	switch args[0] {
	case "attach":
		o, err := parseOpts("flux job attach", optTables["flux job attach"], args[1:])
		if err != nil {
			return fail(io, err)
		}
		if len(o.rest) != 1 {
			return fail(io, fmt.Errorf("flux-job: attach takes one job id"))
		}
		id, err := parseJobID(o.rest[0])
		if err != nil {
			return fail(io, fmt.Errorf("flux-job: %s", err))
		}
		return attach(id, o.has("label-io"), true, io)
	case "wait":
		return jobWait(args[1:], io)
	case "cancel":
		return cmdCancel(args[1:], io)
	}
	return fail(io, notImplemented("flux job "+args[0]))
}

// jobWait is flux job wait (cmd/job/wait.c): one waitable job, any, or
// --all of them; 2 when there is nothing to wait for.
func jobWait(args []string, io stdio) int {
	o, err := parseOpts("flux job wait", optTables["flux job wait"], args)
	if err != nil {
		return fail(io, err)
	}
	var id uint64
	if len(o.rest) > 1 {
		return fail(io, fmt.Errorf("flux-job: wait takes at most one job id"))
	}
	if len(o.rest) == 1 {
		if o.has("all") {
			return fail(io, fmt.Errorf("flux-job: jobid not supported with --all"))
		}
		if id, err = parseJobID(o.rest[0]); err != nil {
			return fail(io, fmt.Errorf("flux-job: %s", err))
		}
	}
	if o.has("all") {
		rc := 0
		for {
			r, err := call1(request{Op: opWait})
			var re respError
			if errors.As(err, &re) && re.resp.Errno == "ECHILD" {
				return rc
			}
			if err != nil {
				return fail(io, fmt.Errorf("flux-job: flux_job_wait_get_status: %s", err))
			}
			if !r.Success {
				_, _ = fmt.Fprintf(io.err, "%s: %s\n", f58(r.ID), r.ErrStr)
				rc = 1
			} else if o.has("verbose") {
				_, _ = fmt.Fprintf(io.err, "%s: job completed successfully\n", f58(r.ID))
			}
		}
	}
	r, err := call1(request{Op: opWait, ID: id})
	if err != nil {
		var re respError
		if errors.As(err, &re) && re.resp.Errno == "ECHILD" {
			_, _ = fmt.Fprintf(io.err, "flux-standin: flux-job: %s\n", err)
			return 2
		}
		return fail(io, fmt.Errorf("flux-job: %s", err))
	}
	if id == 0 {
		_, _ = fmt.Fprintln(io.out, f58(r.ID))
	}
	if !r.Success {
		return fail(io, fmt.Errorf("flux-job: %s", r.ErrStr))
	}
	return 0
}

func cmdCancel(args []string, io stdio) int {
	o, err := parseOpts("flux cancel", optTables["flux cancel"], args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) == 0 {
		return fail(io, notImplemented("flux cancel without job ids (--all)"))
	}
	rc := 0
	for _, s := range o.rest {
		id, err := parseJobID(s)
		if err == nil {
			_, err = call1(request{Op: opCancel, ID: id})
		}
		if err != nil {
			_, _ = fmt.Fprintf(io.err, "flux-standin: flux-cancel: %s\n", err)
			rc = 1
		}
	}
	return rc
}

// cmdJobs is flux jobs with its default format: active jobs, or all with -a.
func cmdJobs(args []string, io stdio) int {
	o, err := parseOpts("flux jobs", optTables["flux jobs"], args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, notImplemented("flux jobs with job ids"))
	}
	r, err := call1(request{Op: opJobs, All: o.has("all")})
	if err != nil {
		return fail(io, fmt.Errorf("flux-jobs: %s", err))
	}
	jobs := r.Jobs
	if c := o.last("count", ""); c != "" {
		if n, err := strconv.Atoi(c); err == nil && n >= 0 && n < len(jobs) {
			jobs = jobs[:n]
		}
	}
	if !o.has("no-header") {
		_, _ = fmt.Fprintf(io.out, "%12s %-8s %-10s %2s %6s %6s %8s %s\n", "JOBID", "USER", "NAME", "ST", "NTASKS", "NNODES", "TIME", "INFO")
	}
	for _, j := range jobs {
		_, _ = fmt.Fprintf(io.out, "%12s %-8.8s %-10.10s %2s %6d %6d %8s %s\n",
			f58(j.ID), j.User, j.Name, j.State, j.NTasks, j.NNodes, formatFSD(secondsDuration(j.Seconds)), j.Nodelist)
	}
	return 0
}

// cmdQueue is flux queue idle.
func cmdQueue(args []string, io stdio) int {
	if len(args) == 0 || args[0] != "idle" {
		return fail(io, notImplemented("flux queue "+strings.Join(args, " ")))
	}
	o, err := parseOpts("flux queue idle", optTables["flux queue idle"], args[1:])
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, notImplemented("flux queue idle with a queue name"))
	}
	if _, err := call1(request{Op: opIdle}); err != nil {
		return fail(io, fmt.Errorf("flux-queue: %s", err))
	}
	return 0
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
