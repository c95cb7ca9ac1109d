package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// openLocal creates the broker's local socket (local-uri). Until then
// `test -S` fails, which is what a readiness probe waits for.
func (b *broker) openLocal() error {
	_ = os.Remove(b.localPath) // a stale socket of an earlier broker; if it stays, Listen says so
	l, err := net.Listen("unix", b.localPath)
	if err != nil {
		return fmt.Errorf("local-uri %s: %s", b.localPath, errnoText(err))
	}
	// Clients of other users (sidecars) connect too: the double has no
	// access control, as an instance with allow-guest-user lets them in.
	// Best effort: this user's clients connect regardless.
	_ = os.Chmod(b.localPath, 0o777) //nolint:gosec // G302: a socket all local users may connect to, as said above
	b.mu.Lock()
	b.local = l
	b.mu.Unlock()
	b.log.logf(logInfo, "local socket %s is up", b.localPath)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go b.serveClient(c)
		}
	}()
	return nil
}

// localOps are answered by any broker; the rest only by rank 0.
var localOps = map[string]bool{opPing: true, opGetattr: true, opLsattr: true, opUptime: true, opModule: true}

// serveClient answers one request of a client of the local socket.
func (b *broker) serveClient(c net.Conn) {
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	if err != nil {
		_ = c.Close() // the client is gone or broken; nothing to tell it
		return
	}
	k := newConn(c)
	b.mu.Lock()
	b.clients[k] = true
	b.mu.Unlock()
	go func() {
		<-k.gone
		b.mu.Lock()
		delete(b.clients, k)
		b.mu.Unlock()
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		k.send(response{Error: "malformed request", Final: true})
		k.close()
		return
	}
	// The client going away cancels what it waits for.
	gone := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		for {
			if _, err := r.Read(buf); err != nil {
				close(gone)
				return
			}
		}
	}()
	reply := func(resp response) {
		k.send(resp)
		if resp.Final {
			k.close()
		}
	}
	switch {
	case localOps[req.Op]:
		reply(b.serveLocalOp(&req))
	case b.rank == 0:
		b.jobs.serve(&req, gone, reply)
	default:
		b.mu.Lock()
		b.relaySeq++
		id := b.relaySeq
		b.relays[id] = k
		b.mu.Unlock()
		b.route(&msg{Type: mRPC, To: 0, From: b.rank, RPC: id, Req: line})
		go func() {
			<-gone
			b.mu.Lock()
			_, pending := b.relays[id]
			delete(b.relays, id)
			b.mu.Unlock()
			if pending {
				b.route(&msg{Type: mRPCGone, To: 0, From: b.rank, RPC: id})
			}
		}()
	}
}

// deliverRelay passes an answer from rank 0 to the client that asked.
func (b *broker) deliverRelay(m *msg) {
	b.mu.Lock()
	k := b.relays[m.RPC]
	if m.Final {
		delete(b.relays, m.RPC)
	}
	b.mu.Unlock()
	if k == nil {
		return
	}
	var resp response
	_ = json.Unmarshal(m.Resp, &resp) // rank 0 marshalled it from a response
	k.send(resp)
	if m.Final {
		k.close()
	}
}

// serveRemote answers, on rank 0, a request relayed from another rank.
func (b *broker) serveRemote(m *msg) {
	var req request
	if err := json.Unmarshal(m.Req, &req); err != nil {
		return
	}
	from, id := m.From, m.RPC
	gone := b.jobs.remoteRegister(from, id)
	b.jobs.serve(&req, gone, func(resp response) {
		raw, _ := json.Marshal(resp)
		if resp.Final {
			go b.jobs.remoteGone(from, id) // reply may run under jm.mu
		}
		b.route(&msg{Type: mRPCResp, To: from, From: 0, RPC: id, Resp: raw, Final: resp.Final})
	})
}

func remoteKey(rank int, id uint64) string {
	return strconv.Itoa(rank) + "/" + strconv.FormatUint(id, 10)
}

func (jm *jobManager) remoteRegister(rank int, id uint64) chan struct{} {
	ch := make(chan struct{})
	jm.mu.Lock()
	jm.remote[remoteKey(rank, id)] = ch
	jm.mu.Unlock()
	return ch
}

func (jm *jobManager) remoteGone(rank int, id uint64) {
	jm.mu.Lock()
	ch := jm.remote[remoteKey(rank, id)]
	delete(jm.remote, remoteKey(rank, id))
	jm.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// serveLocalOp answers what this broker knows itself.
func (b *broker) serveLocalOp(req *request) response {
	switch req.Op {
	case opPing:
		return response{Value: fmt.Sprintf("rank %d (%s)", b.rank, b.hostname), Final: true}
	case opGetattr:
		v, ok := b.attrs[req.Name]
		if !ok {
			return response{Error: req.Name + ": No such file or directory", Final: true}
		}
		return response{Value: v, Final: true}
	case opLsattr:
		return response{Attrs: b.attrs, Final: true}
	case opUptime:
		b.mu.Lock()
		st := b.state
		b.mu.Unlock()
		return response{Value: fmt.Sprintf("%s %s %s", st, formatFSD(time.Since(b.startTime)), b.attrs["size"]), Final: true}
	case opModule:
		return b.module(req)
	}
	return response{Error: "unknown request", Final: true}
}

// module records flux module load/remove; nothing is loaded. The list
// starts with sched-simple, standing for the double's own FCFS scheduler,
// which keeps scheduling whatever is recorded.
func (b *broker) module(req *request) response {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch req.Name {
	case "list":
		return response{Modules: append([]string{}, b.modules...), Final: true}
	case "load":
		for _, m := range b.modules {
			if m == req.Args[0] {
				return response{Error: req.Args[0] + ": File exists", Final: true}
			}
		}
		b.modules = append(b.modules, req.Args[0])
		b.log.logf(logInfo, "module %s recorded as loaded; nothing loaded: the double has no modules", req.Args[0])
		return response{Final: true}
	case "remove":
		for i, m := range b.modules {
			if m == req.Args[0] {
				b.modules = append(b.modules[:i], b.modules[i+1:]...)
				return response{Final: true}
			}
		}
		return response{Error: req.Args[0] + ": No such file or directory", Final: true}
	}
	return response{Error: "unknown module request", Final: true}
}
