package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// What the control plane's processes use, for load tests.

// Pids returns the process id of every running process, by name.
func (cp *ControlPlane) Pids() map[string]int {
	m := map[string]int{}
	ps := []*process{cp.etcd, cp.apiserver, cp.kcm, cp.crossplane, cp.function}
	if n := cp.node; n != nil {
		ps = append(ps, n.containerd, n.coredns, n.scheduler, n.kubelet)
	}
	if k := cp.kueue; k != nil {
		ps = append(ps, k.proc)
	}
	for _, p := range ps {
		if p != nil && p.pid() != 0 && p.alive() == nil {
			m[p.name] = p.pid()
		}
	}
	return m
}

// Usage is what a process has used so far, from /proc.
type Usage struct {
	// CPU is user plus system CPU time (utime + stime of /proc/PID/stat).
	CPU time.Duration
	// RSS is the resident set size now (VmRSS), PeakRSS its high-water mark
	// (VmHWM), in bytes.
	RSS, PeakRSS int64
	// RSSAnon and RSSFile split RSS: anonymous memory (the heap, stacks)
	// and file pages (mostly the binary's own code and data).
	RSSAnon, RSSFile int64
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports (the kernel ABI fixes it, whatever
// CONFIG_HZ is).
const clockTicks = 100

// ProcessUsage reads a process's CPU time and memory from /proc (Linux).
func ProcessUsage(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return u, err
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so
	// count fields after the last ')'. utime and stime are fields 14 and
	// 15, i.e. 12th and 13th after the comm.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: only %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	u.CPU = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &u.RSS
		case "VmHWM":
			dst = &u.PeakRSS
		case "RssAnon":
			dst = &u.RSSAnon
		case "RssFile":
			dst = &u.RSSFile
		default:
			continue
		}
		fs := strings.Fields(v) // "12345 kB"
		if len(fs) != 2 || fs[1] != "kB" {
			return u, fmt.Errorf("/proc/%d/status: %s: unexpected value %q", pid, k, v)
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status: %s: %w", pid, k, err)
		}
		*dst = n * 1024
	}
	return u, nil
}
