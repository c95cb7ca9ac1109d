package main

import (
	"fmt"
	"maps"
	"slices"
	"syscall"
	"time"
)

// slot is one rank's share of a pool of cores: the instance's, or a batch
// job's allocation, which the jobs its script submits share, as they would
// share the nested instance of a real flux batch.
type slot struct {
	rank, cores, used int
	up, known         bool
}

// pool is the cores jobs of scope are scheduled on; false when the scope's
// batch job is not running. Called with jm.mu held.
func (jm *jobManager) pool(scope string) ([]slot, bool) {
	var slots []slot
	if scope == "" {
		for i, r := range jm.ranks {
			slots = append(slots, slot{rank: i, cores: r.cores, used: r.allocated, up: r.up, known: r.fromR || r.up})
		}
		return slots, true
	}
	b := jm.scopes[scope]
	if b == nil || b.state != stRun {
		return nil, false
	}
	for _, r := range slices.Sorted(maps.Keys(b.alloc)) {
		slots = append(slots, slot{rank: r, cores: b.alloc[r], used: b.inner[r], up: jm.ranks[r].up, known: true})
	}
	return slots, true
}

// use takes (sign 1) or gives back (-1) alloc from scope's pool.
func (jm *jobManager) use(scope string, alloc map[int]int, sign int) {
	for r, n := range alloc {
		if scope == "" {
			jm.ranks[r].allocated += sign * n
		} else if b := jm.scopes[scope]; b != nil {
			b.inner[r] += sign * n
		}
	}
}

// unsatisfiable says why req can never run in scope's pool, down ranks
// included, or "".
func (jm *jobManager) unsatisfiable(req *jobRequest, scope string) string {
	if req.GPUsPerTask > 0 {
		return "the test double schedules no GPUs"
	}
	slots, ok := jm.pool(scope)
	if !ok {
		return "its batch job " + f58(parseScope(scope)) + " is not running"
	}
	c := max(1, req.CoresPerTask)
	if req.NNodes > 0 {
		nt := max(req.NTasks, req.NNodes)
		if req.NTasks > 0 && req.NTasks < req.NNodes {
			return fmt.Sprintf("%d tasks on %d nodes", req.NTasks, req.NNodes)
		}
		need := (nt + req.NNodes - 1) / req.NNodes * c
		fit := 0
		for _, s := range slots {
			if s.cores >= need || !s.known {
				fit++ // a rank not up yet may have enough cores
			}
		}
		if fit < req.NNodes {
			return fmt.Sprintf("%d nodes with %d cores each requested, there are %d such nodes", req.NNodes, need, fit)
		}
		return ""
	}
	room := 0
	for _, s := range slots {
		if !s.known {
			return "" // not known yet
		}
		room += s.cores / c
	}
	if nt := max(1, req.NTasks); room < nt {
		return fmt.Sprintf("%d tasks of %d cores requested, there is room for %d", nt, c, room)
	}
	return ""
}

func parseScope(scope string) uint64 {
	id, _ := parseJobID("f" + scope)
	return id
}

// schedule starts pending jobs in submission order while they fit: first
// come first served, a job that does not fit blocking those behind it in
// its scope. Called with jm.mu held.
func (jm *jobManager) schedule() {
	if !jm.quorumMet || jm.stopping {
		return
	}
	blocked := map[string]bool{}
	for _, j := range jm.order {
		if j.state != stSched || blocked[j.scope] {
			continue
		}
		alloc, tasks, ok := jm.allocate(&j.req, j.scope)
		if !ok {
			blocked[j.scope] = true
			continue
		}
		jm.startJob(j, alloc, tasks)
	}
}

// allocate picks cores for req in scope's pool, in rank order. With -N,
// nodes are taken whole (exclusively), as Flux does when nodes are asked
// for; tasks spread evenly, the first nodes taking the rest.
func (jm *jobManager) allocate(req *jobRequest, scope string) (map[int]int, map[int][]int, bool) {
	slots, ok := jm.pool(scope)
	if !ok {
		return nil, nil, false
	}
	c := max(1, req.CoresPerTask)
	alloc, tasks := map[int]int{}, map[int][]int{}
	tid := 0
	if req.NNodes > 0 {
		nt := max(req.NTasks, req.NNodes)
		per := func(n int) int {
			if n < nt%req.NNodes {
				return nt/req.NNodes + 1
			}
			return nt / req.NNodes
		}
		var nodes []slot
		for _, s := range slots {
			if len(nodes) < req.NNodes && s.up && s.used == 0 && s.cores >= per(len(nodes))*c {
				nodes = append(nodes, s)
			}
		}
		if len(nodes) < req.NNodes {
			return nil, nil, false
		}
		for n, s := range nodes {
			alloc[s.rank] = s.cores
			for k := 0; k < per(n); k++ {
				tasks[s.rank] = append(tasks[s.rank], tid)
				tid++
			}
		}
		return alloc, tasks, true
	}
	left := max(1, req.NTasks)
	for _, s := range slots {
		if left == 0 {
			break
		}
		k := min(left, (s.cores-s.used)/c)
		if !s.up || k <= 0 {
			continue
		}
		alloc[s.rank] = k * c
		for n := 0; n < k; n++ {
			tasks[s.rank] = append(tasks[s.rank], tid)
			tid++
		}
		left -= k
	}
	return alloc, tasks, left == 0
}

// startJob opens the job's output files and sends each rank its tasks.
// Called with jm.mu held.
func (jm *jobManager) startJob(j *job, alloc map[int]int, tasks map[int][]int) {
	j.state, j.start, j.alloc, j.tasks = stRun, time.Now(), alloc, tasks
	jm.use(j.scope, alloc, 1)
	if err := jm.openOutputs(j); err != nil {
		jm.raise(j, "exec", err.Error())
		j.status = 1
		jm.maybeFinish(j)
		return
	}
	// Tasks submit into the job's own scope, a batch script into its own,
	// whose pool is the batch job's allocation.
	scope := j.scope
	if j.req.Script != "" {
		scope = f58Plain(j.id)
		jm.scopes[scope] = j
		j.inner = map[int]int{}
		// The script runs once, on the first node of the allocation.
		tasks = map[int][]int{slices.Sorted(maps.Keys(tasks))[0]: {0}}
		j.tasks = tasks
	}
	nt := 0
	for _, t := range tasks {
		nt += len(t)
	}
	for _, r := range slices.Sorted(maps.Keys(tasks)) {
		j.pending[r] = true
		spec := &taskSpec{Argv: j.req.Argv, Env: j.req.Env, Cwd: j.req.Cwd, TaskIDs: tasks[r],
			NTasks: nt, NNodes: len(tasks), Script: j.req.Script, Scope: scope}
		jm.b.route(&msg{Type: mRun, To: r, From: 0, Job: j.id, Task: spec})
	}
	if j.req.TimeLimit > 0 {
		id := j.id
		j.timer = time.AfterFunc(time.Duration(j.req.TimeLimit*float64(time.Second)), func() {
			jm.mu.Lock()
			defer jm.mu.Unlock()
			if j := jm.jobs[id]; j != nil && j.state == stRun {
				jm.raise(j, "timeout", "resource allocation expired")
				j.result = "TIMEOUT"
				jm.signal(j, syscall.SIGTERM)
			}
		})
	}
}

// release gives a finished job's cores back; a batch job's end ends the
// jobs of its scope, as the end of a nested instance would.
func (jm *jobManager) release(j *job) {
	jm.use(j.scope, j.alloc, -1)
	if j.req.Script == "" {
		return
	}
	scope := f58Plain(j.id)
	for _, k := range jm.order {
		if k.scope == scope && k.state != stInactive {
			jm.raise(k, "cancel", "its batch job ended")
			jm.maybeFinish(k)
		}
	}
	delete(jm.scopes, scope)
}
