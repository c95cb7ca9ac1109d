package hostlist

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	type want struct {
		hosts []string
		err   string
	}
	cases := map[string]struct {
		reason string
		list   string
		want   want
	}{
		"Range":        {reason: "A compressed range expands in order.", list: "flux-sample-[0-3]", want: want{hosts: []string{"flux-sample-0", "flux-sample-1", "flux-sample-2", "flux-sample-3"}}},
		"Single":       {reason: "A single index in brackets.", list: "a-[0]", want: want{hosts: []string{"a-0"}}},
		"Plain":        {reason: "A plain hostname is one host.", list: "login1", want: want{hosts: []string{"login1"}}},
		"Mixed":        {reason: "Ranges, single numbers and plain hosts mix.", list: "a-[0,2-3],b,c-[5]", want: want{hosts: []string{"a-0", "a-2", "a-3", "b", "c-5"}}},
		"Padded":       {reason: "Zero padding is kept.", list: "node[08-10]-ib", want: want{hosts: []string{"node08-ib", "node09-ib", "node10-ib"}}},
		"Burst":        {reason: "What the function writes for a burst root.", list: "flux-sample-[0-1],burst-0-[0-1]", want: want{hosts: []string{"flux-sample-0", "flux-sample-1", "burst-0-0", "burst-0-1"}}},
		"Empty":        {reason: "An empty list has no host.", list: " ", want: want{err: "is empty"}},
		"Unclosed":     {reason: "A bracket must close.", list: "a-[0-3", want: want{err: "unclosed bracket"}},
		"Backwards":    {reason: "A range ends after it starts.", list: "a-[3-0]", want: want{err: "ends before it starts"}},
		"NotANumber":   {reason: "Ranges hold numbers.", list: "a-[x]", want: want{err: "expected a number"}},
		"EmptyHost":    {reason: "Two commas in a row leave an empty host.", list: "a,,b", want: want{err: "empty host"}},
		"TwoBrackets":  {reason: "Flux takes one bracketed range per host.", list: "a[0-1]b[0-1]", want: want{err: "more than one bracketed range"}},
		"Space":        {reason: "Hostnames have no spaces.", list: "a b", want: want{err: "malformed host"}},
		"HugeRange":    {reason: "A typo such as [0-99999999] is refused, not expanded.", list: "a-[0-99999999]", want: want{err: "more than"}},
		"StrayClosing": {reason: "A closing bracket without an opening one.", list: "a]", want: want{err: "malformed host"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := Parse(tc.list)
			got := want{}
			if err != nil {
				got.err = err.Error()
				if !strings.Contains(got.err, tc.want.err) || tc.want.err == "" {
					t.Errorf("%s\nParse(%q): want error containing %q, got %v", tc.reason, tc.list, tc.want.err, err)
				}
				return
			}
			l.Each(func(h string) bool { got.hosts = append(got.hosts, h); return true })
			if diff := cmp.Diff(tc.want.hosts, got.hosts); diff != "" {
				t.Errorf("%s\nParse(%q): -want, +got:\n%s", tc.reason, tc.list, diff)
			}
			if l.Len() != len(got.hosts) {
				t.Errorf("%s\nLen() = %d, want %d", tc.reason, l.Len(), len(got.hosts))
			}
			for _, h := range got.hosts {
				if !l.Contains(h) {
					t.Errorf("%s\nContains(%q) = false for a host of the list", tc.reason, h)
				}
			}
		})
	}
}

func TestContainsNotIn(t *testing.T) {
	l, err := Parse("flux-sample-[0-3],node[08-10]")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"flux-sample-4", "flux-sample-01", "flux-sample-", "node8", "node11", "other"} {
		if l.Contains(h) {
			t.Errorf("Contains(%q) = true, want false", h)
		}
	}
}

// TestRootParses: every list the function writes parses back to the same
// hosts in rank order.
func TestRootParses(t *testing.T) {
	h := Root("flux-sample", 3, []Cluster{{Name: "burst-0", Size: 2}})
	l, err := Parse(h.All)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	l.Each(func(s string) bool { got = append(got, s); return true })
	want := []string{"flux-sample-0", "flux-sample-1", "flux-sample-2", "burst-0-0", "burst-0-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Root(...).All parsed: -want, +got:\n%s", diff)
	}
}

func TestMissing(t *testing.T) {
	cases := map[string]struct {
		reason string
		lists  []string
		n      int32
		want   string
	}{
		"All":       {reason: "A range that holds every pod.", lists: []string{"flux-sample-[0-3]"}, n: 4, want: ""},
		"Split":     {reason: "Pods may be spread over entries and lists.", lists: []string{"flux-sample-[0,2]", "x,flux-sample-1,flux-sample-[3-9]"}, n: 4, want: ""},
		"Short":     {reason: "The first pod the lists lack.", lists: []string{"flux-sample-[0-2]"}, n: 4, want: "flux-sample-3"},
		"Padded":    {reason: "flux-sample-01 is not flux-sample-1.", lists: []string{"flux-sample-[00-03]"}, n: 2, want: "flux-sample-0"},
		"Prefix":    {reason: "Digits in the prefix continue the index.", lists: []string{"flux-sample-[0-9],flux-sample-1[0-1]"}, n: 12, want: ""},
		"OtherName": {reason: "Another cluster's hosts do not count.", lists: []string{"burst-0-[0-3]"}, n: 1, want: "flux-sample-0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lists []List
			for _, s := range tc.lists {
				l, err := Parse(s)
				if err != nil {
					t.Fatal(err)
				}
				lists = append(lists, l)
			}
			if got := Missing("flux-sample", tc.n, lists...); got != tc.want {
				t.Errorf("%s\nMissing(...) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// BenchmarkMissingWorstCase is a list of many single numbers against the
// largest cluster: linear, not hosts × entries.
func BenchmarkMissingWorstCase(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("flux-sample-[")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(i * 50))
	}
	sb.WriteString("]")
	l, err := Parse(sb.String())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		_ = Missing("flux-sample", 100000, l)
	}
}
