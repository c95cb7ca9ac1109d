package main

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// jobManager is rank 0's job manager and scheduler: first come first
// served over the cores of R, jobs started through the overlay, their
// output and exits collected. It stands in for job-manager, job-exec,
// sched-simple and the job shell's output plugin, nothing more.
type jobManager struct {
	b    *broker
	ids  fluidGen
	user string

	mu        sync.Mutex
	ranks     []rankState
	quorumMet bool
	stopping  bool
	jobs      map[uint64]*job
	order     []*job
	waiters   []*waiter
	idlers    []*idler
	remote    map[string]chan struct{} // relayed requests' cancel, by "rank/rpc"
	scopes    map[string]*job          // running batch jobs, by scope
}

type rankState struct {
	host      string
	cores     int
	gpus      int
	fromR     bool // cores come from R, not from the broker's hello
	allocated int
	up        bool
	lost      bool
}

// job states, as flux jobs abbreviates them.
const (
	stSched    = "S"
	stRun      = "R"
	stInactive = "I"
)

type job struct {
	id      uint64
	scope   string
	req     jobRequest
	state   string
	result  string // COMPLETED, FAILED, CANCELED, TIMEOUT
	alloc   map[int]int
	inner   map[int]int // of a batch job: the cores its scope's jobs use
	tasks   map[int][]int
	pending map[int]bool
	status  int
	excType string
	excNote string
	submit  time.Time
	start   time.Time
	end     time.Time
	events  []response
	subs    []*subscriber
	waited  bool
	files   map[string]*os.File
	timer   *time.Timer
}

type subscriber struct {
	done  <-chan struct{}
	reply func(response)
}

type waiter struct {
	scope string
	id    uint64 // 0: any
	done  <-chan struct{}
	reply func(response)
}

type idler struct {
	scope string
	done  <-chan struct{}
	reply func(response)
}

func newJobManager(b *broker, conf map[string]any) (*jobManager, error) {
	jm := &jobManager{b: b, ids: fluidGen{start: b.startTime}, jobs: map[uint64]*job{}, remote: map[string]chan struct{}{}, scopes: map[string]*job{}}
	jm.ranks = make([]rankState, b.size)
	for i, h := range b.boot.Hosts {
		jm.ranks[i].host = h.Host
	}
	jm.user = strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		jm.user = u.Username
	}
	// R, as the resource module reads it from [resource] path.
	path, err := tableString(conf, "resource", "path")
	if err != nil {
		return nil, err
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("resource: error reading R from %s: %s", path, errnoText(err))
		}
		rs, err := decodeR(data)
		if err != nil {
			return nil, fmt.Errorf("resource: error parsing R from %s: %s", path, err)
		}
		for _, r := range rs {
			if r.Rank >= b.size {
				return nil, fmt.Errorf("resource: R from %s has rank %d but the instance has %d", path, r.Rank, b.size)
			}
			if r.Host != "" && r.Host != jm.ranks[r.Rank].host {
				return nil, fmt.Errorf("resource: R from %s names %s for rank %d, the configuration %s", path, r.Host, r.Rank, jm.ranks[r.Rank].host)
			}
			jm.ranks[r.Rank].cores, jm.ranks[r.Rank].gpus, jm.ranks[r.Rank].fromR = len(r.Cores), len(r.GPUs), true
		}
	}
	return jm, nil
}

// online records a rank that joined; at quorum the instance runs.
func (jm *jobManager) online(rank int, host string, cores int) {
	jm.mu.Lock()
	rs := &jm.ranks[rank]
	rs.up, rs.lost = true, false
	if !rs.fromR {
		rs.cores = cores
	}
	n := 0
	for _, r := range jm.ranks {
		if r.up {
			n++
		}
	}
	reached := !jm.quorumMet && n >= jm.b.quorum
	if reached {
		jm.quorumMet = true
	}
	jm.schedule()
	jm.mu.Unlock()
	if reached {
		jm.b.log.logf(logInfo, "quorum reached (%d of %d brokers): run", n, jm.b.size)
		jm.b.enterRun()
	}
}

// lost marks rank and everything below it down. Jobs with tasks there
// fail, as a job does on a node failure.
func (jm *jobManager) lost(rank int, clean bool) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	gone := map[int]bool{}
	for _, r := range jm.b.topo.subtree(rank) {
		if jm.ranks[r].up {
			jm.ranks[r].up = false
			jm.ranks[r].lost = !clean
			gone[r] = true
		}
	}
	for _, j := range jm.order {
		if j.state != stRun {
			continue
		}
		for r := range j.pending {
			if gone[r] {
				jm.raise(j, "node-failure", fmt.Sprintf("rank %d (%s) went away", r, jm.ranks[r].host))
				delete(j.pending, r)
				j.status = max(j.status, 1)
			}
		}
		jm.maybeFinish(j)
	}
}

// submit validates and enqueues a job; an unsatisfiable one fails at once.
func (jm *jobManager) submit(scope string, req *jobRequest) (uint64, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if jm.stopping {
		return 0, fmt.Errorf("job-manager: instance is shutting down")
	}
	if len(req.Argv) == 0 && req.Script == "" {
		return 0, fmt.Errorf("jobspec: no command")
	}
	j := &job{id: jm.ids.next(), scope: scope, req: *req, state: stSched, submit: time.Now(), pending: map[int]bool{}}
	jm.jobs[j.id] = j
	jm.order = append(jm.order, j)
	if why := jm.unsatisfiable(req, scope); why != "" {
		jm.raise(j, "alloc", "unsatisfiable request: "+why)
		jm.maybeFinish(j)
		return j.id, nil
	}
	jm.schedule()
	return j.id, nil
}

// exited is a rank's end of its tasks of a job.
func (jm *jobManager) exited(id uint64, rank, status int, errText string) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j := jm.jobs[id]
	if j == nil || !j.pending[rank] {
		return
	}
	delete(j.pending, rank)
	j.status = max(j.status, status)
	if errText != "" {
		jm.raise(j, "exec", errText)
	}
	jm.maybeFinish(j)
}

// raise records a fatal job exception; a running job's tasks are killed.
func (jm *jobManager) raise(j *job, typ, note string) {
	if j.excType != "" {
		return
	}
	j.excType, j.excNote = typ, note
	if j.state == stRun && len(j.pending) > 0 {
		jm.signal(j, syscall.SIGTERM)
	}
}

func (jm *jobManager) signal(j *job, sig syscall.Signal) {
	for r := range j.pending {
		jm.b.route(&msg{Type: mKill, To: r, From: 0, Job: j.id, Signal: int(sig)})
	}
}

// maybeFinish ends a job whose ranks have all exited (or that never ran
// and has an exception): resources freed, waiters and attachers answered,
// the queue advanced. Called with jm.mu held.
func (jm *jobManager) maybeFinish(j *job) {
	if j.state == stInactive || len(j.pending) > 0 || (j.state == stSched && j.excType == "") {
		return
	}
	wasRunning := j.state == stRun
	j.state, j.end = stInactive, time.Now()
	if wasRunning {
		jm.release(j)
	}
	if j.timer != nil {
		j.timer.Stop()
	}
	seen := map[*os.File]bool{}
	for _, f := range j.files {
		if !seen[f] {
			_ = f.Close() // as a failed write, a failed close does not fail the job
			seen[f] = true
		}
	}
	switch {
	case j.result != "":
	case j.excType == "cancel":
		j.result = "CANCELED"
	case j.excType != "" || j.status != 0:
		j.result = "FAILED"
	default:
		j.result = "COMPLETED"
	}
	end := jm.endResponse(j)
	end.Final = true
	for _, s := range j.subs {
		s.reply(end)
	}
	j.subs = nil
	if j.req.Waitable {
		for i, w := range jm.waiters {
			if w.scope == j.scope && (w.id == 0 || w.id == j.id) && !isDone(w.done) {
				jm.waiters = append(jm.waiters[:i], jm.waiters[i+1:]...)
				j.waited = true
				w.reply(jm.waitResponse(j))
				break
			}
		}
	}
	jm.wakeWaitersForAny()
	jm.wakeIdlers()
	jm.schedule()
}

// shuttingDown refuses new jobs and cancels the pending ones.
func (jm *jobManager) shuttingDown() {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.stopping = true
	for _, j := range jm.order {
		if j.state == stSched {
			jm.raise(j, "cancel", "instance shutdown")
			jm.maybeFinish(j)
		}
	}
}
