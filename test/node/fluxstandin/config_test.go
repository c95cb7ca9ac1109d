package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

func TestParseBootstrap(t *testing.T) {
	const hosts = `hosts = [{host = 'flux-sample-[0-3]'}]`
	const head = "[bootstrap]\ncurve_cert = '/c'\ndefault_port = 8050\ndefault_bind = 'tcp://eth0:%p'\ndefault_connect = 'tcp://%h.flux-sample.default.svc.cluster.local:%p'\n"
	cases := map[string]struct {
		reason   string
		toml     string
		hostname string
		want     bootstrap
		wantErr  string
	}{
		"HelloWorld": {
			reason:   "The project's broker.toml: every host gets the default bind and a connect URI with its own name.",
			toml:     head + hosts,
			hostname: "flux-sample-2",
			want: bootstrap{Defined: true, CurveCert: "/c", Hosts: []hostEntry{
				{Host: "flux-sample-0", Bind: "tcp://eth0:8050", Connect: "tcp://flux-sample-0.flux-sample.default.svc.cluster.local:8050"},
				{Host: "flux-sample-1", Bind: "tcp://eth0:8050", Connect: "tcp://flux-sample-1.flux-sample.default.svc.cluster.local:8050"},
				{Host: "flux-sample-2", Bind: "tcp://eth0:8050", Connect: "tcp://flux-sample-2.flux-sample.default.svc.cluster.local:8050"},
				{Host: "flux-sample-3", Bind: "tcp://eth0:8050", Connect: "tcp://flux-sample-3.flux-sample.default.svc.cluster.local:8050"},
			}},
		},
		"BurstHostKeys": {
			reason:   "A host's own bind and connect keys win over the defaults; a later entry for the same host adds only the keys it lacks (json_object_update_missing).",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_port = 8050\ndefault_bind = 'tcp://eth0:%p'\ndefault_connect = 'tcp://%h.b:%p'\nhosts = [{host = '34.171.113.254', bind = 'tcp://eth0:30093', connect = 'tcp://34.171.113.254:30093'}, {host = 'a-[1-2]', bind = 'tcp://lo:9'}, {host = 'a-1', parent = '34.171.113.254', connect = 'tcp://later:1', bind = 'tcp://ignored:1'}]",
			hostname: "a-1",
			want: bootstrap{Defined: true, CurveCert: "/c", Hosts: []hostEntry{
				{Host: "34.171.113.254", Bind: "tcp://eth0:30093", Connect: "tcp://34.171.113.254:30093"},
				{Host: "a-1", Bind: "tcp://lo:9", Connect: "tcp://later:1", Parent: "34.171.113.254"},
				{Host: "a-2", Bind: "tcp://lo:9", Connect: "tcp://a-2.b:8050"},
			}},
		},
		"NoBootstrap": {
			reason:   "Without [bootstrap] the instance is this host alone.",
			toml:     "[access]\nallow-guest-user = true\n",
			hostname: "h",
			want:     bootstrap{Hosts: []hostEntry{{Host: "h"}}},
		},
		"UnknownBootstrapKey": {
			reason:   "Flux unpacks [bootstrap] strictly: a key it does not know is an error.",
			toml:     head + hosts + "\ndefault_hostname = 'x'\n",
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: 1 object item(s) left unpacked: default_hostname",
		},
		"PortIsAString": {
			reason:   "default_port must be a TOML integer.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_port = '8050'\n" + hosts,
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: Expected integer, got string",
		},
		"CertIsABoolean": {
			reason:   "curve_cert must be a string.",
			toml:     "[bootstrap]\ncurve_cert = true\n" + hosts,
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: Expected string, got true",
		},
		"PortOutOfRange": {
			reason:   "default_port must be a TCP port.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_port = 70000\n" + hosts,
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: default_port must be in the range of 0-65535",
		},
		"HostsNotAnArray": {
			reason:   "hosts must be an array of tables.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = 'flux-sample-0'\n",
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: must be array type",
		},
		"HostNotInHosts": {
			reason:   "A broker must find its own hostname in hosts: an FQDN hostname is not the short name.",
			toml:     head + hosts,
			hostname: "flux-sample-0.flux-sample.default.svc.cluster.local",
			wantErr:  "Config file error [bootstrap]: flux-sample-0.flux-sample.default.svc.cluster.local not found in hosts",
		},
		"MissingCurveCert": {
			reason:   "An instance of more than one broker needs curve_cert.",
			toml:     "[bootstrap]\ndefault_port = 8050\n" + hosts,
			hostname: "flux-sample-0",
			wantErr:  "Config file error [bootstrap]: curve_cert must be defined for size > 1",
		},
		"UnknownHostKey": {
			reason:   "Host entries are strict too; the index is the expanded host's.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{host = 'n-[0-1]', port = 1}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: 1 object item(s) left unpacked: port",
		},
		"HostWithoutHost": {
			reason:   "Every entry needs a host key.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{bind = 'tcp://eth0:1'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: Object item not found: host",
		},
		"BadHostlist": {
			reason:   "host is an RFC 29 host list.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{host = 'n-[0-'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: host key is not a valid RFC 29 hostlist",
		},
		"UnderscoreInHost": {
			reason:   "Host names are RFC 1035 names: no underscore.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{host = 'flux_sample-0'}]\n",
			hostname: "flux_sample-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: flux_sample-0 domain label contains invalid character '_' (0x5f)",
		},
		"ParentIsSelf": {
			reason:   "A host cannot be its own parent.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{host = 'n-0'}, {host = 'n-1', parent = 'n-1'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[1]: parent key refers to self",
		},
		"ParentUnknown": {
			reason:   "A parent must be one of the hosts.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\nhosts = [{host = 'n-0'}, {host = 'n-1', parent = 'x'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[1]: parent key refers to unknown host",
		},
		"BindWithoutScheme": {
			reason:   "Bind URIs are ZeroMQ URIs.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_port = 1\ndefault_bind = 'eth0:%p'\nhosts = [{host = 'n-0'}, {host = 'n-1'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: bind key eth0:1 has no URI scheme",
		},
		"ConnectWildcardPort": {
			reason:   "A 0MQ port wildcard cannot be connected to.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_connect = 'tcp://%h:*'\nhosts = [{host = 'n-0'}, {host = 'n-1'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: connect key tcp://n-0:* contains 0MQ port wildcard",
		},
		"UDPScheme": {
			reason:   "Only tcp and ipc.",
			toml:     "[bootstrap]\ncurve_cert = '/c'\ndefault_connect = 'udp://%h:1'\nhosts = [{host = 'n-0'}, {host = 'n-1'}]\n",
			hostname: "n-0",
			wantErr:  "Config file error [bootstrap]: invalid hosts[0]: connect key udp://n-0:1 URI scheme must be tcp or ipc",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var conf map[string]any
			if err := toml.Unmarshal([]byte(tc.toml), &conf); err != nil {
				t.Fatal(err)
			}
			got, err := parseBootstrap(conf, tc.hostname)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	cases := map[string]struct {
		reason  string
		files   map[string]string
		want    map[string]any
		wantErr string
	}{
		"MergesFiles": {
			reason: "Every *.toml of the directory is read, in order, tables merged.",
			files:  map[string]string{"a.toml": "[t]\nx = 1\n", "b.toml": "[t]\ny = 'z'\n", "c.txt": "not toml ["},
			want:   map[string]any{"t": map[string]any{"x": int64(1), "y": "z"}},
		},
		"SyntaxError": {
			reason:  "A TOML error names the file and line, as Flux's does.",
			files:   map[string]string{"broker.toml": "[bootstrap]\nhosts = [\n"},
			wantErr: "Config file error: DIR/broker.toml:2: toml:",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, c := range tc.files {
				must(t, os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644))
			}
			got, err := loadConfig(dir)
			if tc.wantErr != "" {
				want := strings.ReplaceAll(tc.wantErr, "DIR", dir)
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%s\nerror: want prefix %q, got %v", tc.reason, want, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestSetAttr(t *testing.T) {
	cases := map[string]struct {
		reason  string
		arg     string
		want    map[string]string
		wantErr string
	}{
		"Fanout":       {reason: "The scripts' tbon.fanout is a (legacy) attribute.", arg: "tbon.fanout=256", want: map[string]string{"tbon.fanout": "256"}},
		"NoValue":      {reason: "-Sbroker.rc2_none sets it to nothing.", arg: "broker.rc2_none", want: map[string]string{"broker.rc2_none": ""}},
		"Wildcard":     {reason: "test.* attributes match by pattern.", arg: "test.x=1", want: map[string]string{"test.x": "1"}},
		"Unknown":      {reason: "A misspelt attribute fails, as in Flux.", arg: "tbon.topology=kary:2", want: map[string]string{}, wantErr: "tbon.topology: unknown attribute"},
		"ReadOnlyRank": {reason: "rank comes from bootstrap.", arg: "rank=1", want: map[string]string{}, wantErr: "rank: attribute may not be set on the command line"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			err := setAttr(got, tc.arg)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseFSD(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    string
		wantErr bool
	}{
		"Seconds": {in: "5s", want: "5s"}, "Bare": {in: "10", want: "10s"}, "Minutes": {in: "1.5m", want: "1m30s"},
		"Millis": {in: "250ms", want: "250ms"}, "Hours": {in: "2h", want: "2h0m0s"},
		"Negative": {in: "-1s", wantErr: true}, "Junk": {in: "fast", wantErr: true}, "Empty": {in: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := parseFSD(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseFSD(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, d.String()); diff != "" {
					t.Errorf("parseFSD(%q): -want, +got:\n%s", tc.in, diff)
				}
			}
		})
	}
}
