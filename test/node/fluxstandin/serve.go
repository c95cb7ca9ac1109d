package main

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// serve answers, on rank 0, the requests of the job manager and of the
// instance. gone is closed when the client went away.
func (jm *jobManager) serve(req *request, gone <-chan struct{}, reply func(response)) {
	fail := func(format string, args ...any) {
		reply(response{Error: fmt.Sprintf(format, args...), Final: true})
	}
	switch req.Op {
	case opSubmit:
		if req.Job == nil {
			fail("no job")
			return
		}
		id, err := jm.submit(req.Scope, req.Job)
		if err != nil {
			fail("%s", err)
			return
		}
		reply(response{ID: id, Final: true})
	case opAttach:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		j := jm.jobs[req.ID]
		if j == nil {
			fail("%s: job not found", f58(req.ID))
			return
		}
		for _, ev := range j.events {
			reply(ev)
		}
		if j.state == stInactive {
			end := jm.endResponse(j)
			end.Final = true
			reply(end)
			return
		}
		j.subs = append(j.subs, &subscriber{done: gone, reply: reply})
	case opWait:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		jm.wait(req, gone, reply)
	case opCancel:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		j := jm.jobs[req.ID]
		switch {
		case j == nil:
			fail("%s: job not found", f58(req.ID))
		case j.state == stInactive:
			fail("%s: job is inactive", f58(req.ID))
		default:
			jm.raise(j, "cancel", "")
			jm.maybeFinish(j)
			reply(response{Final: true})
		}
	case opJobs:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		var out []jobInfo
		for i := len(jm.order) - 1; i >= 0; i-- {
			j := jm.order[i]
			if j.scope != req.Scope || (!req.All && j.state == stInactive) {
				continue
			}
			out = append(out, jm.info(j))
		}
		reply(response{Jobs: out, Final: true})
	case opIdle:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		if jm.active(req.Scope) == 0 {
			reply(response{Final: true})
			return
		}
		jm.idlers = append(jm.idlers, &idler{scope: req.Scope, done: gone, reply: reply})
	case opResources:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		// Inside a batch job, its allocation, as in its nested instance.
		slots, ok := jm.pool(req.Scope)
		if !ok {
			fail("the batch job of this scope is not running")
			return
		}
		ri := &resourceInfo{}
		for _, s := range slots {
			r := jm.ranks[s.rank]
			ri.Ranks = append(ri.Ranks, rankResources{Rank: s.rank, Host: r.host, Cores: s.cores, GPUs: r.gpus, Allocated: s.used, Up: s.up})
		}
		reply(response{Resources: ri, Final: true})
	case opOverlay:
		jm.mu.Lock()
		defer jm.mu.Unlock()
		var nodes []overlayNode
		for i, r := range jm.ranks {
			st := "full"
			switch {
			case r.lost:
				st = "lost"
			case !r.up:
				st = "offline"
			default:
				for _, d := range jm.b.topo.subtree(i) {
					if !jm.ranks[d].up {
						st = "partial"
						if jm.ranks[d].lost {
							st = "degraded"
						}
					}
				}
			}
			nodes = append(nodes, overlayNode{Rank: i, Parent: jm.b.topo.parent[i], Host: r.host, Status: st})
		}
		reply(response{Overlay: nodes, Final: true})
	case opShutdown:
		reply(response{Final: true})
		jm.b.requestShutdown()
	default:
		fail("%s: unknown request", req.Op)
	}
}

// wait is flux job wait: a given waitable job, or any waitable job of the
// scope, reaped once. Called with jm.mu held.
func (jm *jobManager) wait(req *request, gone <-chan struct{}, reply func(response)) {
	if req.ID != 0 {
		j := jm.jobs[req.ID]
		switch {
		case j == nil || j.scope != req.Scope:
			reply(response{Error: f58(req.ID) + ": job not found", Errno: "ENOENT", Final: true})
		case !j.req.Waitable || j.waited:
			reply(response{Error: f58(req.ID) + ": job is not waitable", Errno: "ECHILD", Final: true})
		case j.state == stInactive:
			j.waited = true
			reply(jm.waitResponse(j))
		default:
			jm.waiters = append(jm.waiters, &waiter{scope: req.Scope, id: req.ID, done: gone, reply: reply})
		}
		return
	}
	for _, j := range jm.order {
		if j.scope == req.Scope && j.req.Waitable && !j.waited && j.state == stInactive {
			j.waited = true
			reply(jm.waitResponse(j))
			return
		}
	}
	if !jm.hasWaitable(req.Scope) {
		reply(response{Error: "no waitable jobs", Errno: "ECHILD", Final: true})
		return
	}
	jm.waiters = append(jm.waiters, &waiter{scope: req.Scope, done: gone, reply: reply})
}

func (jm *jobManager) info(j *job) jobInfo {
	ji := jobInfo{ID: j.id, User: jm.user, NTasks: max(1, j.req.NTasks), NNodes: len(j.alloc), Result: j.result}
	if j.req.NNodes > 0 {
		ji.NNodes = j.req.NNodes
		ji.NTasks = max(j.req.NTasks, j.req.NNodes)
	}
	ji.Name = "unknown"
	if j.req.Name != "" {
		ji.Name = j.req.Name
	} else if len(j.req.Argv) > 0 {
		ji.Name = filepathBase(j.req.Argv[0])
	}
	switch j.state {
	case stSched:
		ji.State = "S"
		ji.Seconds = time.Since(j.submit).Seconds()
	case stRun:
		ji.State = "R"
		ji.Seconds = time.Since(j.start).Seconds()
	default:
		ji.State = map[string]string{"COMPLETED": "CD", "FAILED": "F", "CANCELED": "CA", "TIMEOUT": "TO"}[j.result]
		if !j.start.IsZero() {
			ji.Seconds = j.end.Sub(j.start).Seconds()
		}
	}
	var hosts []string
	for _, r := range slices.Sorted(maps.Keys(j.tasks)) {
		hosts = append(hosts, jm.ranks[r].host)
	}
	ji.Nodelist = encodeHostlist(hosts)
	return ji
}

func filepathBase(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
