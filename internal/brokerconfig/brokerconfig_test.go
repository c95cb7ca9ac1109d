package brokerconfig

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	"sigs.k8s.io/yaml"

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

// TestDefaultPortIsTheSchemas holds the port's other spellings, which Go
// cannot derive from DefaultPort, to it: the kubebuilder marker of a burst's
// leadBroker.port and the default in the XRD generated from it. A claim
// defaulted by the API server must get the port SetDefaults gives.
func TestDefaultPortIsTheSchemas(t *testing.T) {
	cases := map[string]struct {
		reason string
		read   func(t *testing.T) []int64
	}{
		"Marker": {
			reason: "FluxBroker.Port's +kubebuilder:default is what make generate writes into the XRD.",
			read:   markerDefault,
		},
		"XRD": {
			reason: "Every version of the XRD in compositions/definition.yaml defaults spec.flux.bursting.leadBroker.port.",
			read:   xrdDefaults,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.read(t)
			if len(got) == 0 {
				t.Fatalf("%s\nfound no default port", tc.reason)
			}
			for _, port := range got {
				if diff := cmp.Diff(int64(DefaultPort), port); diff != "" {
					t.Errorf("%s\nthe schema's default port differs from brokerconfig.DefaultPort: -want, +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

// markerDefault reads the +kubebuilder:default marker of FluxBroker.Port.
func markerDefault(t *testing.T) []int64 {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../apis/minicluster/v1alpha2/types.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "FluxBroker" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			t.Fatalf("FluxBroker is not a struct")
		}
		for _, fld := range st.Fields.List {
			if len(fld.Names) != 1 || fld.Names[0].Name != "Port" || fld.Doc == nil {
				continue
			}
			for _, c := range fld.Doc.List {
				v, ok := strings.CutPrefix(c.Text, "// +kubebuilder:default=")
				if !ok {
					continue
				}
				port, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					t.Fatalf("FluxBroker.Port's default %q is not a number: %v", v, err)
				}
				out = append(out, port)
			}
		}
		return false
	})
	return out
}

// xrdDefaults reads the default of spec.flux.bursting.leadBroker.port in
// every version of the XRD.
func xrdDefaults(t *testing.T) []int64 {
	t.Helper()
	b, err := os.ReadFile("../../compositions/definition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema schemaNode `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &xrd); err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, v := range xrd.Spec.Versions {
		n := &v.Schema.OpenAPIV3Schema
		for _, p := range []string{"spec", "flux", "bursting", "leadBroker", "port"} {
			next, ok := n.Properties[p]
			if !ok {
				t.Fatalf("version %s of the XRD has no %s in its schema", v.Name, p)
			}
			n = &next
		}
		if n.Default == nil {
			t.Fatalf("version %s of the XRD has no default for leadBroker.port", v.Name)
		}
		port, err := strconv.ParseInt(string(n.Default), 10, 64)
		if err != nil {
			t.Fatalf("version %s of the XRD defaults leadBroker.port to %s, not a number: %v", v.Name, n.Default, err)
		}
		out = append(out, port)
	}
	return out
}

// schemaNode is as much of an OpenAPI schema as xrdDefaults walks.
type schemaNode struct {
	Properties map[string]schemaNode `json:"properties"`
	Default    json.RawMessage       `json:"default"`
}
