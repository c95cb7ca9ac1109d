package plan

import (
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/brokerconfig"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// brokerTOML is a user's broker.toml, decoded once per plan as Flux reads
// it: doc, or err when the file is not TOML. Both are nil without one.
type brokerTOML struct {
	doc *brokerconfig.Document
	err error
}

// decodeBrokerConfig decodes mc's spec.flux.brokerConfig, when it has one.
func decodeBrokerConfig(mc *v1alpha2.MiniCluster) brokerTOML {
	if mc.Spec.Flux.BrokerConfig == "" {
		return brokerTOML{}
	}
	doc, err := brokerconfig.Decode([]byte(mc.Spec.Flux.BrokerConfig))
	return brokerTOML{doc: doc, err: err}
}

// checkBrokerConfig checks a user's broker.toml (bt, decoded) as Flux will
// read it: that every broker of this cluster finds its hostname in it, this
// cluster's lead broker first (rank 0). It returns the number of hosts the
// file lists (0 without a bootstrap hosts list).
func checkBrokerConfig(mc *v1alpha2.MiniCluster, bt brokerTOML, maximumSize int32, p *field.Path) (int, field.ErrorList) {
	doc, err := bt.doc, bt.err
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return 0, field.ErrorList{field.Invalid(p, "<broker.toml>", fmt.Sprintf("is not valid TOML (line %d, column %d: %s): Flux would refuse to start", row, col, de.Error()))}
		}
		return 0, field.ErrorList{field.Invalid(p, "<broker.toml>", "is not valid TOML ("+err.Error()+"): Flux would refuse to start")}
	}
	invalid := func(detail string) *field.Error { return field.Invalid(p, "<broker.toml>", detail) }
	all := func(string) bool { return true }
	errs := refused(problemsAt(doc, "access", brokerconfig.NoEntry, all), p)
	errs = append(errs, checkTbon(doc, p)...)
	// Without a hosts list Flux starts each broker as an instance of its
	// own, as it does with an empty one.
	alone := field.ErrorList{field.Required(p, fmt.Sprintf("[bootstrap] lists no hosts, so Flux would start each of the up to %d brokers as an instance of its own and they would never join: add [bootstrap] hosts = [ { host = \"%s\" } ] with curve_cert, default_bind and default_connect", maximumSize, hostlist.Range(mc.Name, 0, maximumSize)))}
	if maximumSize <= 1 {
		alone = nil
	}
	bs := doc.Bootstrap
	if bs == nil {
		if doc.RefusesTable("bootstrap", brokerconfig.NoEntry) {
			return 0, append(errs, refused(problemsAt(doc, "bootstrap", brokerconfig.NoEntry, all), p)...)
		}
		return 0, append(errs, alone...)
	}
	errs = append(errs, refused(problemsAt(doc, "bootstrap", brokerconfig.NoEntry, func(k string) bool { return k != "hosts" }), p)...)
	if port := bs.DefaultPort; port != nil && (*port < 1 || *port > 65535) {
		errs = append(errs, invalid(fmt.Sprintf("[bootstrap] default_port is %d, which is not a TCP port: the brokers could not bind or connect; use 1-65535, such as 8050", *port)))
	}
	// A default_port of the wrong type is set all the same.
	hasPort := bs.DefaultPort != nil || doc.Refuses("bootstrap", brokerconfig.NoEntry, "default_port")
	if doc.Refuses("bootstrap", brokerconfig.NoEntry, "hosts") {
		return 0, append(errs, refused(problemsAt(doc, "bootstrap", brokerconfig.NoEntry, func(k string) bool { return k == "hosts" }), p)...)
	}
	if len(bs.Hosts) == 0 {
		return 0, append(errs, alone...)
	}
	var parsed []hostlist.List
	total := 0
	for i, h := range bs.Hosts {
		errs = append(errs, refused(problemsAt(doc, "bootstrap", i, all), p)...)
		if h.Host == nil {
			// An entry or host Flux refuses has its message already.
			if !doc.RefusesTable("bootstrap", i) && !doc.Refuses("bootstrap", i, "host") {
				errs = append(errs, field.Required(p, fmt.Sprintf("[bootstrap] hosts[%d] has no host key, which Flux requires: give each entry a host such as { host = \"name-[0-3]\" }", i)))
			}
			continue
		}
		l, err := hostlist.Parse(*h.Host)
		if err != nil {
			errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts[%d].host %s", i, err)))
			continue
		}
		if total += l.Len(); total > hostlist.MaxHosts {
			return 0, append(errs, invalid(fmt.Sprintf("[bootstrap] hosts have more than %d hosts", hostlist.MaxHosts)))
		}
		if host, why := badFluxHost(l); host != "" {
			errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts[%d].host has the host %q, which Flux refuses (%s): hosts are DNS names", i, host, why)))
		}
		for _, u := range []struct {
			key string
			uri *string
		}{{"bind", h.Bind}, {"connect", h.Connect}} {
			if u.uri != nil {
				if why := fluxURIError(*u.uri, hasPort); why != "" {
					errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts[%d].%s %q %s, and Flux refuses it", i, u.key, *u.uri, why)))
				}
			}
		}
		parsed = append(parsed, l)
	}
	for _, u := range []struct {
		key string
		uri *string
	}{{"default_bind", bs.DefaultBind}, {"default_connect", bs.DefaultConnect}} {
		if u.uri != nil {
			if why := fluxURIError(*u.uri, hasPort); why != "" {
				errs = append(errs, invalid(fmt.Sprintf("[bootstrap] %s %q %s, and Flux refuses it", u.key, *u.uri, why)))
			}
		}
	}
	if len(errs) > 0 {
		return 0, errs
	}
	// Every entry decoded and parsed: parsed[i] is bs.Hosts[i]'s list.
	// conf_bootstrap: a parent names another host of the list.
	for i, h := range bs.Hosts {
		if h.Parent == nil {
			continue
		}
		switch parent := *h.Parent; {
		case parsed[i].Contains(parent):
			errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts[%d].parent %q is a host of the entry itself, and Flux refuses a broker that is its own parent", i, parent)))
		case !containsHost(parsed, parent):
			errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts[%d].parent %q is not a host of the list, and Flux refuses a parent it does not know", i, parent)))
		}
	}
	if bs.CurveCert == nil && total > 1 {
		// conf_bootstrap_parse: "curve_cert must be defined for size > 1".
		errs = append(errs, field.Required(p, "[bootstrap] lists more than one host without curve_cert, and Flux then refuses to start: add curve_cert = \""+entrypoint.Layout{MountPath: mc.Spec.Flux.Container.MountPath}.CurveCert()+"\", the certificate the MiniCluster mounts"))
	}
	// Rank 0 is every other broker's parent (or an ancestor): it binds, and
	// the others connect to it, at its entry's URIs or the defaults.
	if first := bs.Hosts[0]; total > 1 {
		if first.Bind == nil && bs.DefaultBind == nil {
			errs = append(errs, rankZeroWithout("bind", "tcp://eth0:%p", p))
		}
		if first.Connect == nil && bs.DefaultConnect == nil {
			errs = append(errs, rankZeroWithout("connect", "tcp://%h."+mc.Spec.Network.HeadlessName+":%p", p))
		}
	}
	// Each broker finds its rank by its hostname.
	if host := hostlist.Missing(mc.Name, maximumSize, parsed...); host != "" {
		return 0, append(errs, invalid(fmt.Sprintf("[bootstrap] hosts do not include %q, the hostname of a broker of this cluster: list every pod %s-[0-%d]", host, mc.Name, maximumSize-1)))
	}
	if lead := mc.Name + "-0"; mc.Spec.Flux.Bursting.LeadBroker == nil && firstHost(parsed) != lead {
		errs = append(errs, invalid(fmt.Sprintf("[bootstrap] hosts start with %q, but rank 0 must be %q, the lead broker that runs the job: list %s first", firstHost(parsed), lead, hostlist.Range(mc.Name, 0, maximumSize))))
	}
	return total, errs
}

// rankZeroWithout is the error for a broker.toml that gives rank 0 no URI
// to bind or connect (kind), with example as the default to set.
func rankZeroWithout(kind, example string, p *field.Path) *field.Error {
	return field.Required(p, fmt.Sprintf("[bootstrap] gives rank 0 (hosts[0]) no %s URI, and Flux then refuses to start it: set default_%s (e.g. %q) or %s in hosts[0]", kind, kind, example, kind))
}

// brokerConfigHosts is the number of hosts the bootstrap list of a user's
// broker.toml (bt, decoded) declares, or 0 without one (or with one Flux
// refuses, which checkBrokerConfig reports).
func brokerConfigHosts(bt brokerTOML) int {
	if bt.err != nil || bt.doc == nil || bt.doc.Bootstrap == nil {
		return 0
	}
	total := 0
	for _, h := range bt.doc.Bootstrap.Hosts {
		if h.Host == nil {
			continue
		}
		if l, err := hostlist.Parse(*h.Host); err == nil && total <= hostlist.MaxHosts {
			total += l.Len()
		}
	}
	return total
}
