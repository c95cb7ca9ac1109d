package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"sync"
	"time"
)

// msg is one line of the overlay protocol: JSON, one message a line. The
// protocol is the double's own; only its shape follows Flux's (hello,
// routed messages, shutdown).
type msg struct {
	Type string `json:"type"`
	// To is the rank a routed message is for; From the rank it comes from.
	To   int `json:"to"`
	From int `json:"from"`

	// hello, online
	Rank     int    `json:"rank,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Version  string `json:"version,omitempty"`
	Cores    int    `json:"cores,omitempty"`
	Error    string `json:"error,omitempty"`

	// run, kill, output, exit
	Job    uint64    `json:"job,omitempty"`
	Task   *taskSpec `json:"task,omitempty"`
	Signal int       `json:"signal,omitempty"`
	Stream string    `json:"stream,omitempty"`
	TaskID int       `json:"taskid,omitempty"`
	Data   []byte    `json:"data,omitempty"`
	Status int       `json:"status,omitempty"`

	// rpc, rpc-resp: a client request relayed to rank 0, and its answers.
	RPC   uint64          `json:"rpc,omitempty"`
	Req   json.RawMessage `json:"req,omitempty"`
	Resp  json.RawMessage `json:"resp,omitempty"`
	Final bool            `json:"final,omitempty"`
}

// Message types.
const (
	mHello    = "hello"    // child to parent, first line
	mWelcome  = "welcome"  // parent to child: accepted
	mReject   = "reject"   // parent to child: refused, with Error
	mPing     = "ping"     // both ways, so a silent peer is noticed
	mGoodbye  = "goodbye"  // child to parent: leaving on purpose
	mShutdown = "shutdown" // parent to child: leave
	mOnline   = "online"   // routed to 0: Rank joined
	mLost     = "lost"     // routed to 0: Rank and its subtree are gone
	mRun      = "run"      // routed to a rank: start a job's tasks
	mKill     = "kill"     // routed to a rank: signal a job's tasks
	mOutput   = "output"   // routed to 0: task output
	mExit     = "exit"     // routed to 0: a rank's tasks of a job are done
	mRPC      = "rpc"      // routed to 0: a client request
	mRPCResp  = "rpc-resp" // routed to the client's rank: an answer
	mRPCGone  = "rpc-gone" // routed to 0: the client of an rpc went away
)

// conn is one overlay connection. Writes are queued and sent by their own
// goroutine, so that no reader ever blocks on a slow peer: two brokers that
// both forward to each other cannot deadlock.
type conn struct {
	c      net.Conn
	mu     sync.Mutex
	queue  []any
	wake   chan struct{}
	closed bool
	gone   chan struct{} // closed when the writer has stopped
}

func newConn(c net.Conn) *conn {
	k := &conn{c: c, wake: make(chan struct{}, 1), gone: make(chan struct{})}
	go k.writer()
	return k
}

// send queues m (a *msg, or a response to a client) to be written as one
// JSON line. After close, or a failed write, it is dropped.
func (k *conn) send(m any) {
	k.mu.Lock()
	if !k.closed {
		k.queue = append(k.queue, m)
	}
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

func (k *conn) writer() {
	defer close(k.gone)
	w := bufio.NewWriter(k.c)
	enc := json.NewEncoder(w)
	for range k.wake {
		k.mu.Lock()
		q := k.queue
		k.queue = nil
		closed := k.closed
		k.mu.Unlock()
		failed := false
		for _, m := range q {
			if enc.Encode(m) != nil {
				failed = true
				break
			}
		}
		if failed || w.Flush() != nil {
			k.mu.Lock()
			k.closed, k.queue = true, nil
			k.mu.Unlock()
			_ = k.c.Close() // the write failed already: the peer is gone
			return
		}
		if closed {
			_ = k.c.Close() // everything queued is flushed; nothing is lost
			return
		}
	}
}

// close sends what is queued, then closes.
func (k *conn) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// closeWait closes, waiting at most d for what is queued to be written.
func (k *conn) closeWait(d time.Duration) {
	k.close()
	select {
	case <-k.gone:
	case <-time.After(d):
	}
}

// readLines calls fn with every message read from r until it fails.
func readLines(r io.Reader, fn func(*msg)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return err
		}
		fn(&m)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}
