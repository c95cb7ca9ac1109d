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

// brokerConfigInvalid: spec.flux.brokerConfig as Flux reads it
// (checkBrokerConfig).
func brokerConfigInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"BrokerConfigNotTOML": {
			reason: "Flux refuses a broker.toml it cannot parse.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = "[bootstrap\nhosts = 1" })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "is not valid TOML (line 1"},
		},
		"BrokerConfigUnknownBootstrapKey": {
			reason: "Flux refuses unknown [bootstrap] keys.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap("curve = \"x\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]")
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] has key \"curve\""},
		},
		"BrokerConfigWithoutBootstrap": {
			reason: "Without [bootstrap] Flux starts each broker as a singleton: the four never join.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = "[access]\nallow-guest-user = true\n" })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] lists no hosts, so Flux would start each of the up to 4 brokers as an instance of its own"},
		},
		"BrokerConfigWithoutHosts": {
			reason: "A [bootstrap] without hosts is a singleton too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.BrokerConfig = bootstrap("") })),
			want:   invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] lists no hosts"},
		},
		"BrokerConfigPortOutOfRange": {
			reason: "default_port becomes the port of every bind and connect URI.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap("default_port = 70000\nhosts = [ { host = \"flux-sample-[0-3]\" } ]")
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "default_port is 70000, which is not a TCP port"},
		},
		"BrokerConfigOneEntryWithoutCurveCert": {
			reason: "flux-core 0.88 counts expanded hosts: one entry of four hosts needs curve_cert.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ndefault_bind = \"tcp://eth0:8050\"\ndefault_connect = \"tcp://%h:8050\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "lists more than one host without curve_cert"},
		},
		"BrokerConfigPortTokenWithoutPort": {
			reason: "Without default_port flux-core writes -1 for %p.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]", connect = "tcp://%h:%p" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[0].connect "tcp://%h:%p" has %p, the default_port, which [bootstrap] does not set`},
		},
		"BrokerConfigHostNotDNSName": {
			reason: "flux-core checks every expanded host as a DNS name.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login_[1-2]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[1].host has the host "login_1", which Flux refuses`},
		},
		"BrokerConfigParentUnknown": {
			reason: "flux-core refuses a parent that is no host of the list.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-0" }, { host = "flux-sample-[1-3]", parent = "nobody" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[1].parent "nobody" is not a host of the list`},
		},
		"BrokerConfigParentSelf": {
			reason: "flux-core refuses a host that is its own parent.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-0" }, { host = "flux-sample-[1-3]", parent = "flux-sample-2" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "is a host of the entry itself"},
		},
		"BrokerConfigConnectNotURI": {
			reason: "flux-core checks bind and connect URIs: tcp:// or ipc://.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]", connect = "http://x" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `hosts[0].connect "http://x" has a scheme other than tcp or ipc`},
		},
		"BrokerConfigAccessType": {
			reason: "connector-local unpacks [access] keys as booleans and refuses any other key.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[access]\nallow-guest-user = \"yes\"\nguests = true\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "[access] allow-guest-user is a string, and Flux refuses anything but a boolean"},
		},
		"BrokerConfigTBONDuration": {
			reason: "The overlay module parses [tbon] timeouts as Flux durations.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[tbon]\ntcp_user_timeout = \"2 minutes\"\n\n" + bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: `[tbon] tcp_user_timeout is "2 minutes", which is not a Flux duration`},
		},
		"BrokerConfigHostsMissPods": {
			reason: "Each broker finds its rank by its hostname in the bootstrap hosts.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-2]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "do not include \"flux-sample-3\""},
		},
		"BrokerConfigTypes": {
			reason: "Flux unpacks each [bootstrap] key as one type and refuses the file otherwise.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ncurve_cert = \"/c\"\ndefault_port = \"8050\"\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h:%p\"\nenable_ipv6 = 1\nhosts = [ { host = \"flux-sample-[0-3]\", connect = 5 } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "[bootstrap] default_port is a string, and Flux refuses anything but an integer"},
		},
		"BrokerConfigHostWithoutHost": {
			reason: "Every hosts entry needs a host.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { bind = "tcp://eth0:%p" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "[bootstrap] hosts[1] has no host key"},
		},
		"BrokerConfigWithoutCurveCert": {
			reason: "Flux refuses more than one hosts entry without curve_cert.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ndefault_port = 8050\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h:%p\"\nhosts = [ { host = \"flux-sample-[0-1]\" }, { host = \"flux-sample-[2-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "without curve_cert, and Flux then refuses to start: add curve_cert = \"/mnt/flux/config/curve/curve.cert\""},
		},
		"BrokerConfigWithoutBindAndConnect": {
			reason: "Rank 0 binds, and the others connect to it, at its entry's URIs or the defaults.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = "[bootstrap]\ncurve_cert = \"/c\"\nhosts = [ { host = \"flux-sample-[0-3]\" } ]\n"
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig", "spec.flux.brokerConfig"}, msg: "gives rank 0 (hosts[0]) no connect URI"},
		},
		"BrokerConfigLeadNotFirst": {
			reason: "The pod named <name>-0 runs the job as the lead, so it must be rank 0.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "login" }, { host = "flux-sample-[0-3]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.brokerConfig"}, msg: "hosts start with \"login\", but rank 0 must be \"flux-sample-0\""},
		},
	}
}

// brokerConfigValid: a broker.toml Flux accepts.
func brokerConfigValid() map[string]validCase {
	return map[string]validCase{
		"BrokerConfigWithOtherHosts": {
			reason: "A broker.toml Flux accepts: every pod listed, the lead first, other hosts after, the URIs and certificate set.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login", parent = "flux-sample-0" } ]`) + "default_port = 8050\nenable_ipv6 = false\n"
			})),
		},
	}
}
