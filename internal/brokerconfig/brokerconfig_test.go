package brokerconfig

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// paths are any paths under mp: Build writes them as they are (the pods'
// come from entrypoint.Layout).
func paths(mp string) Paths {
	return Paths{Resources: mp + "/R", CurveCert: mp + "/curve.cert", JobArchive: mp + "/job-archive.sqlite"}
}

// TestMarshalParsesBack encodes configurations and reads them back with a
// TOML parser: the file is valid, has exactly the keys Flux's [bootstrap]
// accepts, and says what we meant.
func TestMarshalParsesBack(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   Options
		want   []map[string]any // bootstrap hosts
		conn   string
	}{
		"Root": {
			reason: "A root lists its hosts (and the clusters that may join) in one entry.",
			opts:   Options{Paths: paths("/mnt/flux"), Service: "flux-sample", Namespace: "default", Hosts: hostlist.Root("flux-sample", 4, []hostlist.Cluster{{Name: "burst-0", Size: 4}}), QueuePolicy: "fcfs"},
			want:   []map[string]any{{"host": "flux-sample-[0-3],burst-0-[0-3]"}},
			conn:   "tcp://%h.flux-sample.default.svc.cluster.local:%p",
		},
		"Burst": {
			reason: "A burst reaches rank 0 at the lead's address and NodePort, the rest by their names (upstream rendered this block malformed).",
			opts: Options{Paths: paths("/opt/flux"), Service: "burst-0", Namespace: "cloud", QueuePolicy: "easy",
				Hosts: hostlist.Burst(hostlist.Lead{Address: "34.171.113.254", Name: "flux-sample", Size: 4, Port: 30093}, []hostlist.Cluster{{Name: "burst-0", Size: 4}})},
			want: []map[string]any{
				{"host": "34.171.113.254", "bind": "tcp://eth0:30093", "connect": "tcp://34.171.113.254:30093"},
				{"host": "flux-sample-[1-3],burst-0-[0-3]"},
			},
			conn: "tcp://%h.burst-0.cloud.svc.cluster.local:%p",
		},
		"HostileValues": {
			reason: "Quotes and newlines in values cannot break the file.",
			opts:   Options{Paths: paths("/mnt/flux"), Service: "s", Namespace: "n", Hosts: hostlist.Custom("a'b\"c\nd"), QueuePolicy: "fcfs"},
			want:   []map[string]any{{"host": "a'b\"c\nd"}},
			conn:   "tcp://%h.s.n.svc.cluster.local:%p",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := Build(tc.opts).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := toml.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s\nbroker.toml does not parse: %v\n%s", tc.reason, err, b)
			}
			boot := got["bootstrap"].(map[string]any)
			keys := make([]string, 0, len(boot))
			for k := range boot {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if diff := cmp.Diff([]string{"curve_cert", "default_bind", "default_connect", "default_port", "hosts"}, keys); diff != "" {
				t.Errorf("%s\n[bootstrap] keys (Flux accepts only these): -want, +got:\n%s", tc.reason, diff)
			}
			var hosts []map[string]any
			for _, h := range boot["hosts"].([]any) {
				hosts = append(hosts, h.(map[string]any))
			}
			if diff := cmp.Diff(tc.want, hosts); diff != "" {
				t.Errorf("%s\nhosts: -want, +got:\n%s", tc.reason, diff)
			}
			if boot["default_connect"] != tc.conn {
				t.Errorf("%s\ndefault_connect %v, want %s", tc.reason, boot["default_connect"], tc.conn)
			}
			gotPaths := Paths{
				Resources:  got["resource"].(map[string]any)["path"].(string),
				CurveCert:  boot["curve_cert"].(string),
				JobArchive: got["archive"].(map[string]any)["dbpath"].(string),
			}
			if diff := cmp.Diff(tc.opts.Paths, gotPaths); diff != "" {
				t.Errorf("%s\nresource.path, curve_cert, archive.dbpath: -want, +got:\n%s", tc.reason, diff)
			}
			if boot["default_port"] != int64(DefaultPort) {
				t.Errorf("%s\ndefault_port %v, want %d", tc.reason, boot["default_port"], DefaultPort)
			}
			q := got["sched-fluxion-qmanager"].(map[string]any)
			if q["queue-policy"] != tc.opts.QueuePolicy {
				t.Errorf("%s\nqueue-policy %v, want %s", tc.reason, q["queue-policy"], tc.opts.QueuePolicy)
			}
		})
	}
}
