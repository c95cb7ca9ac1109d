package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// brokerConfigCases are broker.toml files and every error, in order, that
// checkBrokerConfig gives flux-sample (4 brokers) for them.
var brokerConfigCases = map[string]struct {
	reason string
	doc    string
	hosts  int
	want   []string
}{
	"Accepted": {
		reason: "Every pod listed, the lead first, another host after it, with a parent.",
		doc:    bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login", parent = "flux-sample-0" } ]`) + "default_port = 8050\n[tbon]\ntopo = \"kary:2\"\nconnect_timeout = \"5s\"\nchild_rcvhwm = 0\n",
		hosts:  5,
	},
	"NotTOML": {
		reason: "A file Flux cannot parse.",
		doc:    "[bootstrap\nhosts = 1",
		want:   []string{`Invalid value: "<broker.toml>": is not valid TOML (line 1, column 11: toml: expected character ]): Flux would refuse to start`},
	},
	"DecodeProblems": {
		reason: "The decoder's problems come table by table, [tbon]'s among its value rules in key order.",
		doc:    "[access]\nallow-guest-user = \"yes\"\n[tbon]\nzmqdebug = true\nconnect_timeout = \"soon\"\nchild_rcvhwm = 1\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`),
		want: []string{
			`Invalid value: "<broker.toml>": [access] allow-guest-user is a string, and Flux refuses anything but a boolean`,
			`Invalid value: "<broker.toml>": [tbon] child_rcvhwm must be 0 (unlimited) or at least 2, or Flux refuses to start`,
			`Invalid value: "<broker.toml>": [tbon] connect_timeout is "soon", which is not a Flux duration such as 5s or 1m`,
			`Invalid value: "<broker.toml>": [tbon] zmqdebug is a boolean, and Flux refuses anything but an integer`,
		},
	},
	"TbonValues": {
		reason: "[tbon] durations ZeroMQ cannot take, and thread counts Flux refuses.",
		doc:    "[tbon]\ntcp_user_timeout = \"30d\"\nzmq_io_threads = 0\ntorpid_min = \"\"\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`),
		want: []string{
			`Invalid value: "<broker.toml>": [tbon] tcp_user_timeout is "30d": ` + zmqTimeoutDetail,
			`Invalid value: "<broker.toml>": [tbon] torpid_min is "", which is not a Flux duration such as 5s or 1m`,
			`Invalid value: "<broker.toml>": [tbon] zmq_io_threads must be at least 1, or Flux refuses to start`,
		},
	},
	"WrongTypePortIsSet": {
		reason: "A default_port of the wrong type is refused once: %p does not also count as unset.",
		doc:    "[bootstrap]\ncurve_cert = \"/c\"\ndefault_port = \"8050\"\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h:%p\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]\n",
		want:   []string{`Invalid value: "<broker.toml>": [bootstrap] default_port is a string, and Flux refuses anything but an integer`},
	},
	"PortAndURIs": {
		reason: "The port's range, then each entry's rules, then the defaults' URIs.",
		doc:    "[bootstrap]\ncurve_cert = \"/c\"\ndefault_port = 0\ndefault_bind = \"eth0\"\ndefault_connect = \"tcp://%h:*\"\nhosts = [ { host = \"flux-sample-[0-3]\", bind = \"ipc://\" }, { host = \"-x\" }, { bind = \"tcp://a:1\" }, { host = 1 } ]\n",
		want: []string{
			`Invalid value: "<broker.toml>": [bootstrap] default_port is 0, which is not a TCP port: the brokers could not bind or connect; use 1-65535, such as 8050`,
			`Invalid value: "<broker.toml>": [bootstrap] hosts[0].bind "ipc://" has an empty socket path, and Flux refuses it`,
			`Invalid value: "<broker.toml>": [bootstrap] hosts[1].host has the host "-x", which Flux refuses (a label must not start or end with '-'): hosts are DNS names`,
			`Required value: [bootstrap] hosts[2] has no host key, which Flux requires: give each entry a host such as { host = "name-[0-3]" }`,
			`Invalid value: "<broker.toml>": [bootstrap] hosts[3].host is an integer, and Flux refuses anything but a string`,
			`Invalid value: "<broker.toml>": [bootstrap] default_bind "eth0" has no URI scheme (tcp:// or ipc://), and Flux refuses it`,
			`Invalid value: "<broker.toml>": [bootstrap] default_connect "tcp://%h:*" has a ZeroMQ port wildcard, and Flux refuses it`,
		},
	},
	"EmptyHosts": {
		reason: "Flux starts every broker alone with an empty hosts list, as with none.",
		doc:    bootstrap("hosts = []"),
		want:   []string{`Required value: [bootstrap] lists no hosts, so Flux would start each of the up to 4 brokers as an instance of its own and they would never join: add [bootstrap] hosts = [ { host = "flux-sample-[0-3]" } ] with curve_cert, default_bind and default_connect`},
	},
	"RankZero": {
		reason: "Rank 0 needs a certificate, a bind URI and a connect URI.",
		doc:    "[bootstrap]\nhosts = [ { host = \"flux-sample-[0-3]\", connect = \"tcp://x:1\" } ]\n",
		want: []string{
			`Required value: [bootstrap] lists more than one host without curve_cert, and Flux then refuses to start: add curve_cert = "/mnt/flux/config/curve/curve.cert", the certificate the MiniCluster mounts`,
			`Required value: [bootstrap] gives rank 0 (hosts[0]) no bind URI, and Flux then refuses to start it: set default_bind (e.g. "tcp://eth0:%p") or bind in hosts[0]`,
		},
	},
	"Parents": {
		reason: "A parent is another host of the list.",
		doc:    bootstrap(`hosts = [ { host = "flux-sample-0" }, { host = "flux-sample-[1-2]", parent = "flux-sample-1" }, { host = "flux-sample-3", parent = "x" } ]`),
		want: []string{
			`Invalid value: "<broker.toml>": [bootstrap] hosts[1].parent "flux-sample-1" is a host of the entry itself, and Flux refuses a broker that is its own parent`,
			`Invalid value: "<broker.toml>": [bootstrap] hosts[2].parent "x" is not a host of the list, and Flux refuses a parent it does not know`,
		},
	},
}

// TestCheckBrokerConfig: checkBrokerConfig gives every error Flux would
// refuse the file for, in the order flux-core meets them, and counts the
// hosts of a file it accepts.
func TestCheckBrokerConfig(t *testing.T) {
	for name, tc := range brokerConfigCases {
		t.Run(name, func(t *testing.T) {
			m := mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = tc.doc }))
			n, errs := checkBrokerConfig(m, decodeBrokerConfig(m), 4, field.NewPath("spec", "flux", "brokerConfig"))
			var got []string
			for _, e := range errs {
				got = append(got, strings.TrimPrefix(e.Error(), "spec.flux.brokerConfig: "))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncheckBrokerConfig(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(errs) == 0 && n != tc.hosts {
				t.Errorf("%s\ncheckBrokerConfig(...) hosts: %d, want %d", tc.reason, n, tc.hosts)
			}
		})
	}
}

// FuzzCheckBrokerConfig: any brokerConfig is checked without a panic; every
// error names spec.flux.brokerConfig, and a file accepted has the hosts
// brokerQuorum counts.
func FuzzCheckBrokerConfig(f *testing.F) {
	for _, tc := range brokerConfigCases {
		f.Add(tc.doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		m := mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = doc }))
		n, errs := checkBrokerConfig(m, decodeBrokerConfig(m), 4, field.NewPath("spec", "flux", "brokerConfig"))
		for _, e := range errs {
			if e.Field != "spec.flux.brokerConfig" {
				t.Errorf("error of another field: %v", e)
			}
		}
		if len(errs) == 0 && doc != "" && n != brokerConfigHosts(decodeBrokerConfig(m)) {
			t.Errorf("checkBrokerConfig counts %d hosts, brokerConfigHosts %d", n, brokerConfigHosts(decodeBrokerConfig(m)))
		}
	})
}
