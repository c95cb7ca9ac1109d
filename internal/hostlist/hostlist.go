// Package hostlist computes the Flux host lists of a MiniCluster: the hosts
// its brokers bootstrap from and its resource set is encoded for. Ranks are
// positions in the list, so every cluster that joins an instance must compute
// exactly the same list.
package hostlist

import (
	"strconv"
	"strings"
)

// Range is the compressed Flux hostlist of n hosts prefix-start..prefix-(start+n-1),
// e.g. flux-sample-[0-3]. It stays short whatever n is.
func Range(prefix string, start, n int32) string {
	if n <= 0 {
		return ""
	}
	if n == 1 {
		return prefix + "-[" + strconv.Itoa(int(start)) + "]"
	}
	return prefix + "-[" + strconv.Itoa(int(start)) + "-" + strconv.Itoa(int(start+n-1)) + "]"
}

// Cluster is a group of hosts named <Name>-<index>.
type Cluster struct {
	Name string
	Size int32
}

// Lead is the root cluster's rank-0 broker as a burst cluster reaches it.
type Lead struct {
	Address string
	Name    string
	Size    int32
	Port    int32
}

// Hosts is the host list of one cluster of an instance.
type Hosts struct {
	// All is the whole list, in rank order, for the resource set (R).
	All string
	// Lead is set for a burst cluster: rank 0, reached at an address
	// rather than by its hostname.
	Lead *Lead
	// Rest is the list without rank 0, for a burst cluster.
	Rest string
}

// Root is the host list of a root cluster: its own maxSize hosts, then every
// cluster that may join it.
func Root(name string, maxSize int32, clusters []Cluster) Hosts {
	parts := []string{Range(name, 0, maxSize)}
	parts = append(parts, ranges(clusters)...)
	return Hosts{All: strings.Join(parts, ",")}
}

// Burst is the host list of a cluster that joins the root named by lead:
// rank 0 is replaced by the lead's address, the other ranks keep the root's
// hostnames, then the clusters follow in the root's order.
func Burst(lead Lead, clusters []Cluster) Hosts {
	rest := []string{}
	if lead.Size > 1 {
		rest = append(rest, Range(lead.Name, 1, lead.Size-1))
	}
	rest = append(rest, ranges(clusters)...)
	l := lead
	return Hosts{
		All:  strings.Join(append([]string{lead.Address}, rest...), ","),
		Lead: &l,
		Rest: strings.Join(rest, ","),
	}
}

// Custom is a host list given verbatim.
func Custom(list string) Hosts {
	return Hosts{All: list}
}

func ranges(clusters []Cluster) []string {
	out := make([]string, 0, len(clusters))
	for _, c := range clusters {
		if r := Range(c.Name, 0, c.Size); r != "" {
			out = append(out, r)
		}
	}
	return out
}
