package brokerconfig

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Document is what flux-core 0.88 reads of a broker.toml while the brokers
// start, decoded into the types that write it: [access] (connector-local),
// [tbon] (the overlay module) and [bootstrap]. A table or key the file does
// not have is nil; one Flux refuses is nil too, and a Problem says why.
// Flux reads other tables later, or not at all: they stay free-form.
type Document struct {
	Access    *Access
	Tbon      *Tbon
	Bootstrap *Bootstrap
	// Problems are the tables and keys Flux refuses, in the order of
	// [access], [tbon] and [bootstrap], each table's keys sorted, and
	// [bootstrap] hosts last, entry by entry.
	Problems []Problem
}

// Tbon is the [tbon] table the overlay module reads. Flux ignores keys it
// does not know here, so decoding does too.
type Tbon struct {
	Topo           *string `toml:"topo"`
	InterfaceHint  *string `toml:"interface-hint"`
	TorpidMin      *string `toml:"torpid_min"`
	TorpidMax      *string `toml:"torpid_max"`
	TCPUserTimeout *string `toml:"tcp_user_timeout"`
	ConnectTimeout *string `toml:"connect_timeout"`
	ZMQDebug       *int64  `toml:"zmqdebug"`
	ChildRcvHWM    *int64  `toml:"child_rcvhwm"`
	ZMQIOThreads   *int64  `toml:"zmq_io_threads"`
}

// Problem is a table or key of a broker.toml that Flux refuses.
type Problem struct {
	Kind ProblemKind
	// Table is the top-level table: access, tbon or bootstrap.
	Table string
	// Entry is the index in [bootstrap] hosts, or NoEntry.
	Entry int
	// Key is the key of Table or of the entry; "" for a NotTable.
	Key string
	// Detail says what Flux refuses and what it takes instead.
	Detail string
}

// ProblemKind is what Flux refuses.
type ProblemKind int

const (
	// NotTable is a table, or an entry of [bootstrap] hosts, that is not
	// a table.
	NotTable ProblemKind = iota
	// UnknownKey is a key Flux does not know.
	UnknownKey
	// WrongType is a key whose value Flux does not unpack.
	WrongType
)

// NoEntry is the Entry of a Problem outside [bootstrap] hosts.
const NoEntry = -1

// Refuses tells whether d refuses the key of table (at entry): TOML keys
// may be "", so RefusesTable asks about the table itself.
func (d *Document) Refuses(table string, entry int, key string) bool {
	for _, p := range d.Problems {
		if p.Kind != NotTable && p.Table == table && p.Entry == entry && p.Key == key {
			return true
		}
	}
	return false
}

// RefusesTable tells whether d refuses table (or its hosts entry) as not
// a table.
func (d *Document) RefusesTable(table string, entry int) bool {
	for _, p := range d.Problems {
		if p.Kind == NotTable && p.Table == table && p.Entry == entry {
			return true
		}
	}
	return false
}

// table is how problems name a table (or a hosts entry) of the file.
type table struct {
	name  string // top-level table
	entry int    // index in [bootstrap] hosts, or NoEntry
	where string // "[access]", "[bootstrap] hosts[0]"
	sep   string // between where and a key: "[access] key", "[bootstrap] hosts[0].key"
	// known lists the keys Flux accepts, for the message about another;
	// "" when Flux ignores other keys.
	known string
}

func (t table) problem(kind ProblemKind, key, detail string) Problem {
	return Problem{Kind: kind, Table: t.name, Entry: t.entry, Key: key, Detail: detail}
}

var (
	accessTable    = table{name: "access", entry: NoEntry, where: "[access]", sep: " ", known: "only allow-guest-user, allow-root-owner, private-mode, roles"}
	tbonTable      = table{name: "tbon", entry: NoEntry, where: "[tbon]", sep: " "}
	bootstrapTable = table{name: "bootstrap", entry: NoEntry, where: "[bootstrap]", sep: " ", known: "only hosts, curve_cert, default_port, default_bind, default_connect and enable_ipv6"}
)

func hostTable(i int) table {
	return table{name: "bootstrap", entry: i, where: fmt.Sprintf("[bootstrap] hosts[%d]", i), sep: ".", known: "host, bind, connect and parent"}
}

// Decode reads doc as flux-core reads the tables of a Document: it refuses
// keys Flux does not know where Flux does ([access], [bootstrap] and its
// hosts entries) and ignores them in [tbon]. It returns an error only when
// doc is not TOML.
func Decode(doc []byte) (*Document, error) {
	var raw map[string]any
	if err := toml.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	d := &Document{}
	d.Access = decodeTable[Access](d, raw, accessTable)
	d.Tbon = decodeTable[Tbon](d, raw, tbonTable)
	// The hosts entries are tables of their own, decoded one by one.
	boot, _ := raw["bootstrap"].(map[string]any)
	hosts, hasHosts := boot["hosts"]
	if boot != nil {
		rest := make(map[string]any, len(boot))
		for k, v := range boot {
			if k != "hosts" {
				rest[k] = v
			}
		}
		raw = map[string]any{"bootstrap": rest}
	}
	d.Bootstrap = decodeTable[Bootstrap](d, raw, bootstrapTable)
	if d.Bootstrap != nil && hasHosts {
		d.Bootstrap.Hosts = d.decodeHosts(hosts)
	}
	return d, nil
}

// decodeHosts decodes the entries of [bootstrap] hosts. An entry Flux
// refuses stays in the list, with the keys that decoded, so indices stay
// those of the file.
func (d *Document) decodeHosts(raw any) []Host {
	list, ok := raw.([]any)
	if !ok {
		d.Problems = append(d.Problems, bootstrapTable.problem(WrongType, "hosts", `[bootstrap] hosts must be an array of tables such as { host = "name-[0-3]" }`))
		return nil
	}
	hosts := make([]Host, len(list))
	for i, e := range list {
		t := hostTable(i)
		entry, ok := e.(map[string]any)
		if !ok {
			d.Problems = append(d.Problems, t.problem(NotTable, "", t.where+` must be a table such as { host = "name-[0-3]" }`))
			continue
		}
		d.Problems = append(d.Problems, decodeKeys(&hosts[i], entry, t)...)
	}
	return hosts
}

// decodeTable decodes raw's table t into a T, or returns nil when raw has
// no such table or it is not one.
func decodeTable[T any](d *Document, raw map[string]any, t table) *T {
	v, ok := raw[t.name]
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.Problems = append(d.Problems, t.problem(NotTable, "", t.where+" must be a table"))
		return nil
	}
	out := new(T)
	d.Problems = append(d.Problems, decodeKeys(out, m, t)...)
	return out
}

// decodeKeys decodes the keys of m into the struct out points at. The
// struct's tags are the keys Flux knows, spelled as Flux spells them: the
// decoder would also match them in another case, and ignore any other key.
// It stops at the first key of the wrong type, so when m does not decode
// as a whole each key is decoded alone, to name every key Flux refuses and
// keep the others.
func decodeKeys(out any, m map[string]any, t table) []Problem {
	typ := reflect.TypeOf(out).Elem()
	keys := make([]string, 0, len(m))
	known := 0
	for k := range m {
		keys = append(keys, k)
		if fieldType(typ, k) != nil {
			known++
		}
	}
	if known == len(m) && decode(out, m) == nil {
		return nil
	}
	reflect.ValueOf(out).Elem().SetZero()
	sort.Strings(keys)
	var problems []Problem
	for _, k := range keys {
		want := fieldType(typ, k)
		if want == nil {
			if t.known != "" {
				problems = append(problems, t.problem(UnknownKey, k, fmt.Sprintf("%s has key %q, which Flux refuses: use %s", t.where, k, t.known)))
			}
			continue
		}
		one := map[string]any{k: m[k]}
		// The decoder may leave a field it refused set to a zero value:
		// only a key that decodes alone goes into out.
		err := decode(reflect.New(typ).Interface(), one)
		if err == nil {
			err = decode(out, one)
		}
		if err != nil {
			problems = append(problems, t.problem(WrongType, k, fmt.Sprintf("%s%s%s is %s, and Flux refuses anything but %s", t.where, t.sep, k, typeName(reflect.TypeOf(m[k])), typeName(want))))
		}
	}
	return problems
}

// decode decodes m, as TOML, into out: go-toml decodes TOML text, and m is
// part of a document it decoded.
func decode(out any, m map[string]any) (err error) {
	defer func() {
		// go-toml 2.2.4 panics, rather than fail, on a local time for a
		// boolean.
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot decode %v: %v", m, r)
		}
	}()
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	// Inline, as the decoder refuses a table for a string or boolean; it
	// takes an empty [table] for one.
	enc.SetTablesInline(true)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("cannot encode broker.toml's keys again: %w", err)
	}
	return toml.NewDecoder(&b).Decode(out)
}

// fieldType is the type of the field of struct t that decodes key.
func fieldType(t reflect.Type, key string) reflect.Type {
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); name == key {
			return t.Field(i).Type
		}
	}
	return nil
}

// kindNames name, for messages, the TOML types of the Go kinds go-toml
// decodes them into.
var kindNames = map[reflect.Kind]string{
	reflect.String:  "a string",
	reflect.Int64:   "an integer",
	reflect.Bool:    "a boolean",
	reflect.Float64: "a float",
	reflect.Slice:   "an array",
	reflect.Map:     "a table",
}

// typeName names the TOML type t holds, for messages: dates and times by
// their Go types.
func typeName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := kindNames[t.Kind()]; ok {
		return n
	}
	return "a " + t.String()
}
