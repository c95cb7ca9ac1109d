package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// hostEntry is one host of the expanded [bootstrap] hosts array, with the
// defaults applied and %h/%p substituted (as conf_bootstrap_parse leaves it).
type hostEntry struct {
	Host    string
	Bind    string
	Connect string
	Parent  string
}

// bootstrap is what flux-core 0.88's conf_bootstrap_parse yields.
type bootstrap struct {
	// Defined is whether broker.toml has a [bootstrap] table: it makes the
	// default topology "custom" instead of kary:32.
	Defined    bool
	CurveCert  string
	EnableIPv6 bool
	// Hosts in rank order. A missing or empty hosts array is a singleton
	// instance of this host.
	Hosts []hostEntry
}

// rankOf is the rank of host: the index of its entry.
func (b bootstrap) rankOf(host string) int {
	for i, h := range b.Hosts {
		if h.Host == host {
			return i
		}
	}
	return -1
}

// parseBootstrap mirrors conf_bootstrap_parse (src/common/libfluxutil/
// conf_bootstrap.c in flux-core 0.88), messages included: the [bootstrap]
// keys Flux reads and no other, host lists expanded and merged, URIs
// formatted and checked, and this host found in the list.
func parseBootstrap(conf map[string]any, hostname string) (bootstrap, error) {
	fail := func(format string, args ...any) (bootstrap, error) {
		return bootstrap{}, fmt.Errorf("Config file error [bootstrap]: "+format, args...)
	}
	raw, ok := conf["bootstrap"]
	if !ok {
		return bootstrap{Hosts: []hostEntry{{Host: hostname}}}, nil
	}
	m, err := unpack(raw, true,
		field{"hosts", 'o', false},
		field{"curve_cert", 's', false},
		field{"default_port", 'i', false},
		field{"default_bind", 's', false},
		field{"default_connect", 's', false},
		field{"enable_ipv6", 'b', false})
	if err != nil {
		return fail("%s", err)
	}
	b := bootstrap{Defined: true}
	b.CurveCert, _ = m["curve_cert"].(string)
	b.EnableIPv6, _ = m["enable_ipv6"].(bool)
	port := int64(-1)
	if p, ok := m["default_port"].(int64); ok {
		port = p
	}
	if port != -1 && (port < 0 || port > 65535) {
		return fail("default_port must be in the range of 0-65535")
	}
	defBind, hasDefBind := m["default_bind"].(string)
	defConnect, hasDefConnect := m["default_connect"].(string)

	hostsRaw, hasHosts := m["hosts"]
	var hosts []any
	if hasHosts {
		if hosts, ok = hostsRaw.([]any); !ok {
			return fail("must be array type")
		}
	}
	if len(hosts) == 0 {
		b.Hosts = []hostEntry{{Host: hostname}}
	} else {
		// First pass: expand each entry's host list; an entry for a host
		// seen before only adds the keys that host still lacks.
		byHost := map[string]map[string]any{}
		var order []map[string]any
		for i, e := range hosts {
			em, err := unpack(e, false, field{"host", 's', true})
			if err != nil {
				return fail("invalid hosts[%d]: %s", i, err)
			}
			names, err := hostlist.Expand(em["host"].(string))
			if err != nil {
				return fail("invalid hosts[%d]: host key is not a valid RFC 29 hostlist", i)
			}
			for _, name := range names {
				if prev, ok := byHost[name]; ok {
					for k, v := range em {
						if _, ok := prev[k]; !ok {
							prev[k] = v
						}
					}
					continue
				}
				cp := make(map[string]any, len(em))
				for k, v := range em {
					cp[k] = v
				}
				cp["host"] = name
				byHost[name] = cp
				order = append(order, cp)
			}
		}
		// Second pass: apply the defaults and check every entry.
		for i, em := range order {
			if _, err := unpack(em, true,
				field{"host", 's', true}, field{"bind", 's', false},
				field{"connect", 's', false}, field{"parent", 's', false}); err != nil {
				return fail("invalid hosts[%d]: %s", i, err)
			}
			h := hostEntry{Host: em["host"].(string)}
			h.Parent, _ = em["parent"].(string)
			if h.Parent != "" {
				if h.Parent == h.Host {
					return fail("invalid hosts[%d]: parent key refers to self", i)
				}
				if _, ok := byHost[h.Parent]; !ok {
					return fail("invalid hosts[%d]: parent key refers to unknown host", i)
				}
			}
			if err := validateDomainName(h.Host); err != nil {
				return fail("invalid hosts[%d]: %s %s", i, h.Host, err)
			}
			bind, hasBind := em["bind"].(string)
			if hasBind || hasDefBind {
				if !hasBind {
					bind = defBind
				}
				h.Bind = formatURI(bind, h.Host, port)
				if err := validateZMQURI(h.Bind); err != nil {
					return fail("invalid hosts[%d]: bind key %s", i, err)
				}
			}
			connect, hasConnect := em["connect"].(string)
			if hasConnect || hasDefConnect {
				if !hasConnect {
					connect = defConnect
				}
				h.Connect = formatURI(connect, h.Host, port)
				if err := validateZMQURI(h.Connect); err != nil {
					return fail("invalid hosts[%d]: connect key %s", i, err)
				}
			}
			b.Hosts = append(b.Hosts, h)
		}
		if _, ok := byHost[hostname]; !ok {
			return fail("%s not found in hosts", hostname)
		}
	}
	if len(b.Hosts) > 1 && b.CurveCert == "" {
		return fail("curve_cert must be defined for size > 1")
	}
	return b, nil
}

// validateDomainName is conf_bootstrap_validate_domain_name (RFC 1035):
// every dot-separated label 1-63 letters, digits or '-', not starting or
// ending with '-'.
func validateDomainName(host string) error {
	if len(host) < 1 || len(host) > 253 {
		return fmt.Errorf("domain must be 1-253 characters")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			continue // strtok skips empty tokens
		}
		if len(label) > 63 {
			return fmt.Errorf("must be 1-63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("domain label must not start or end with '-'")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if c > unicode.MaxASCII || !isLabelChar(c) {
				return fmt.Errorf("domain label contains invalid character '%c' (0x%x)", c, c)
			}
		}
	}
	return nil
}

// isLabelChar tells whether c may appear in an RFC 1035 label: a letter, a
// digit or '-'.
func isLabelChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// formatURI is conf_bootstrap_format_uri: %h is the host, %p the default
// port (-1 when unset, as in Flux), %% a percent sign; any other %X stays.
func formatURI(tmpl, host string, port int64) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' || i+1 == len(tmpl) {
			b.WriteByte(tmpl[i])
			continue
		}
		i++
		switch tmpl[i] {
		case 'h':
			b.WriteString(host)
		case 'p':
			fmt.Fprintf(&b, "%d", port)
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(tmpl[i])
		}
	}
	return b.String()
}

// validateZMQURI is conf_bootstrap_validate_zmq_uri.
func validateZMQURI(uri string) error {
	switch {
	case !strings.Contains(uri, "://"):
		return fmt.Errorf("%s has no URI scheme", uri)
	case strings.Contains(uri, ":*"):
		return fmt.Errorf("%s contains 0MQ port wildcard", uri)
	case strings.HasPrefix(uri, "ipc://"):
		if len(uri) == len("ipc://") {
			return fmt.Errorf("%s socket path is empty", uri)
		}
		if len(uri)-len("ipc://") > 108 {
			return fmt.Errorf("%s socket path must not exceed 108 bytes", uri)
		}
	case strings.HasPrefix(uri, "tcp://"):
		if len(uri) == len("tcp://") {
			return fmt.Errorf("%s address is empty", uri)
		}
	default:
		return fmt.Errorf("%s URI scheme must be tcp or ipc", uri)
	}
	return nil
}
