package brokerconfig

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// TestDecode: a user's broker.toml decodes into the types that write one;
// the decoder names every key Flux refuses and keeps the others.
func TestDecode(t *testing.T) {
	type want struct {
		doc      *Document
		problems []Problem
	}
	s := func(v string) *string { return &v }
	i := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	boot := func(entry int, key string, kind ProblemKind, detail string) Problem {
		return Problem{Kind: kind, Table: "bootstrap", Entry: entry, Key: key, Detail: detail}
	}
	cases := map[string]struct {
		reason string
		doc    string
		want   want
	}{
		"Typed": {
			reason: "Every key Flux reads decodes into its field; other tables stay free-form.",
			doc: `[access]
allow-guest-user = true
roles = { user = ["a"] }
[tbon]
topo = "kary:2"
child_rcvhwm = 0
whatever = 1
[resource]
anything = [1, "two"]
[bootstrap]
curve_cert = "/c"
default_port = 8050
default_bind = "tcp://eth0:%p"
default_connect = "tcp://%h:%p"
enable_ipv6 = false
hosts = [ { host = "a-[0-3]", bind = "tcp://eth0:1", connect = "tcp://a-0:1" }, { host = "b", parent = "a-0" } ]
`,
			want: want{doc: &Document{
				Access: &Access{AllowGuestUser: true, Roles: map[string]any{"user": []any{"a"}}},
				Tbon:   &Tbon{Topo: s("kary:2"), ChildRcvHWM: i(0)},
				Bootstrap: &Bootstrap{
					CurveCert: s("/c"), DefaultPort: i(8050), DefaultBind: s("tcp://eth0:%p"), DefaultConnect: s("tcp://%h:%p"), EnableIPv6: b(false),
					Hosts: []Host{{Host: s("a-[0-3]"), Bind: s("tcp://eth0:1"), Connect: s("tcp://a-0:1")}, {Host: s("b"), Parent: s("a-0")}},
				},
			}},
		},
		"Absent": {
			reason: "Tables and keys the file does not have are nil: Flux tells them from empty ones.",
			doc:    "[bootstrap]\ncurve_cert = \"\"\n",
			want:   want{doc: &Document{Bootstrap: &Bootstrap{CurveCert: s("")}}},
		},
		"WrongTypes": {
			reason: "Each key of the wrong type is named, with the type Flux takes; the others decode.",
			doc:    "[bootstrap]\ncurve_cert = \"/c\"\ndefault_port = \"8050\"\nenable_ipv6 = 1\ndefault_bind = 1979-05-27\nhosts = [ { host = \"a\", connect = 8050, bind = {} } ]\n",
			want: want{
				doc: &Document{Bootstrap: &Bootstrap{CurveCert: s("/c"), Hosts: []Host{{Host: s("a")}}}},
				problems: []Problem{
					boot(NoEntry, "default_bind", WrongType, "[bootstrap] default_bind is a toml.LocalDate, and Flux refuses anything but a string"),
					boot(NoEntry, "default_port", WrongType, "[bootstrap] default_port is a string, and Flux refuses anything but an integer"),
					boot(NoEntry, "enable_ipv6", WrongType, "[bootstrap] enable_ipv6 is an integer, and Flux refuses anything but a boolean"),
					boot(0, "bind", WrongType, "[bootstrap] hosts[0].bind is a table, and Flux refuses anything but a string"),
					boot(0, "connect", WrongType, "[bootstrap] hosts[0].connect is an integer, and Flux refuses anything but a string"),
				},
			},
		},
		"UnknownKeys": {
			reason: "Flux refuses keys it does not know in [access], [bootstrap] and hosts entries, spelled in any case; [tbon] ignores them.",
			doc:    "[access]\nallow-guests = true\n[tbon]\nTopo = 3\n[bootstrap]\nCurve_Cert = \"/c\"\nhosts = [ { host = \"a\", port = 1, \"\" = 2 } ]\n",
			want: want{
				doc: &Document{Access: &Access{}, Tbon: &Tbon{}, Bootstrap: &Bootstrap{Hosts: []Host{{Host: s("a")}}}},
				problems: []Problem{
					{Kind: UnknownKey, Table: "access", Entry: NoEntry, Key: "allow-guests", Detail: `[access] has key "allow-guests", which Flux refuses: use only allow-guest-user, allow-root-owner, private-mode, roles`},
					boot(NoEntry, "Curve_Cert", UnknownKey, `[bootstrap] has key "Curve_Cert", which Flux refuses: use only hosts, curve_cert, default_port, default_bind, default_connect and enable_ipv6`),
					boot(0, "", UnknownKey, `[bootstrap] hosts[0] has key "", which Flux refuses: use host, bind, connect and parent`),
					boot(0, "port", UnknownKey, `[bootstrap] hosts[0] has key "port", which Flux refuses: use host, bind, connect and parent`),
				},
			},
		},
		"NotTables": {
			reason: "A table that is not one is refused as a whole, and so is a hosts entry.",
			doc:    "access = 1\ntbon = [1]\n[bootstrap]\nhosts = [ \"a\", [1], { host = \"b\" } ]\n",
			want: want{
				doc: &Document{Bootstrap: &Bootstrap{Hosts: []Host{{}, {}, {Host: s("b")}}}},
				problems: []Problem{
					{Kind: NotTable, Table: "access", Entry: NoEntry, Detail: "[access] must be a table"},
					{Kind: NotTable, Table: "tbon", Entry: NoEntry, Detail: "[tbon] must be a table"},
					boot(0, "", NotTable, `[bootstrap] hosts[0] must be a table such as { host = "name-[0-3]" }`),
					boot(1, "", NotTable, `[bootstrap] hosts[1] must be a table such as { host = "name-[0-3]" }`),
				},
			},
		},
		"HostsNotArray": {
			reason: "hosts is an array of tables, also when written as one table.",
			doc:    "[bootstrap.hosts]\nhost = \"a\"\n",
			want: want{
				doc:      &Document{Bootstrap: &Bootstrap{}},
				problems: []Problem{boot(NoEntry, "hosts", WrongType, `[bootstrap] hosts must be an array of tables such as { host = "name-[0-3]" }`)},
			},
		},
		"ArrayOfTables": {
			reason: "[[bootstrap.hosts]] is the same list as an inline array.",
			doc:    "[[bootstrap.hosts]]\nhost = \"a\"\n[[bootstrap.hosts]]\nhost = \"b\"\n",
			want:   want{doc: &Document{Bootstrap: &Bootstrap{Hosts: []Host{{Host: s("a")}, {Host: s("b")}}}}},
		},
		"EmptyHosts": {
			reason: "An empty hosts list is there, and empty.",
			doc:    "[bootstrap]\nhosts = []\n",
			want:   want{doc: &Document{Bootstrap: &Bootstrap{Hosts: []Host{}}}},
		},
		"BootstrapNotTable": {
			reason: "[[bootstrap]] is an array, not the table Flux reads.",
			doc:    "[[bootstrap]]\nhosts = 1\n",
			want: want{
				doc:      &Document{},
				problems: []Problem{boot(NoEntry, "", NotTable, "[bootstrap] must be a table")},
			},
		},
		"LocalTimeForBoolean": {
			reason: "The decoder panics on a local time for a boolean; it is a type Flux refuses like any other.",
			doc:    "[access]\nallow-root-owner = 07:32:00\n",
			want: want{
				doc:      &Document{Access: &Access{}},
				problems: []Problem{{Kind: WrongType, Table: "access", Entry: NoEntry, Key: "allow-root-owner", Detail: "[access] allow-root-owner is a toml.LocalTime, and Flux refuses anything but a boolean"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Decode([]byte(tc.doc))
			if err != nil {
				t.Fatalf("%s\nDecode(...): %v", tc.reason, err)
			}
			problems := got.Problems
			got.Problems = nil
			if diff := cmp.Diff(tc.want.doc, got); diff != "" {
				t.Errorf("%s\nDecode(...) values: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.problems, problems); diff != "" {
				t.Errorf("%s\nDecode(...) problems: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestKnownKeysAreTheStructs: the keys the messages tell the user to use
// are the tags of the structs that decode them.
func TestKnownKeysAreTheStructs(t *testing.T) {
	cases := map[string]struct {
		reason string
		table  table
		typ    reflect.Type
	}{
		"Access":    {reason: "[access]", table: accessTable, typ: reflect.TypeFor[Access]()},
		"Bootstrap": {reason: "[bootstrap]", table: bootstrapTable, typ: reflect.TypeFor[Bootstrap]()},
		"Host":      {reason: "a hosts entry", table: hostTable(0), typ: reflect.TypeFor[Host]()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			said := strings.FieldsFunc(strings.TrimPrefix(tc.table.known, "only "), func(r rune) bool { return r == ',' || r == ' ' })
			said = slices.DeleteFunc(said, func(w string) bool { return w == "and" })
			var tags []string
			for i := range tc.typ.NumField() {
				name, _, _ := strings.Cut(tc.typ.Field(i).Tag.Get("toml"), ",")
				tags = append(tags, name)
			}
			sort.Strings(said)
			sort.Strings(tags)
			if diff := cmp.Diff(tags, said); diff != "" {
				t.Errorf("%s: the message's keys differ from the struct's: -struct, +message:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecodeNotTOML: only a file that is not TOML is an error.
func TestDecodeNotTOML(t *testing.T) {
	if _, err := Decode([]byte("[bootstrap\nhosts = 1")); err == nil || !strings.Contains(err.Error(), "toml:") {
		t.Errorf("Decode(not TOML): want the decoder's error, got %v", err)
	}
}

// TestDecodeWhatBuildWrites: the file the function writes decodes, with
// no problem, into the configuration it was written from.
func TestDecodeWhatBuildWrites(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   Options
	}{
		"Root": {
			reason: "A root's one hosts entry.",
			opts:   Options{Paths: paths("/mnt/flux"), Service: "s", Namespace: "n", Hosts: hostlist.Root("flux-sample", 4, nil), QueuePolicy: "fcfs"},
		},
		"Burst": {
			reason: "A burst's lead entry with its URIs, then the rest.",
			opts: Options{Paths: paths("/mnt/flux"), Service: "burst-0", Namespace: "n", QueuePolicy: "easy",
				Hosts: hostlist.Burst(hostlist.Lead{Address: "10.0.0.1", Name: "flux-sample", Size: 4, Port: 30093}, []hostlist.Cluster{{Name: "burst-0", Size: 2}})},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Build(tc.opts)
			b, err := c.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("%s\nDecode(...): %v", tc.reason, err)
			}
			want := &Document{Access: &c.Access, Bootstrap: &c.Bootstrap}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nDecode(Build(...).Marshal()): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// FuzzDecode: any TOML decodes without a panic, and a key Flux refuses is
// never also a decoded value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"[access]\nallow-guest-user = 1\nx = 2\n",
		"[tbon]\nzmqdebug = true\ntopo = {}\n",
		"[bootstrap]\ndefault_port = \"1\"\nhosts = [ { host = 1 }, 2, { port = 3 } ]\n",
		"[[bootstrap.hosts]]\nhost = \"a\"\n",
		"[bootstrap]\nenable_ipv6 = 07:32:00\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		d, err := Decode([]byte(doc))
		if err != nil {
			return
		}
		for _, p := range d.Problems {
			if p.Kind == WrongType && p.Table == "bootstrap" && p.Entry == NoEntry && p.Key == "default_port" && d.Bootstrap.DefaultPort != nil {
				t.Errorf("default_port both refused and decoded: %v", p)
			}
			if p.Kind == WrongType && p.Table == "bootstrap" && p.Entry >= 0 && p.Key == "host" && d.Bootstrap.Hosts[p.Entry].Host != nil {
				t.Errorf("hosts[%d].host both refused and decoded: %v", p.Entry, p)
			}
		}
	})
}
