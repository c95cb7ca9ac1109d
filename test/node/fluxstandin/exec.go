package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// executor runs the tasks of jobs on this broker, as the job shell would:
// the job's environment plus FLUX_* variables, the job's working directory,
// output streamed line by line to rank 0, one exit status for the rank.
type executor struct {
	b    *broker
	mu   sync.Mutex
	jobs map[uint64]*execJob
	wg   sync.WaitGroup
}

type execJob struct {
	procs  []*os.Process
	tmpdir string
}

// start runs spec's tasks of job. It returns at once; the exit message
// follows every output message of the job.
func (e *executor) start(job uint64, spec *taskSpec) {
	b := e.b
	send := func(m *msg) {
		m.To, m.From, m.Job = 0, b.rank, job
		b.route(m)
	}
	if spec == nil || b.stopping() {
		send(&msg{Type: mExit, Status: 1, Error: "flux-standin: broker is shutting down"})
		return
	}
	ej := &execJob{tmpdir: filepath.Join(b.rundir, fmt.Sprintf("jobtmp-%d-%s", b.rank, f58Plain(job)))}
	shellErr := func(task int, format string, args ...any) {
		line := fmt.Sprintf("flux-standin shell[%d]: "+format+"\n", append([]any{b.rank}, args...)...)
		send(&msg{Type: mOutput, TaskID: task, Stream: "stderr", Data: []byte(line)})
	}
	first := 0
	if len(spec.TaskIDs) > 0 {
		first = spec.TaskIDs[0]
	}
	if err := os.MkdirAll(ej.tmpdir, 0o700); err != nil {
		shellErr(first, "FATAL: job tmpdir %s: %s", ej.tmpdir, errnoText(err))
		send(&msg{Type: mExit, Status: 1})
		return
	}
	argv := spec.Argv
	if spec.Script != "" {
		script := filepath.Join(ej.tmpdir, "script")
		if err := os.WriteFile(script, []byte(spec.Script), 0o700); err != nil {
			shellErr(first, "FATAL: %s: %s", script, errnoText(err))
			send(&msg{Type: mExit, Status: 1})
			return
		}
		argv = append([]string{script}, argv...)
	}
	cwd := spec.Cwd
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		shellErr(first, "Could not change dir to %s: No such file or directory. Going to /tmp instead", cwd)
		cwd = "/tmp"
	}
	env := unsetEnv(spec.Env, "FLUX_STANDIN_SCOPE")
	if spec.Scope != "" {
		env = setEnv(env, "FLUX_STANDIN_SCOPE", spec.Scope)
	}
	for _, kv := range [][2]string{
		{"FLUX_URI", "local://" + b.localPath}, {"FLUX_JOB_ID", f58(job)},
		{"FLUX_JOB_SIZE", strconv.Itoa(spec.NTasks)}, {"FLUX_JOB_NNODES", strconv.Itoa(spec.NNodes)},
		{"FLUX_JOB_TMPDIR", ej.tmpdir},
	} {
		env = setEnv(env, kv[0], kv[1])
	}

	statuses := make([]int, len(spec.TaskIDs))
	var tasks sync.WaitGroup
	for i, tid := range spec.TaskIDs {
		tenv := setEnv(setEnv(env, "FLUX_TASK_RANK", strconv.Itoa(tid)), "FLUX_TASK_LOCAL_ID", strconv.Itoa(i))
		path, err := lookPathIn(argv[0], tenv)
		if err != nil {
			shellErr(tid, "ERROR: task %d (host %s): start failed: %s: No such file or directory", tid, b.hostname, argv[0])
			statuses[i] = 127
			continue
		}
		cmd := &exec.Cmd{Path: path, Args: argv, Env: tenv, Dir: cwd,
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
		stdout, _ := cmd.StdoutPipe()
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			shellErr(tid, "ERROR: task %d (host %s): start failed: %s: %s", tid, b.hostname, argv[0], errnoText(err))
			statuses[i] = 126
			continue
		}
		e.mu.Lock()
		ej.procs = append(ej.procs, cmd.Process)
		e.jobs[job] = ej
		e.mu.Unlock()
		tasks.Add(1)
		e.wg.Add(1)
		go func(i, tid int) {
			defer e.wg.Done()
			defer tasks.Done()
			var streams sync.WaitGroup
			for name, r := range map[string]io.Reader{"stdout": stdout, "stderr": stderr} {
				streams.Add(1)
				go func(name string, r io.Reader) {
					defer streams.Done()
					br := bufio.NewReaderSize(r, 64<<10)
					for {
						line, err := br.ReadBytes('\n')
						if len(line) > 0 {
							send(&msg{Type: mOutput, TaskID: tid, Stream: name, Data: line})
						}
						if err != nil {
							return
						}
					}
				}(name, r)
			}
			streams.Wait()
			_ = cmd.Wait() // its exit status is in cmd.ProcessState
			statuses[i] = exitCode(cmd.ProcessState)
		}(i, tid)
	}
	go func() {
		tasks.Wait()
		status := 0
		for _, s := range statuses {
			status = max(status, s)
		}
		e.mu.Lock()
		delete(e.jobs, job)
		e.mu.Unlock()
		_ = os.RemoveAll(ej.tmpdir) // best effort: a leftover temporary directory harms nothing
		send(&msg{Type: mExit, Status: status})
	}()
}

// kill signals every task of job (their process groups); SIGTERM is
// followed by SIGKILL five seconds later, as the job shell's kill does.
func (e *executor) kill(job uint64, sig syscall.Signal) {
	e.mu.Lock()
	ej := e.jobs[job]
	var procs []*os.Process
	if ej != nil {
		procs = append(procs, ej.procs...)
	}
	e.mu.Unlock()
	for _, p := range procs {
		_ = syscall.Kill(-p.Pid, sig) // ESRCH: the task has exited already
	}
	if sig == syscall.SIGTERM && len(procs) > 0 {
		time.AfterFunc(5*time.Second, func() {
			for _, p := range procs {
				_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // ESRCH: gone after the SIGTERM
			}
		})
	}
}

// killAll terminates every task on this broker (shutdown).
func (e *executor) killAll() {
	e.mu.Lock()
	var ids []uint64
	for id := range e.jobs {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	for _, id := range ids {
		e.kill(id, syscall.SIGTERM)
	}
}

// wait waits for running tasks to end, at most d.
func (e *executor) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
