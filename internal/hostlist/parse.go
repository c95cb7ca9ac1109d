package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds what a parsed list may hold: more hosts than any Flux
// instance of MiniClusters can have means a typo such as [0-99999999]. It
// also bounds the work of Missing.
const MaxHosts = 1 << 20

// List is a parsed Flux host list: entries such as flux-sample-[0-3,7],
// login1 or node[01-12]-ib, in rank order.
type List struct {
	entries []entry
}

type entry struct {
	prefix, suffix string
	// ranges is nil for a plain hostname.
	ranges []numRange
}

type numRange struct {
	lo, hi int
	// width is the zero padding of the range's numbers (node[01-12]).
	width int
}

// Parse reads a host list the way Flux's hostlist library does: hosts
// separated by commas, each a name with at most one bracketed list of
// numbers and ranges (N or N-M, the same zero padding on both ends).
func Parse(s string) (List, error) {
	var l List
	if strings.TrimSpace(s) == "" {
		return l, fmt.Errorf("is empty")
	}
	total := 0
	for _, tok := range splitTop(s) {
		e, err := parseEntry(strings.TrimSpace(tok))
		if err != nil {
			return List{}, err
		}
		total += e.count()
		if total > MaxHosts {
			return List{}, fmt.Errorf("has more than %d hosts", MaxHosts)
		}
		l.entries = append(l.entries, e)
	}
	return l, nil
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseEntry(tok string) (entry, error) {
	if tok == "" {
		return entry{}, fmt.Errorf("has an empty host (two commas in a row, or a comma at an end)")
	}
	open := strings.IndexByte(tok, '[')
	if open < 0 {
		if strings.ContainsAny(tok, "] \t\n") {
			return entry{}, fmt.Errorf("has a malformed host %q", tok)
		}
		return entry{prefix: tok}, nil
	}
	closing := strings.IndexByte(tok, ']')
	if closing < open {
		return entry{}, fmt.Errorf("has an unclosed bracket in %q", tok)
	}
	e := entry{prefix: tok[:open], suffix: tok[closing+1:]}
	if strings.ContainsAny(e.suffix, "[]") {
		return entry{}, fmt.Errorf("has more than one bracketed range in %q", tok)
	}
	if strings.ContainsAny(e.prefix+e.suffix, " \t\n") {
		return entry{}, fmt.Errorf("has a malformed host %q", tok)
	}
	for _, part := range strings.Split(tok[open+1:closing], ",") {
		r, err := parseRange(part)
		if err != nil {
			return entry{}, fmt.Errorf("has a bad range %q in %q: %v", part, tok, err)
		}
		e.ranges = append(e.ranges, r)
	}
	return e, nil
}

func parseRange(s string) (numRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	a, err := number(lo)
	if err != nil {
		return numRange{}, err
	}
	b, err := number(hi)
	if err != nil {
		return numRange{}, err
	}
	if b < a {
		return numRange{}, fmt.Errorf("the range ends before it starts")
	}
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	return numRange{lo: a, hi: b, width: width}, nil
}

func number(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("expected a number of at most 9 digits")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("expected a number")
		}
	}
	return strconv.Atoi(s)
}

func (e entry) count() int {
	if e.ranges == nil {
		return 1
	}
	n := 0
	for _, r := range e.ranges {
		n += r.hi - r.lo + 1
	}
	return n
}

// Len is the number of hosts.
func (l List) Len() int {
	n := 0
	for _, e := range l.entries {
		n += e.count()
	}
	return n
}

// Contains tells whether host is in the list.
func (l List) Contains(host string) bool {
	for _, e := range l.entries {
		if e.ranges == nil {
			if e.prefix == host {
				return true
			}
			continue
		}
		if !strings.HasPrefix(host, e.prefix) || !strings.HasSuffix(host, e.suffix) || len(host) < len(e.prefix)+len(e.suffix)+1 {
			continue
		}
		digits := host[len(e.prefix) : len(host)-len(e.suffix)]
		n, err := number(digits)
		if err != nil {
			continue
		}
		for _, r := range e.ranges {
			if n >= r.lo && n <= r.hi && (r.width == 0 && (digits == strconv.Itoa(n)) || r.width == len(digits)) {
				return true
			}
		}
	}
	return false
}

// Each calls fn with every host in rank order until fn returns false.
func (l List) Each(fn func(host string) bool) {
	for _, e := range l.entries {
		if e.ranges == nil {
			if !fn(e.prefix) {
				return
			}
			continue
		}
		for _, r := range e.ranges {
			for n := r.lo; n <= r.hi; n++ {
				num := strconv.Itoa(n)
				if len(num) < r.width {
					num = strings.Repeat("0", r.width-len(num)) + num
				}
				if !fn(e.prefix + num + e.suffix) {
					return
				}
			}
		}
	}
}

// Expand returns every host of the list s in rank order.
func Expand(s string) ([]string, error) {
	l, err := Parse(s)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, l.Len())
	l.Each(func(h string) bool { out = append(out, h); return true })
	return out, nil
}

// Missing returns the first of the hosts <prefix>-0 … <prefix>-<n-1> that
// none of lists holds, or "" when they hold them all. Its work is linear in
// the hosts of the lists and n, whatever their shape.
func Missing(prefix string, n int32, lists ...List) string {
	seen := make([]bool, max(n, 0))
	p := prefix + "-"
	for _, l := range lists {
		l.Each(func(h string) bool {
			if rest, ok := strings.CutPrefix(h, p); ok {
				if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < len(seen) && strconv.Itoa(i) == rest {
					seen[i] = true
				}
			}
			return true
		})
	}
	for i, ok := range seen {
		if !ok {
			return p + strconv.Itoa(i)
		}
	}
	return ""
}
