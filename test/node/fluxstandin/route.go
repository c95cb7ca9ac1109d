package main

import (
	"fmt"
	"syscall"
)

// route sends m on towards m.To: down to the child whose subtree holds it,
// else up to the parent; a message for this rank goes to the inbox. It
// never blocks.
func (b *broker) route(m *msg) {
	if m.To == b.rank {
		b.inbox.post(m)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.topo.toward(b.rank, m.To); c >= 0 {
		if k := b.children[c]; k != nil {
			k.send(m)
			return
		}
		b.undeliverable(m, fmt.Sprintf("rank %d is not connected", c))
		return
	}
	if b.rank == 0 {
		return // for a rank outside the instance
	}
	if b.parent == nil {
		b.upQueue = append(b.upQueue, m)
		return
	}
	b.parent.send(m)
}

// undeliverable answers for a message that cannot reach its rank, so that
// nothing waits for ever on it. Called with b.mu held.
func (b *broker) undeliverable(m *msg, why string) {
	if m.Type == mRun {
		out := &msg{Type: mExit, To: 0, From: m.To, Job: m.Job, Status: 1, Error: "flux-standin: " + why}
		go b.route(out)
	}
}

// dispatch handles a message for this rank, one at a time in the inbox's
// order.
func (b *broker) dispatch(m *msg) {
	switch m.Type {
	case mOnline:
		if b.jobs != nil {
			b.jobs.online(m.Rank, m.Hostname, m.Cores)
		}
	case mLost:
		if b.jobs != nil {
			b.jobs.lost(m.Rank, m.Status == 1)
		}
	case mRun:
		b.exec.start(m.Job, m.Task)
	case mKill:
		b.exec.kill(m.Job, syscall.Signal(m.Signal))
	case mOutput:
		if b.jobs != nil {
			b.jobs.output(m.Job, m.TaskID, m.Stream, m.Data)
		}
	case mExit:
		if b.jobs != nil {
			b.jobs.exited(m.Job, m.From, m.Status, m.Error)
		}
	case mRPC:
		if b.jobs != nil {
			b.serveRemote(m)
		}
	case mRPCGone:
		if b.jobs != nil {
			b.jobs.remoteGone(m.From, m.RPC)
		}
	case mRPCResp:
		b.deliverRelay(m)
	}
}
