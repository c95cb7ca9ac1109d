package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// rRank is one rank of an R resource set (RFC 20, version 1).
type rRank struct {
	Rank  int
	Host  string
	Cores []int
	GPUs  []int
}

// encodeR writes ranks as rlist_encode does: R_lite groups ranks with the
// same children, and json_dumps(o, 0)'s ", " and ": " separators.
func encodeR(ranks []rRank) string {
	type group struct {
		ranks     []int
		core, gpu string
	}
	var groups []*group
	byKey := map[string]*group{}
	var hosts []string
	for _, r := range ranks {
		core, gpu := encodeIDSet(r.Cores), encodeIDSet(r.GPUs)
		k := core + "/" + gpu
		g, ok := byKey[k]
		if !ok {
			g = &group{core: core, gpu: gpu}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.ranks = append(g.ranks, r.Rank)
		hosts = append(hosts, r.Host)
	}
	var lite []string
	for _, g := range groups {
		children := fmt.Sprintf(`"core": %q`, g.core)
		if g.gpu != "" {
			children += fmt.Sprintf(`, "gpu": %q`, g.gpu)
		}
		lite = append(lite, fmt.Sprintf(`{"rank": %q, "children": {%s}}`, encodeIDSet(g.ranks), children))
	}
	return fmt.Sprintf(`{"version": 1, "execution": {"R_lite": [%s], "starttime": 0.0, "expiration": 0.0, "nodelist": [%q]}}`,
		strings.Join(lite, ", "), encodeHostlist(hosts))
}

// decodeR reads an R version 1 object back into its ranks.
func decodeR(b []byte) ([]rRank, error) {
	var r struct {
		Version   int `json:"version"`
		Execution struct {
			RLite []struct {
				Rank     string            `json:"rank"`
				Children map[string]string `json:"children"`
			} `json:"R_lite"`
			Nodelist []string `json:"nodelist"`
		} `json:"execution"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Version != 1 {
		return nil, fmt.Errorf("R version %d is not 1", r.Version)
	}
	var hosts []string
	for _, hl := range r.Execution.Nodelist {
		h, err := hostlist.Expand(hl)
		if err != nil {
			return nil, fmt.Errorf("nodelist %q: %s", hl, err)
		}
		hosts = append(hosts, h...)
	}
	var out []rRank
	for _, e := range r.Execution.RLite {
		ranks, err := parseIDSet(e.Rank)
		if err != nil {
			return nil, err
		}
		cores, err := parseIDSet(e.Children["core"])
		if err != nil {
			return nil, err
		}
		gpus, err := parseIDSet(e.Children["gpu"])
		if err != nil {
			return nil, err
		}
		for _, rk := range ranks {
			out = append(out, rRank{Rank: rk, Cores: cores, GPUs: gpus})
		}
	}
	for i := range out {
		if out[i].Rank < len(hosts) {
			out[i].Host = hosts[out[i].Rank]
		}
	}
	return out, nil
}

// encodeHostlist compresses hosts in order as flux's hostlist_encode does:
// neighbours with the same prefix share one bracket, consecutive numbers
// form ranges: flux-sample-[0-3],login1.
func encodeHostlist(hosts []string) string {
	type hr struct {
		prefix string
		lo, hi int
		width  int // digits, when zero-padded; 0 otherwise
		num    bool
	}
	var rs []hr
	for _, h := range hosts {
		i := len(h)
		for i > 0 && h[i-1] >= '0' && h[i-1] <= '9' {
			i--
		}
		if i == len(h) || len(h)-i > 9 {
			rs = append(rs, hr{prefix: h})
			continue
		}
		n, _ := strconv.Atoi(h[i:])
		w := 0
		if h[i] == '0' && len(h)-i > 1 {
			w = len(h) - i
		}
		if l := len(rs) - 1; l >= 0 && rs[l].num && rs[l].prefix == h[:i] && rs[l].width == w && rs[l].hi+1 == n {
			rs[l].hi = n
			continue
		}
		rs = append(rs, hr{prefix: h[:i], lo: n, hi: n, width: w, num: true})
	}
	num := func(n, w int) string { return fmt.Sprintf("%0*d", w, n) }
	var out []string
	for i := 0; i < len(rs); {
		r := rs[i]
		if !r.num {
			out = append(out, r.prefix)
			i++
			continue
		}
		j := i
		var parts []string
		for ; j < len(rs) && rs[j].num && rs[j].prefix == r.prefix; j++ {
			p := num(rs[j].lo, rs[j].width)
			if rs[j].hi != rs[j].lo {
				p += "-" + num(rs[j].hi, rs[j].width)
			}
			parts = append(parts, p)
		}
		if j == i+1 && r.lo == r.hi {
			out = append(out, r.prefix+parts[0])
		} else {
			out = append(out, r.prefix+"["+strings.Join(parts, ",")+"]")
		}
		i = j
	}
	return strings.Join(out, ",")
}

// cmdR is flux R; encode, and decode's --count.
func cmdR(args []string, io stdio) int {
	if len(args) > 0 && args[0] == "decode" {
		return cmdRDecode(args[1:], io)
	}
	if len(args) == 0 || args[0] != "encode" {
		what := "flux R"
		if len(args) > 0 {
			what += " " + args[0]
		}
		return fail(io, notImplemented(what))
	}
	o, err := parseOpts("flux R encode", optTables["flux R encode"], args[1:])
	if err != nil {
		return fail(io, err)
	}
	out, err := rEncode(o)
	if err != nil {
		return fail(io, fmt.Errorf("flux-R: %s", err))
	}
	_, _ = fmt.Fprintln(io.out, out)
	return 0
}

// rEncode is cmd_encode of flux-R.c: ranks from --ranks, else one per host
// of --hosts, else 0; hosts from --hosts, else this host for every rank;
// cores from --cores (default 0) or, with --local, this machine's.
func rEncode(o opts) (string, error) {
	if len(o.rest) > 0 {
		return "", fmt.Errorf("unexpected argument %q", o.rest[0])
	}
	cores, gpus := o.last("cores", ""), o.last("gpus", "")
	if cores == "" && gpus == "" {
		cores = "0"
	} else if o.has("local") {
		return "", fmt.Errorf("do not specify --cores or --gpus with --local")
	}
	var hosts []string
	if h := o.last("hosts", ""); h != "" {
		var err error
		if hosts, err = hostlist.Expand(h); err != nil {
			return "", fmt.Errorf("invalid hostlist %q: %s", h, err)
		}
	}
	var ranks []int
	if r := o.last("ranks", ""); r != "" {
		var err error
		if ranks, err = parseIDSet(r); err != nil {
			return "", err
		}
	} else if len(hosts) > 0 {
		for i := range hosts {
			ranks = append(ranks, i)
		}
	} else {
		ranks = []int{0}
	}
	if len(hosts) == 0 {
		h, _ := os.Hostname()
		for range ranks {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) != len(ranks) {
		return "", fmt.Errorf("Number of hosts (%d) must match number of ranks (%d)", len(hosts), len(ranks))
	}
	coreIDs, err := parseIDSet(cores)
	if err != nil {
		return "", err
	}
	gpuIDs, err := parseIDSet(gpus)
	if err != nil {
		return "", err
	}
	if o.has("local") {
		coreIDs = nil
		for i := 0; i < localCores(); i++ {
			coreIDs = append(coreIDs, i)
		}
	}
	var rs []rRank
	for i, r := range ranks {
		rs = append(rs, rRank{Rank: r, Host: hosts[i], Cores: coreIDs, GPUs: gpuIDs})
	}
	return encodeR(rs), nil
}

// cmdRDecode is cmd_decode of flux-R.c as far as --count goes: the number
// of nodes, cores or GPUs of the R read on stdin.
func cmdRDecode(args []string, io stdio) int {
	o, err := parseOpts("flux R decode", optTables["flux R decode"], args)
	if err != nil {
		return fail(io, err)
	}
	if len(o.rest) > 0 {
		return fail(io, fmt.Errorf("flux-R: unexpected argument %q", o.rest[0]))
	}
	typ := o.last("count", "")
	if typ == "" {
		return fail(io, notImplemented("flux R decode without --count"))
	}
	b, err := readAll(io.in)
	if err != nil {
		return fail(io, err)
	}
	rs, err := decodeR(b)
	if err != nil {
		return fail(io, fmt.Errorf("flux-R: Failed to read an R object: %s", err))
	}
	n := 0
	for _, r := range rs {
		switch typ {
		case "node":
			n++
		case "core":
			n += len(r.Cores)
		case "gpu":
			n += len(r.GPUs)
		}
	}
	_, _ = fmt.Fprintln(io.out, n)
	return 0
}

func readAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(r)
}
