package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// bootstrapKeys are the keys Flux accepts in broker.toml's [bootstrap]
// table, and hostKeys those of its hosts entries (flux-core 0.88).
var (
	bootstrapKeys = map[string]bool{"hosts": true, "curve_cert": true, "default_port": true, "default_bind": true, "default_connect": true, "enable_ipv6": true}
	hostKeys      = map[string]bool{"host": true, "bind": true, "connect": true, "parent": true}
)

// bootstrapTypes are the TOML types Flux unpacks the [bootstrap] keys as
// (boot_config_parse: s?s s?i s?s s?s s?o s?b), and hostTypes those of a
// hosts entry.
var (
	bootstrapTypes = map[string]string{"curve_cert": "string", "default_port": "integer", "default_bind": "string", "default_connect": "string", "enable_ipv6": "boolean"}
	hostTypes      = map[string]string{"host": "string", "bind": "string", "connect": "string", "parent": "string"}
)

// tomlType names the TOML type of a value go-toml decoded.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case bool:
		return "boolean"
	case float64:
		return "float"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// withArticle puts "a" or "an" before a type name.
func withArticle(t string) string {
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}

// checkBrokerConfig parses a user's broker.toml as Flux will and checks
// that every broker of this cluster finds its hostname in it, this cluster's
// lead broker first (rank 0). It returns the number of hosts the file lists
// (0 without a bootstrap hosts list).
func checkBrokerConfig(mc *v1alpha2.MiniCluster, maximumSize int32, p *field.Path) (int, field.ErrorList) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(mc.Spec.Flux.BrokerConfig), &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return 0, field.ErrorList{field.Invalid(p, "<broker.toml>", fmt.Sprintf("is not valid TOML (line %d, column %d: %s): Flux would refuse to start", row, col, de.Error()))}
		}
		return 0, field.ErrorList{field.Invalid(p, "<broker.toml>", "is not valid TOML ("+err.Error()+"): Flux would refuse to start")}
	}
	errs := checkFluxTables(doc, p)
	// Without a hosts list Flux starts each broker as an instance of its own.
	alone := field.ErrorList{field.Required(p, fmt.Sprintf("[bootstrap] lists no hosts, so Flux would start each of the up to %d brokers as an instance of its own and they would never join: add [bootstrap] hosts = [ { host = \"%s\" } ] with curve_cert, default_bind and default_connect", maximumSize, hostlist.Range(mc.Name, 0, maximumSize)))}
	raw, ok := doc["bootstrap"]
	if !ok {
		if maximumSize > 1 {
			return 0, append(errs, alone...)
		}
		return 0, errs
	}
	bs, ok := raw.(map[string]any)
	if !ok {
		return 0, append(errs, field.Invalid(p, "<broker.toml>", "[bootstrap] must be a table"))
	}
	for _, k := range sortedKeys(bs) {
		switch want, typed := bootstrapTypes[k]; {
		case !bootstrapKeys[k]:
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] has key %q, which Flux refuses: use only hosts, curve_cert, default_port, default_bind, default_connect and enable_ipv6", k)))
		case typed && tomlType(bs[k]) != want:
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] %s is %s, and Flux refuses anything but %s", k, withArticle(tomlType(bs[k])), withArticle(want))))
		}
	}
	if port, ok := bs["default_port"].(int64); ok && (port < 1 || port > 65535) {
		errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] default_port is %d, which is not a TCP port: the brokers could not bind or connect; use 1-65535, such as 8050", port)))
	}
	_, hasPort := bs["default_port"]
	hosts, ok := bs["hosts"]
	if !ok {
		if maximumSize > 1 {
			errs = append(errs, alone...)
		}
		return 0, errs
	}
	list, ok := hosts.([]any)
	if !ok {
		return 0, append(errs, field.Invalid(p, "<broker.toml>", "[bootstrap] hosts must be an array of tables such as { host = \"name-[0-3]\" }"))
	}
	var parsed []hostlist.List
	total := 0
	for i, h := range list {
		entry, ok := h.(map[string]any)
		if !ok {
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d] must be a table such as { host = \"name-[0-3]\" }", i)))
			continue
		}
		for _, k := range sortedKeys(entry) {
			switch {
			case !hostKeys[k]:
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d] has key %q, which Flux refuses: use host, bind, connect and parent", i, k)))
			case tomlType(entry[k]) != hostTypes[k]:
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].%s is %s, and Flux refuses anything but a string", i, k, withArticle(tomlType(entry[k])))))
			}
		}
		name, ok := entry["host"].(string)
		if !ok {
			if _, set := entry["host"]; !set {
				errs = append(errs, field.Required(p, fmt.Sprintf("[bootstrap] hosts[%d] has no host key, which Flux requires: give each entry a host such as { host = \"name-[0-3]\" }", i)))
			}
			continue
		}
		l, err := hostlist.Parse(name)
		if err != nil {
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].host %s", i, err)))
			continue
		}
		if total += l.Len(); total > hostlist.MaxHosts {
			return 0, append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts have more than %d hosts", hostlist.MaxHosts)))
		}
		if host, why := badFluxHost(l); host != "" {
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].host has the host %q, which Flux refuses (%s): hosts are DNS names", i, host, why)))
		}
		for _, k := range []string{"bind", "connect"} {
			if uri, ok := entry[k].(string); ok {
				if why := fluxURIError(uri, hasPort); why != "" {
					errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].%s %q %s, and Flux refuses it", i, k, uri, why)))
				}
			}
		}
		parsed = append(parsed, l)
	}
	for _, k := range []string{"default_bind", "default_connect"} {
		if uri, ok := bs[k].(string); ok {
			if why := fluxURIError(uri, hasPort); why != "" {
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] %s %q %s, and Flux refuses it", k, uri, why)))
			}
		}
	}
	if len(errs) > 0 {
		return 0, errs
	}
	// conf_bootstrap: a parent names another host of the list.
	for i, h := range list {
		entry, _ := h.(map[string]any)
		parent, ok := entry["parent"].(string)
		if !ok {
			continue
		}
		switch {
		case parsed[i].Contains(parent):
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].parent %q is a host of the entry itself, and Flux refuses a broker that is its own parent", i, parent)))
		case !containsHost(parsed, parent):
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts[%d].parent %q is not a host of the list, and Flux refuses a parent it does not know", i, parent)))
		}
	}
	if _, ok := bs["curve_cert"]; !ok && total > 1 {
		// conf_bootstrap_parse: "curve_cert must be defined for size > 1".
		errs = append(errs, field.Required(p, "[bootstrap] lists more than one host without curve_cert, and Flux then refuses to start: add curve_cert = \""+entrypoint.Layout{MountPath: mc.Spec.Flux.Container.MountPath}.CurveCert()+"\", the certificate the MiniCluster mounts"))
	}
	// Rank 0 is every other broker's parent (or an ancestor): it binds, and
	// the others connect to it, at its entry's URIs or the defaults.
	if first, _ := list[0].(map[string]any); total > 1 {
		for _, k := range []string{"bind", "connect"} {
			if _, ok := first[k]; !ok {
				if _, ok := bs["default_"+k]; !ok {
					errs = append(errs, field.Required(p, fmt.Sprintf("[bootstrap] gives rank 0 (hosts[0]) no %s URI, and Flux then refuses to start it: set default_%s (e.g. %q) or %s in hosts[0]", k, k, map[string]string{"bind": "tcp://eth0:%p", "connect": "tcp://%h." + mc.Spec.Network.HeadlessName + ":%p"}[k], k)))
				}
			}
		}
	}
	// Each broker finds its rank by its hostname.
	if host := hostlist.Missing(mc.Name, maximumSize, parsed...); host != "" {
		return 0, append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts do not include %q, the hostname of a broker of this cluster: list every pod %s-[0-%d]", host, mc.Name, maximumSize-1)))
	}
	if lead := mc.Name + "-0"; mc.Spec.Flux.Bursting.LeadBroker == nil && firstHost(parsed) != lead {
		errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[bootstrap] hosts start with %q, but rank 0 must be %q, the lead broker that runs the job: list %s first", firstHost(parsed), lead, hostlist.Range(mc.Name, 0, maximumSize))))
	}
	return total, errs
}

// fluxTables are the keys, and their TOML types, that flux-core 0.88 reads
// from broker.toml tables other than [bootstrap] while the brokers start:
// [tbon] in the overlay module, [access] in connector-local, which also
// refuses any other key. A wrong type stops the broker.
var fluxTables = map[string]struct {
	keys   map[string]string
	strict bool
}{
	"tbon": {keys: map[string]string{
		"topo": "string", "interface-hint": "string", "torpid_min": "string", "torpid_max": "string",
		"tcp_user_timeout": "string", "connect_timeout": "string",
		"zmqdebug": "integer", "child_rcvhwm": "integer", "zmq_io_threads": "integer",
	}},
	"access": {keys: map[string]string{
		"allow-guest-user": "boolean", "allow-root-owner": "boolean", "private-mode": "boolean", "roles": "table",
	}, strict: true},
}

// fsdKeys are the [tbon] keys flux-core parses as Flux durations.
var fsdKeys = map[string]bool{"torpid_min": true, "torpid_max": true, "tcp_user_timeout": true, "connect_timeout": true}

// checkFluxTables checks the [tbon] and [access] tables of a user's
// broker.toml as flux-core reads them.
func checkFluxTables(doc map[string]any, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range []string{"access", "tbon"} {
		raw, ok := doc[name]
		if !ok {
			continue
		}
		t, ok := raw.(map[string]any)
		if !ok {
			errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[%s] must be a table", name)))
			continue
		}
		spec := fluxTables[name]
		for _, k := range sortedKeys(t) {
			want, known := spec.keys[k]
			switch {
			case !known && spec.strict:
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[%s] has key %q, which Flux refuses: use only %s", name, k, strings.Join(sortedKeys(spec.keys), ", "))))
			case !known:
			case tomlType(t[k]) != want:
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[%s] %s is %s, and Flux refuses anything but %s", name, k, withArticle(tomlType(t[k])), withArticle(want))))
			case name == "tbon" && fsdKeys[k] && !fsdRE.MatchString(t[k].(string)):
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[tbon] %s is %q, which is not a Flux duration such as 5s or 1m", k, t[k])))
			case (k == "connect_timeout" || k == "tcp_user_timeout") && fsdSeconds(t[k].(string)) > maxZMQTimeout:
				errs = append(errs, field.Invalid(p, "<broker.toml>", fmt.Sprintf("[tbon] %s is %q: %s", k, t[k], zmqTimeoutDetail)))
			case k == "child_rcvhwm" && (t[k].(int64) < 0 || t[k].(int64) == 1):
				errs = append(errs, field.Invalid(p, "<broker.toml>", "[tbon] child_rcvhwm must be 0 (unlimited) or at least 2, or Flux refuses to start"))
			case k == "zmq_io_threads" && t[k].(int64) < 1:
				errs = append(errs, field.Invalid(p, "<broker.toml>", "[tbon] zmq_io_threads must be at least 1, or Flux refuses to start"))
			}
		}
	}
	return errs
}

// containsHost tells whether one of lists has host.
func containsHost(lists []hostlist.List, host string) bool {
	for _, l := range lists {
		if l.Contains(host) {
			return true
		}
	}
	return false
}

// badFluxHost returns the first host of l that flux-core refuses in
// [bootstrap] hosts, and why (conf_bootstrap_validate_domain_name: a DNS name
// of at most 253 bytes whose labels have 1-63 letters, digits or '-', and do
// not start or end with '-'), or "".
func badFluxHost(l hostlist.List) (host, why string) {
	l.Each(func(h string) bool {
		if why = fluxHostError(h); why != "" {
			host = h
			return false
		}
		return true
	})
	return host, why
}

func fluxHostError(h string) string {
	if len(h) < 1 || len(h) > 253 {
		return "a host name has 1-253 characters"
	}
	for _, label := range strings.Split(h, ".") {
		switch {
		case label == "":
			// strtok skips empty labels.
		case len(label) > 63:
			return "a label between dots has at most 63 characters"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "a label must not start or end with '-'"
		default:
			for _, c := range label {
				if !isAlnum(c) && c != '-' {
					return fmt.Sprintf("%q is not a letter, digit or '-'", c)
				}
			}
		}
	}
	return ""
}

// isAlnum is C's isalnum in the C locale.
func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// fluxURIError applies flux-core's conf_bootstrap_validate_zmq_uri to a bind
// or connect URI of broker.toml, or returns "". A %p without default_port
// becomes port -1, which no broker can bind or reach.
func fluxURIError(uri string, port bool) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	switch {
	case !port && strings.Contains(uri, "%p"):
		return "has %p, the default_port, which [bootstrap] does not set (Flux writes -1)"
	case !ok:
		return "has no URI scheme (tcp:// or ipc://)"
	case strings.Contains(uri, ":*"):
		return "has a ZeroMQ port wildcard"
	case scheme == "ipc" && rest == "":
		return "has an empty socket path"
	case scheme == "ipc" && len(rest) > 108:
		return "has a socket path of more than 108 bytes"
	case scheme == "tcp" && rest == "":
		return "has an empty address"
	case scheme != "tcp" && scheme != "ipc":
		return "has a scheme other than tcp or ipc"
	}
	return ""
}

// firstHost is rank 0 of a host list made of lists.
func firstHost(lists []hostlist.List) string {
	first := ""
	for _, l := range lists {
		l.Each(func(h string) bool { first = h; return false })
		if first != "" {
			return first
		}
	}
	return first
}
