package main

import (
	"fmt"
	"strconv"
	"strings"
)

// topology is the TBON tree: the parent of every rank, -1 for rank 0.
// It follows src/modules/overlay/topology.c of flux-core 0.88.
type topology struct {
	uri    string
	parent []int
}

// topoURI is the tbon.topo a broker uses, in ovconf_topo's order of
// precedence: the tbon.topo attribute, else tbon.fanout=K as kary:K, else
// [tbon] topo, else custom with a [bootstrap] table, else kary:32.
func topoURI(attrs map[string]string, confTopo string, boot bootstrap) string {
	if v, ok := attrs["tbon.topo"]; ok {
		return v
	}
	if v, ok := attrs["tbon.fanout"]; ok {
		return "kary:" + v
	}
	if confTopo != "" {
		return confTopo
	}
	if boot.Defined {
		return "custom"
	}
	return "kary:32"
}

// newTopology builds the tree of uri over hosts. Rank 0 is every rank's
// parent unless the scheme says otherwise.
func newTopology(uri string, hosts []hostEntry) (*topology, error) {
	size := len(hosts)
	t := &topology{uri: uri, parent: make([]int, size)}
	t.parent[0] = -1
	fail := func(format string, args ...any) (*topology, error) {
		return nil, fmt.Errorf("Error creating %s topology: %s", uri, fmt.Sprintf(format, args...))
	}
	name, path, hasPath := strings.Cut(uri, ":")
	switch name {
	case "kary":
		k, err := strconv.ParseUint(path, 10, 31)
		if !hasPath || err != nil {
			return fail("kary k value must be an integer >= 0")
		}
		if k > 0 {
			for i := 1; i < size; i++ {
				t.parent[i] = karyParent(int(k), i)
			}
		}
	case "custom":
		if path != "" {
			return fail("unknown custom topology directive: '%s'", path)
		}
		for rank, h := range hosts {
			if h.Parent == "" {
				continue
			}
			if rank == 0 {
				return fail("Config file [bootstrap] hosts: rank 0 (%s) may not have a parent in a tree topology", h.Host)
			}
			p := bootstrap{Hosts: hosts}.rankOf(h.Parent)
			if p < 0 {
				return fail("Config file [bootstrap] hosts: invalid parent \"%s\" for %s (rank %d)", h.Parent, h.Host, rank)
			}
			if p == rank || t.isDescendant(p, rank) {
				return fail("Config file [bootstrap] hosts: parent \"%s\" for %s (rank %d) violates rule against cycles", h.Parent, h.Host, rank)
			}
			t.parent[rank] = p
		}
	case "mincrit", "binomial":
		return nil, notImplemented("tbon.topo " + name)
	default:
		return fail("unknown topology scheme '%s'", name)
	}
	return t, nil
}

// karyParent is kary_parentof of libutil/kary.c.
func karyParent(k, i int) int {
	if k == 1 {
		return i - 1
	}
	return (k+(i+1)-2)/k - 1
}

// isDescendant tells whether rank a is below rank b.
func (t *topology) isDescendant(a, b int) bool {
	for p := t.parent[a]; p >= 0; p = t.parent[p] {
		if p == b {
			return true
		}
		if p == a {
			return false // a cycle through a: not below b
		}
	}
	return false
}

// children are the ranks whose parent is r, in rank order.
func (t *topology) children(r int) []int {
	var out []int
	for i, p := range t.parent {
		if p == r {
			out = append(out, i)
		}
	}
	return out
}

// subtree is r and every rank below it, in rank order.
func (t *topology) subtree(r int) []int {
	var out []int
	for i := range t.parent {
		if i == r || t.isDescendant(i, r) {
			out = append(out, i)
		}
	}
	return out
}

// toward is the child of me through which a message reaches dst, or -1
// when dst is not below me (it goes to me's parent).
func (t *topology) toward(me, dst int) int {
	for n := dst; n >= 0 && n < len(t.parent); n = t.parent[n] {
		if t.parent[n] == me {
			return n
		}
	}
	return -1
}

// level is r's depth: 0 for rank 0.
func (t *topology) level(r int) int {
	l := 0
	for p := t.parent[r]; p >= 0; p = t.parent[p] {
		l++
	}
	return l
}
