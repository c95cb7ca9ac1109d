package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// pingInterval is how often each side of an overlay connection writes, so
// the other can tell a silent (vanished) peer from an idle one.
const pingInterval = 2 * time.Second

// bind listens for children on this rank's bind URI.
func (b *broker) bind() error {
	uri := b.boot.Hosts[b.rank].Bind
	if uri == "" {
		return fmt.Errorf("bind URI is undefined for rank %d", b.rank)
	}
	addr, err := bindAddress(uri, b.boot.EnableIPv6)
	if err != nil {
		return err
	}
	network := "tcp4"
	if b.boot.EnableIPv6 {
		network = "tcp"
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return fmt.Errorf("error binding to %s: %s", uri, errnoText(err))
	}
	b.listener = l
	b.attrs["tbon.endpoint"] = b.boot.Hosts[b.rank].Connect
	b.log.logf(logDebug, "listening for children on %s (%s)", uri, l.Addr())
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go b.serveChild(c)
		}
	}()
	return nil
}

// serveChild runs one child's connection: hello, checked as the overlay's
// hello handler checks it, then its messages until it goes.
func (b *broker) serveChild(c net.Conn) {
	r := bufio.NewReader(c)
	// Deadlines fail only on a closed connection, which the read then reports.
	_ = c.SetReadDeadline(time.Now().Add(b.connectTimeout + 10*time.Second))
	line, err := r.ReadBytes('\n')
	var h msg
	if err != nil || json.Unmarshal(line, &h) != nil || h.Type != mHello {
		_ = c.Close() // not a child of ours: dropped
		return
	}
	k := newConn(c)
	reject := func(reason string) {
		b.log.logf(logErr, "rejecting connection from %s (rank %d): %s", h.Hostname, h.Rank, reason)
		k.send(&msg{Type: mReject, Error: reason})
		k.close()
	}
	switch {
	case h.Version != versionLine:
		reject(fmt.Sprintf("version %q does not match this broker's %q", h.Version, versionLine))
		return
	case h.Rank < 1 || h.Rank >= b.size:
		reject(fmt.Sprintf("rank %d is not a child of rank %d: mismatched config?", h.Rank, b.rank))
		return
	case h.Hostname != b.boot.Hosts[h.Rank].Host:
		reject(fmt.Sprintf("%s is configured as rank %d: mismatched config?", b.boot.Hosts[h.Rank].Host, h.Rank))
		return
	case b.topo.parent[h.Rank] != b.rank:
		reject(fmt.Sprintf("rank %d is not a child of rank %d: mismatched config?", h.Rank, b.rank))
		return
	}
	b.mu.Lock()
	if b.state == "shutdown" {
		b.mu.Unlock()
		reject("broker is shutting down")
		return
	}
	if old := b.children[h.Rank]; old != nil {
		b.log.logf(logErr, "%s (rank %d) reconnected after crash, dropping old connection state", h.Hostname, h.Rank)
		old.close()
	}
	b.children[h.Rank] = k
	delete(b.goodbye, h.Rank)
	b.mu.Unlock()
	k.send(&msg{Type: mWelcome})
	b.log.logf(logInfo, "accepting connection from %s (rank %d) status full", h.Hostname, h.Rank)
	b.route(&msg{Type: mOnline, To: 0, From: b.rank, Rank: h.Rank, Hostname: h.Hostname, Cores: h.Cores})

	var heard atomic.Int64
	heard.Store(time.Now().UnixNano())
	stop := make(chan struct{})
	go b.watchPeer(c, &heard, stop, func() { k.send(&msg{Type: mPing}) })
	_ = c.SetReadDeadline(time.Time{})
	err = readLines(r, func(m *msg) {
		heard.Store(time.Now().UnixNano())
		switch m.Type {
		case mPing:
		case mGoodbye:
			b.mu.Lock()
			b.goodbye[h.Rank] = true
			b.mu.Unlock()
		default:
			b.route(m)
		}
	})
	close(stop)
	k.close()

	b.mu.Lock()
	mine := b.children[h.Rank] == k
	clean := b.goodbye[h.Rank]
	if mine {
		delete(b.children, h.Rank)
	}
	b.mu.Unlock()
	if !mine {
		return // replaced by a reconnection
	}
	if clean {
		b.log.logf(logDebug, "%s (rank %d) said goodbye", h.Hostname, h.Rank)
	} else {
		b.log.logf(logErr, "%s (rank %d) transitioning to LOST due to %s", h.Hostname, h.Rank, describeEOF(err))
	}
	b.route(&msg{Type: mLost, To: 0, From: b.rank, Rank: h.Rank, Status: boolInt(clean)})
	select {
	case b.childGone <- struct{}{}:
	default:
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

func describeEOF(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return "EOF"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(err.Error(), "EOF"):
		return "EOF"
	}
	return err.Error()
}

// watchPeer pings the peer and closes c when nothing came from it for the
// peer timeout (tbon.tcp_user_timeout), as a dead peer behind a dropped
// network sends no FIN.
func (b *broker) watchPeer(c net.Conn, heard *atomic.Int64, stop chan struct{}, ping func()) {
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ping()
			if time.Since(time.Unix(0, heard.Load())) > b.peerTimeout {
				_ = c.Close() // the peer is presumed dead; the reader sees the close
				return
			}
		}
	}
}

// joinParent connects to the parent's connect URI, resolving its host
// through DNS, retrying for ever with each attempt bounded by
// tbon.connect_timeout, as a broker's ZeroMQ DEALER socket does; then says
// hello and serves the connection. Losing it ends the broker.
func (b *broker) joinParent() {
	parent := b.topo.parent[b.rank]
	uri := b.boot.Hosts[parent].Connect
	if uri == "" {
		b.fatal(fmt.Errorf("connect URI is undefined for rank %d", parent))
		return
	}
	host, port, err := splitTCP(uri)
	if err != nil {
		b.fatal(err)
		return
	}
	if _, err := net.LookupHost(host); err != nil && net.ParseIP(host) == nil {
		b.log.logf(logWarning, "unable to resolve upstream peer %s: %s", host, lookupText(err))
	}
	network := "tcp4"
	if b.boot.EnableIPv6 {
		network = "tcp"
	}
	var c net.Conn
	for attempt := 1; ; attempt++ {
		if b.stopping() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.connectTimeout)
		c, err = (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(host, port))
		cancel()
		if err == nil {
			break
		}
		if attempt == 1 || attempt%30 == 0 {
			b.log.logf(logInfo, "connecting to parent %s (rank %d) at %s: %s; retrying (attempt %d)", b.boot.Hosts[parent].Host, parent, uri, lookupText(err), attempt)
		}
		// ZeroMQ retries every 100ms; a little slower here, and backing
		// off, spares the cluster DNS while the parent's pod is not there.
		time.Sleep(min(time.Duration(attempt)*200*time.Millisecond, 2*time.Second))
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetKeepAlive(true) // best effort: watchPeer's pings find a dead parent anyway
	}
	b.log.logf(logDebug, "connected to parent %s (rank %d) at %s", b.boot.Hosts[parent].Host, parent, uri)
	r := bufio.NewReader(c)
	hello, _ := json.Marshal(&msg{Type: mHello, Rank: b.rank, Hostname: b.hostname, Version: versionLine, Cores: b.cores})
	// Deadlines fail only on a closed connection, which the write or read
	// then reports.
	_ = c.SetDeadline(time.Now().Add(b.connectTimeout + 10*time.Second))
	if _, err := c.Write(append(hello, '\n')); err != nil {
		b.lostParent(err)
		return
	}
	line, err := r.ReadBytes('\n')
	var m msg
	if err != nil || json.Unmarshal(line, &m) != nil {
		_ = c.Close() // the broker exits on it
		b.lostParent(err)
		return
	}
	_ = c.SetDeadline(time.Time{})
	if m.Type != mWelcome {
		_ = c.Close() // rejected: the broker exits on it
		b.fatal(fmt.Errorf("overlay.hello: %s", m.Error))
		return
	}
	k := newConn(c)
	b.mu.Lock()
	b.parent = k
	if b.state == "join" {
		b.state = "run"
	}
	q := b.upQueue
	b.upQueue = nil
	b.mu.Unlock()
	for _, m := range q {
		k.send(m)
	}
	b.log.logf(logInfo, "joined parent %s (rank %d)", b.boot.Hosts[parent].Host, parent)
	if err := b.openLocal(); err != nil {
		b.fatal(err)
		return
	}
	var heard atomic.Int64
	heard.Store(time.Now().UnixNano())
	stop := make(chan struct{})
	go b.watchPeer(c, &heard, stop, func() { k.send(&msg{Type: mPing}) })
	err = readLines(r, func(m *msg) {
		heard.Store(time.Now().UnixNano())
		switch m.Type {
		case mPing:
		case mShutdown:
			b.shutdown(0, "parent says shutdown")
		default:
			b.route(m)
		}
	})
	close(stop)
	if !b.stopping() {
		b.lostParent(err)
	}
}

func lookupText(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsNotFound {
			return "Name or service not known"
		}
		return de.Err
	}
	return errnoText(err)
}

// lostParent ends a follower whose parent went away, non-zero, as a Flux
// broker leaves after parent-fail.
func (b *broker) lostParent(err error) {
	// Printed whatever log-stderr-level says: it is why the broker exits.
	_, _ = fmt.Fprintf(b.io.err, "flux-standin: flux-broker: lost connection to parent (rank %d): %s\n", b.topo.parent[b.rank], describeEOF(err))
	b.shutdown(1, "lost parent")
}

// fatal ends the broker on an error, exit status 1.
func (b *broker) fatal(err error) {
	_, _ = fmt.Fprintf(b.io.err, "flux-standin: flux-broker: %s\n", err)
	b.shutdown(1, err.Error())
}
