package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestREncode(t *testing.T) {
	cases := map[string]struct {
		reason  string
		args    []string
		want    string
		wantErr string
	}{
		"Hosts": {
			reason: "One rank per host, core 0 each when nothing else is said.",
			args:   []string{"--hosts=flux-sample-[0-3]"},
			want:   `{"version": 1, "execution": {"R_lite": [{"rank": "0-3", "children": {"core": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["flux-sample-[0-3]"]}}`,
		},
		"CoresAndGPUs": {
			reason: "--cores and --gpus give every rank those ids.",
			args:   []string{"-H", "a,b", "-c", "0-3", "-g", "0"},
			want:   `{"version": 1, "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0-3", "gpu": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["a,b"]}}`,
		},
		"OneCore": {
			reason: "The runner's cpu: 1 is --cores=0.",
			args:   []string{"--hosts=flux-sample-[0-1]", "--cores=0"},
			want:   `{"version": 1, "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["flux-sample-[0-1]"]}}`,
		},
		"RangeOfOne": {
			reason:  "flux's idset_decode refuses 0-0: a range must ascend.",
			args:    []string{"--cores=0-0"},
			wantErr: "invalid idset: 0-0",
		},
		"Ranks": {
			reason: "--ranks picks the ranks; hosts follow in order.",
			args:   []string{"--ranks=2-3", "--hosts=n-[5-6]"},
			want:   `{"version": 1, "execution": {"R_lite": [{"rank": "2-3", "children": {"core": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["n-[5-6]"]}}`,
		},
		"BurstHosts": {
			reason: "A burst cluster's list starts with an address; neighbours with one prefix share a bracket.",
			args:   []string{"--hosts=34.171.113.254,flux-sample-[1-3],burst-0-[0-3]"},
			want:   `{"version": 1, "execution": {"R_lite": [{"rank": "0-7", "children": {"core": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["34.171.113.254,flux-sample-[1-3],burst-0-[0-3]"]}}`,
		},
		"LocalWithCores": {
			reason:  "--local finds the cores itself.",
			args:    []string{"--local", "--cores=0-1"},
			wantErr: "do not specify --cores or --gpus with --local",
		},
		"Mismatch": {
			reason:  "As many hosts as ranks.",
			args:    []string{"--ranks=0-2", "--hosts=a,b"},
			wantErr: "Number of hosts (2) must match number of ranks (3)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parseOpts("flux R encode", optTables["flux R encode"], tc.args)
			must(t, err)
			got, err := rEncode(o)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("%s\nnot JSON: %s", tc.reason, got)
			}
		})
	}
}

// TestRLocal is what the runner script does on every pod: the local
// topology for every host, readable back with the right ranks and hosts.
func TestRLocal(t *testing.T) {
	o, err := parseOpts("flux R encode", optTables["flux R encode"], []string{"--hosts=flux-sample-[0-2]", "--local"})
	must(t, err)
	out, err := rEncode(o)
	must(t, err)
	rs, err := decodeR([]byte(out))
	must(t, err)
	n := localCores()
	var got []string
	for _, r := range rs {
		if len(r.Cores) != n {
			t.Errorf("rank %d has %d cores, want the local %d", r.Rank, len(r.Cores), n)
		}
		got = append(got, r.Host)
	}
	if diff := cmp.Diff([]string{"flux-sample-0", "flux-sample-1", "flux-sample-2"}, got); diff != "" {
		t.Errorf("hosts: -want, +got:\n%s", diff)
	}
}

func TestEncodeHostlist(t *testing.T) {
	cases := map[string]struct {
		in   string
		want string
	}{
		"Range":     {in: "n-0 n-1 n-2", want: "n-[0-2]"},
		"Single":    {in: "n-4", want: "n-4"},
		"Gap":       {in: "n-0 n-1 n-3", want: "n-[0-1,3]"},
		"Padded":    {in: "node01 node02", want: "node[01-02]"},
		"Plain":     {in: "login a-1", want: "login,a-1"},
		"Prefixes":  {in: "a-1 a-2 b-0", want: "a-[1-2],b-0"},
		"Unordered": {in: "n-3 n-1", want: "n-[3,1]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, encodeHostlist(strings.Fields(tc.in))); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

func TestJobID(t *testing.T) {
	t.Setenv("LANG", "C")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_CTYPE", "")
	for _, id := range []uint64{1, 57, 58, 1 << 40, 1<<63 + 12345} {
		s := f58(id)
		if !strings.HasPrefix(s, "f") {
			t.Errorf("f58(%d) = %q: the C locale writes f", id, s)
		}
		for _, in := range []string{s, "ƒ" + s[1:]} {
			got, err := parseJobID(in)
			if err != nil || got != id {
				t.Errorf("parseJobID(%q) = %d, %v; want %d", in, got, err, id)
			}
		}
	}
	t.Setenv("LANG", "en_US.UTF-8")
	if s := f58(58); s != "ƒ21" {
		t.Errorf("f58(58) in a UTF-8 locale = %q, want ƒ21", s)
	}
}

// TestRDecodeCount is what the runner does to put GPUs on the node's
// cores: count the cores of flux R encode --local.
func TestRDecodeCount(t *testing.T) {
	r := `{"version": 1, "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0-3", "gpu": "0-1"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["a,b"]}}`
	for typ, want := range map[string]string{"core": "8\n", "gpu": "4\n", "node": "2\n"} {
		var out, errb strings.Builder
		if code := run([]string{"R", "decode", "--count=" + typ}, stdio{strings.NewReader(r), &out, &errb}); code != 0 {
			t.Fatalf("flux R decode --count=%s: exit %d: %s", typ, code, errb.String())
		}
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("--count=%s: -want, +got:\n%s", typ, diff)
		}
	}
	var out, errb strings.Builder
	if code := run([]string{"R", "decode", "--count=core"}, stdio{strings.NewReader(""), &out, &errb}); code == 0 {
		t.Errorf("an empty R is counted (%q): flux refuses it", out.String())
	}
}
