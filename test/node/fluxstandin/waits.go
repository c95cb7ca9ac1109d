package main

import (
	"fmt"
)

// endResponse is how attach ends for j: the exit code a shell sees and
// Flux's description of a failure.
func (jm *jobManager) endResponse(j *job) response {
	r := response{ID: j.id, Done: true, ExitCode: j.status, Success: j.result == "COMPLETED"}
	switch {
	case j.excType != "":
		r.ErrStr = fmt.Sprintf("Fatal exception type=%s %s", j.excType, j.excNote)
		r.ExitCode = max(r.ExitCode, 1)
	case j.status > 128:
		r.ErrStr = "task(s) " + strsignal(j.status-128)
	case j.status > 0:
		r.ErrStr = fmt.Sprintf("task(s) exited with exit code %d", j.status)
	}
	return r
}

func (jm *jobManager) waitResponse(j *job) response {
	r := jm.endResponse(j)
	r.Final = true
	return r
}

func isDone(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wakeWaitersForAny answers waiters for any job of a scope that has no
// waitable job left to wait for (ECHILD). Called with jm.mu held.
func (jm *jobManager) wakeWaitersForAny() {
	keep := jm.waiters[:0]
	for _, w := range jm.waiters {
		if isDone(w.done) {
			continue
		}
		if w.id == 0 && !jm.hasWaitable(w.scope) {
			w.reply(response{Error: "no waitable jobs", Errno: "ECHILD", Final: true})
			continue
		}
		keep = append(keep, w)
	}
	jm.waiters = keep
}

func (jm *jobManager) hasWaitable(scope string) bool {
	for _, j := range jm.order {
		if j.scope == scope && j.req.Waitable && !j.waited {
			return true
		}
	}
	return false
}

func (jm *jobManager) wakeIdlers() {
	keep := jm.idlers[:0]
	for _, i := range jm.idlers {
		if isDone(i.done) {
			continue
		}
		if jm.active(i.scope) == 0 {
			i.reply(response{Final: true})
			continue
		}
		keep = append(keep, i)
	}
	jm.idlers = keep
}

func (jm *jobManager) active(scope string) int {
	n := 0
	for _, j := range jm.order {
		if j.scope == scope && j.state != stInactive {
			n++
		}
	}
	return n
}
