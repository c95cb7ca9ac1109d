package hostlist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRange(t *testing.T) {
	cases := map[string]struct {
		reason   string
		prefix   string
		start, n int32
		want     string
	}{
		"One":      {reason: "A single host keeps the bracket form Flux accepts.", prefix: "flux-sample", n: 1, want: "flux-sample-[0]"},
		"Four":     {reason: "Hosts are numbered from start.", prefix: "flux-sample", n: 4, want: "flux-sample-[0-3]"},
		"Offset":   {reason: "A burst cluster skips the root's rank 0.", prefix: "flux-sample", start: 1, n: 3, want: "flux-sample-[1-3]"},
		"Huge":     {reason: "The list stays compressed however large the cluster.", prefix: "big", n: 10000, want: "big-[0-9999]"},
		"Empty":    {reason: "No hosts is an empty list.", prefix: "x", n: 0, want: ""},
		"Negative": {reason: "A negative count is an empty list, not a reversed range.", prefix: "x", n: -1, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Range(tc.prefix, tc.start, tc.n); got != tc.want {
				t.Errorf("%s\nRange(%q, %d, %d) = %q, want %q", tc.reason, tc.prefix, tc.start, tc.n, got, tc.want)
			}
		})
	}
}

func TestHosts(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    Hosts
		want   Hosts
	}{
		"RootAlone": {
			reason: "A root without bursting lists its maxSize hosts.",
			got:    Root("flux-sample", 4, nil),
			want:   Hosts{All: "flux-sample-[0-3]"},
		},
		"RootWithClusters": {
			reason: "A root lists the clusters that may join after its own hosts (reference A.5).",
			got:    Root("flux-sample", 4, []Cluster{{Name: "burst-0", Size: 4}}),
			want:   Hosts{All: "flux-sample-[0-3],burst-0-[0-3]"},
		},
		"Burst": {
			reason: "A burst replaces the root's rank 0 by the lead's address and keeps the rest in the same order.",
			got:    Burst(Lead{Address: "34.171.113.254", Name: "flux-sample", Size: 4, Port: 30093}, []Cluster{{Name: "burst-0", Size: 4}}),
			want: Hosts{
				All:  "34.171.113.254,flux-sample-[1-3],burst-0-[0-3]",
				Lead: &Lead{Address: "34.171.113.254", Name: "flux-sample", Size: 4, Port: 30093},
				Rest: "flux-sample-[1-3],burst-0-[0-3]",
			},
		},
		"BurstOfSingleRoot": {
			reason: "A root of size one has no other ranks to list.",
			got:    Burst(Lead{Address: "10.0.0.1", Name: "root", Size: 1, Port: 8050}, []Cluster{{Name: "b", Size: 2}}),
			want: Hosts{
				All:  "10.0.0.1,b-[0-1]",
				Lead: &Lead{Address: "10.0.0.1", Name: "root", Size: 1, Port: 8050},
				Rest: "b-[0-1]",
			},
		},
		"Custom": {
			reason: "A custom list is used verbatim.",
			got:    Custom("flux-sample-[0-3],gffw-compute-a-[001-003]"),
			want:   Hosts{All: "flux-sample-[0-3],gffw-compute-a-[001-003]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
