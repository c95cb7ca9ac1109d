package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// run brings the broker up and returns its exit status.
func (b *broker) run() int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	if len(b.topo.children(b.rank)) > 0 {
		if err := b.bind(); err != nil {
			_, _ = fmt.Fprintf(b.io.err, "flux-standin: flux-broker: %s\n", err)
			return 1
		}
	}
	b.log.logf(logInfo, "%s is rank %d of %d (tbon.topo %s, quorum %d)", b.hostname, b.rank, b.size, b.topo.uri, b.quorum)
	if b.rank > 0 {
		go b.joinParent()
	} else {
		b.inbox.post(&msg{Type: mOnline, To: 0, From: 0, Rank: 0, Hostname: b.hostname, Cores: b.cores})
	}
	for {
		select {
		case s := <-sigs:
			b.onSignal(s.(syscall.Signal))
		case <-b.done:
			return b.finish()
		}
	}
}

func (b *broker) stopping() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == "shutdown"
}

// onSignal: SIGTERM, SIGINT or SIGHUP end the instance, as flux-core's
// deadly signals do (broker.c signal_cb, state_machine_kill). On rank 0 the
// initial program is aborted first, with SIGHUP whatever the signal was
// (runat.c's abort_signal), and its exit status becomes the broker's (129
// when it dies of it); elsewhere the broker shuts down and says goodbye to
// its parent, exiting 0.
func (b *broker) onSignal(s syscall.Signal) {
	b.log.logf(logNotice, "signal %d", int(s))
	b.mu.Lock()
	p := b.progProc
	b.mu.Unlock()
	if p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGHUP) // ESRCH: it is exiting; its Wait ends the instance
		return
	}
	b.shutdown(0, "signal")
}

// shutdown ends the broker once: tasks are killed, children told to leave
// and waited for (briefly), the parent told goodbye, then run returns code.
func (b *broker) shutdown(code int, reason string) {
	b.mu.Lock()
	if b.state == "shutdown" {
		b.mu.Unlock()
		return
	}
	b.state = "shutdown"
	b.exitCode = code
	kids := make([]*conn, 0, len(b.children))
	for _, k := range b.children {
		kids = append(kids, k)
	}
	b.mu.Unlock()
	b.log.logf(logInfo, "shutdown: %s", reason)
	if b.jobs != nil {
		b.jobs.shuttingDown()
	}
	b.exec.killAll()
	for _, k := range kids {
		k.send(&msg{Type: mShutdown})
	}
	go func() {
		deadline := time.After(10 * time.Second)
		for {
			b.mu.Lock()
			n := len(b.children)
			b.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-b.childGone:
				continue
			case <-deadline:
			}
			break
		}
		b.exec.wait(5 * time.Second)
		// What arrived before the shutdown (answers for local clients among
		// it) is handled before the broker goes.
		b.inbox.drain(2 * time.Second)
		b.mu.Lock()
		p := b.parent
		b.mu.Unlock()
		if p != nil {
			if code == 0 {
				p.send(&msg{Type: mGoodbye})
			}
			p.closeWait(time.Second)
		}
		b.doneOnce.Do(func() { close(b.done) })
	}()
}

// finish removes the local socket, dumps content if asked, and returns the
// exit status.
func (b *broker) finish() int {
	b.mu.Lock()
	if b.local != nil {
		// Best effort on the way out: nothing is left to report errors to.
		_ = b.local.Close()
		_ = os.Remove(b.localPath)
	}
	if b.listener != nil {
		_ = b.listener.Close()
	}
	code := b.exitCode
	clients := make([]*conn, 0, len(b.clients))
	for k := range b.clients {
		clients = append(clients, k)
	}
	b.mu.Unlock()
	// Answers already queued for clients are written before the exit.
	for _, k := range clients {
		k.closeWait(500 * time.Millisecond)
	}
	b.removeRundir()
	if b.contentDump != "" {
		if err := writeDump(b.contentDump); err != nil {
			_, _ = fmt.Fprintf(b.io.err, "flux-standin: flux-broker: content.dump: %s\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// enterRun opens the local socket and starts the initial program.
func (b *broker) enterRun() {
	b.mu.Lock()
	if b.state != "join" {
		b.mu.Unlock()
		return
	}
	b.state = "run"
	b.mu.Unlock()
	if err := b.openLocal(); err != nil {
		b.fatal(err)
		return
	}
	if b.program != nil || b.interactive {
		b.startProgram()
	}
}

// requestShutdown is flux shutdown: the initial program, if running, gets
// SIGHUP and its exit ends the instance; else the instance ends now.
func (b *broker) requestShutdown() {
	b.mu.Lock()
	p := b.progProc
	b.mu.Unlock()
	if p != nil {
		b.onSignal(1)
		return
	}
	go b.shutdown(0, "flux shutdown")
}
