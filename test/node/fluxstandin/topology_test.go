package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hostsN(n int) []hostEntry {
	var h []hostEntry
	for i := 0; i < n; i++ {
		h = append(h, hostEntry{Host: fmt.Sprintf("n-%d", i)})
	}
	return h
}

func TestTopology(t *testing.T) {
	withParents := hostsN(5)
	withParents[3].Parent, withParents[4].Parent = "n-1", "n-3"
	cycle := hostsN(3)
	cycle[1].Parent, cycle[2].Parent = "n-2", "n-1"
	rootParent := hostsN(2)
	rootParent[0].Parent = "n-1"
	cases := map[string]struct {
		reason     string
		attrs      map[string]string
		confTopo   string
		defined    bool
		hosts      []hostEntry
		wantURI    string
		wantParent []int
		wantErr    string
	}{
		"ScriptsFanout": {
			reason:     "The scripts pass tbon.fanout=256: kary:256, so up to 257 brokers all hang off rank 0.",
			attrs:      map[string]string{"tbon.fanout": "256"},
			defined:    true,
			hosts:      hostsN(4),
			wantURI:    "kary:256",
			wantParent: []int{-1, 0, 0, 0},
		},
		"TopoAttrBeatsFanout": {
			reason:     "tbon.topo on the command line wins over tbon.fanout (spec.flux.topology).",
			attrs:      map[string]string{"tbon.fanout": "256", "tbon.topo": "kary:2"},
			defined:    true,
			hosts:      hostsN(7),
			wantURI:    "kary:2",
			wantParent: []int{-1, 0, 0, 1, 1, 2, 2},
		},
		"Binary": {
			reason:     "kary:1 is a chain.",
			attrs:      map[string]string{"tbon.topo": "kary:1"},
			hosts:      hostsN(3),
			wantURI:    "kary:1",
			wantParent: []int{-1, 0, 1},
		},
		"Flat": {
			reason:     "kary:0 is flat.",
			attrs:      map[string]string{"tbon.topo": "kary:0"},
			hosts:      hostsN(3),
			wantURI:    "kary:0",
			wantParent: []int{-1, 0, 0},
		},
		"CustomDefault": {
			reason:     "With [bootstrap] and no tbon option, custom: rank 0 is everyone's parent unless a parent key says otherwise.",
			defined:    true,
			hosts:      withParents,
			wantURI:    "custom",
			wantParent: []int{-1, 0, 0, 1, 3},
		},
		"ConfigTopo": {
			reason:     "[tbon] topo applies when no attribute is given.",
			confTopo:   "kary:3",
			defined:    true,
			hosts:      hostsN(5),
			wantURI:    "kary:3",
			wantParent: []int{-1, 0, 0, 0, 1},
		},
		"PMIDefault": {
			reason:     "Without [bootstrap], kary:32.",
			hosts:      hostsN(1),
			wantURI:    "kary:32",
			wantParent: []int{-1},
		},
		"BadK": {
			reason:  "k must be a number.",
			attrs:   map[string]string{"tbon.topo": "kary:two"},
			hosts:   hostsN(2),
			wantErr: "Error creating kary:two topology: kary k value must be an integer >= 0",
		},
		"UnknownScheme": {
			reason:  "Only Flux's schemes.",
			attrs:   map[string]string{"tbon.topo": "ring:2"},
			hosts:   hostsN(2),
			wantErr: "Error creating ring:2 topology: unknown topology scheme 'ring'",
		},
		"Cycle": {
			reason:  "Parent keys may not make a cycle.",
			defined: true,
			hosts:   cycle,
			wantErr: `Error creating custom topology: Config file [bootstrap] hosts: parent "n-1" for n-2 (rank 2) violates rule against cycles`,
		},
		"RootWithParent": {
			reason:  "Rank 0 is the root.",
			defined: true,
			hosts:   rootParent,
			wantErr: "Error creating custom topology: Config file [bootstrap] hosts: rank 0 (n-0) may not have a parent in a tree topology",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			attrs := tc.attrs
			if attrs == nil {
				attrs = map[string]string{}
			}
			uri := topoURI(attrs, tc.confTopo, bootstrap{Defined: tc.defined, Hosts: tc.hosts})
			topo, err := newTopology(uri, tc.hosts)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.wantURI, uri); diff != "" {
				t.Errorf("%s\ntbon.topo: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantParent, topo.parent); diff != "" {
				t.Errorf("%s\nparents: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRouting(t *testing.T) {
	topo, err := newTopology("kary:2", hostsN(7))
	must(t, err)
	cases := map[string]struct {
		reason string
		me     int
		dst    int
		want   int
	}{
		"DownTwoLevels":  {reason: "Rank 0 reaches rank 5 through rank 2.", me: 0, dst: 5, want: 2},
		"DirectChild":    {reason: "Rank 1 reaches rank 4 directly.", me: 1, dst: 4, want: 4},
		"NotBelow":       {reason: "Rank 1 sends rank 5's message up.", me: 1, dst: 5, want: -1},
		"Root":           {reason: "Everything for rank 0 goes up.", me: 3, dst: 0, want: -1},
		"SubtreeOfRank2": {reason: "subtree sanity: rank 6 is below 2.", me: 2, dst: 6, want: 6},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, topo.toward(tc.me, tc.dst)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if diff := cmp.Diff([]int{1, 3, 4}, topo.subtree(1)); diff != "" {
		t.Errorf("subtree(1): -want, +got:\n%s", diff)
	}
}

func TestRankOf(t *testing.T) {
	var conf = map[string]any{"bootstrap": map[string]any{"curve_cert": "/c", "hosts": []any{map[string]any{"host": "flux-sample-[0-3]"}}}}
	cases := map[string]struct {
		reason   string
		hostname string
		want     int
	}{
		"Lead":   {reason: "flux-sample-0 is rank 0.", hostname: "flux-sample-0", want: 0},
		"Last":   {reason: "Ranks are positions in the expanded list.", hostname: "flux-sample-3", want: 3},
		"Middle": {reason: "flux-sample-2 is rank 2.", hostname: "flux-sample-2", want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := parseBootstrap(conf, tc.hostname)
			must(t, err)
			if diff := cmp.Diff(tc.want, b.rankOf(tc.hostname)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
