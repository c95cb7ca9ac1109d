package plan

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/internal/brokerconfig"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// checkTbon checks the values of a user's [tbon] as the overlay module
// reads them. Its problems and the decoder's come in the order of their
// keys, as flux-core meets them.
func checkTbon(doc *brokerconfig.Document, p *field.Path) field.ErrorList {
	var problems []brokerconfig.Problem
	for _, pr := range doc.Problems {
		if pr.Table == "tbon" {
			problems = append(problems, pr)
		}
	}
	if t := doc.Tbon; t != nil {
		refuse := func(key, detail string) {
			problems = append(problems, brokerconfig.Problem{Kind: brokerconfig.WrongType, Table: "tbon", Entry: brokerconfig.NoEntry, Key: key, Detail: detail})
		}
		for _, d := range []struct {
			key string
			fsd *string
			// zmq: the overlay hands the duration to ZeroMQ.
			zmq bool
		}{
			{"connect_timeout", t.ConnectTimeout, true},
			{"tcp_user_timeout", t.TCPUserTimeout, true},
			{"torpid_max", t.TorpidMax, false},
			{"torpid_min", t.TorpidMin, false},
		} {
			switch {
			case d.fsd == nil:
			case !fsdRE.MatchString(*d.fsd):
				refuse(d.key, fmt.Sprintf("[tbon] %s is %q, which is not a Flux duration such as 5s or 1m", d.key, *d.fsd))
			case d.zmq && fsdSeconds(*d.fsd) > maxZMQTimeout:
				refuse(d.key, fmt.Sprintf("[tbon] %s is %q: %s", d.key, *d.fsd, zmqTimeoutDetail))
			}
		}
		if n := t.ChildRcvHWM; n != nil && (*n < 0 || *n == 1) {
			refuse("child_rcvhwm", "[tbon] child_rcvhwm must be 0 (unlimited) or at least 2, or Flux refuses to start")
		}
		if n := t.ZMQIOThreads; n != nil && *n < 1 {
			refuse("zmq_io_threads", "[tbon] zmq_io_threads must be at least 1, or Flux refuses to start")
		}
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Key < problems[j].Key })
	return refused(problems, p)
}

// refused turns problems of a user's broker.toml into errors of its field.
func refused(problems []brokerconfig.Problem, p *field.Path) field.ErrorList {
	errs := make(field.ErrorList, 0, len(problems))
	for _, pr := range problems {
		errs = append(errs, field.Invalid(p, "<broker.toml>", pr.Detail))
	}
	return errs
}

// problemsAt are the problems of doc in table at entry whose key keep
// accepts.
func problemsAt(doc *brokerconfig.Document, table string, entry int, keep func(key string) bool) []brokerconfig.Problem {
	var out []brokerconfig.Problem
	for _, pr := range doc.Problems {
		if pr.Table == table && pr.Entry == entry && keep(pr.Key) {
			out = append(out, pr)
		}
	}
	return out
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
