package main

import (
	"fmt"
	"sort"
	"strings"
)

// cmdResource is flux resource list (and info), from R and the ranks up.
func cmdResource(args []string, io stdio) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "info") {
		return fail(io, notImplemented("flux resource "+strings.Join(args, " ")))
	}
	o, err := parseOpts("flux resource "+args[0], optTables["flux resource list"], args[1:])
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, notImplemented("flux resource "+args[0]+" "+o.rest[0]))
	}
	r, err := call1(request{Op: opResources})
	if err != nil {
		return fail(io, fmt.Errorf("flux-resource: %s", err))
	}
	def := "free,allocated,down"
	if args[0] == "info" {
		def = "all"
	}
	states := strings.Split(o.last("states", def), ",")
	type row struct {
		nnodes, ncores, ngpus int
		hosts                 []string
	}
	rows := map[string]*row{}
	add := func(state string, rr rankResources, cores int) {
		x := rows[state]
		if x == nil {
			x = &row{}
			rows[state] = x
		}
		x.nnodes++
		x.ncores += cores
		x.ngpus += rr.GPUs
		x.hosts = append(x.hosts, rr.Host)
	}
	for _, rr := range r.Resources.Ranks {
		add("all", rr, rr.Cores)
		if !rr.Up {
			add("down", rr, rr.Cores)
			continue
		}
		add("up", rr, rr.Cores)
		if rr.Allocated < rr.Cores {
			add("free", rr, rr.Cores-rr.Allocated)
		}
		if rr.Allocated > 0 {
			add("allocated", rr, rr.Allocated)
		}
	}
	if args[0] == "info" {
		x := rows[states[0]]
		if x == nil {
			x = &row{}
		}
		_, _ = fmt.Fprintf(io.out, "%d Nodes, %d Cores, %d GPUs\n", x.nnodes, x.ncores, x.ngpus)
		return 0
	}
	if !o.has("no-header") {
		_, _ = fmt.Fprintf(io.out, "%10s %6s %6s %5s %s\n", "STATE", "NNODES", "NCORES", "NGPUS", "NODELIST")
	}
	for _, s := range states {
		switch s {
		case "free", "allocated", "down", "up", "all":
		default:
			return fail(io, fmt.Errorf("flux-resource: Invalid resource state %s specified", s))
		}
		x := rows[s]
		if x == nil {
			if o.has("skip-empty") {
				continue
			}
			x = &row{}
		}
		_, _ = fmt.Fprintf(io.out, "%10s %6d %6d %5d %s\n", s, x.nnodes, x.ncores, x.ngpus, encodeHostlist(x.hosts))
	}
	return 0
}

// cmdOverlay is flux overlay status: the tree, each rank with its subtree's
// status (full, partial, degraded, lost, offline).
func cmdOverlay(args []string, io stdio) int {
	if len(args) == 0 || args[0] != "status" {
		return fail(io, notImplemented("flux overlay "+strings.Join(args, " ")))
	}
	o, err := parseOpts("flux overlay status", optTables["flux overlay status"], args[1:])
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, notImplemented("flux overlay status "+o.rest[0]))
	}
	r, err := call1(request{Op: opOverlay})
	if err != nil {
		return fail(io, fmt.Errorf("flux-overlay: %s", err))
	}
	kids := map[int][]overlayNode{}
	for _, n := range r.Overlay {
		kids[n.Parent] = append(kids[n.Parent], n)
	}
	var walk func(n overlayNode, indent string, connector string)
	walk = func(n overlayNode, indent, connector string) {
		if o.has("no-pretty") {
			indent, connector = "", ""
		}
		_, _ = fmt.Fprintf(io.out, "%s%s%d %s: %s\n", indent, connector, n.Rank, n.Host, n.Status)
		if n.Status == "offline" || n.Status == "lost" {
			return
		}
		cs := kids[n.Rank]
		sort.Slice(cs, func(i, j int) bool { return cs[i].Rank < cs[j].Rank })
		next := indent
		switch connector {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, c := range cs {
			conn := "├─ "
			if i == len(cs)-1 {
				conn = "└─ "
			}
			walk(c, next, conn)
		}
	}
	for _, n := range kids[-1] {
		walk(n, "", "")
	}
	return 0
}
