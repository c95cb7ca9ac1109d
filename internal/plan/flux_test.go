package plan

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// fluxInvalid: spec.flux (checkFlux).
func fluxInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"FluxEnvironmentNotShellName": {
			reason: "flux.environment is exported by a shell script, where A-B is no variable.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"GOOD_ONE": "1", "A-B": "x"} })),
			want:   invalid{fields: []string{"spec.flux.environment[A-B]"}, msg: "must be a shell variable name"},
		},
		"FluxEnvironmentScriptVariable": {
			reason: "flux.environment is exported in the entrypoint script: configroot=/x would move Flux's configuration away.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"configroot": "/x", "OK": "1"} })),
			want:   invalid{fields: []string{"spec.flux.environment[configroot]"}, msg: "is a variable of the brokers' entrypoint script"},
		},
		"TopologyKTooLarge": {
			reason: "flux-core parses k with strtoul and refuses a value past 64 bits.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "kary:99999999999999999999" })),
			want:   invalid{fields: []string{"spec.flux.topology"}, msg: "has a k too large for Flux"},
		},
		"ConnectTimeoutPastZMQ": {
			reason: "ZeroMQ takes the timeout as int milliseconds: 30 days overflow it and the followers cannot connect.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.ConnectTimeout = ptr("30d") })),
			want:   invalid{fields: []string{"spec.flux.connectTimeout"}, msg: "longer than ZeroMQ's limit"},
		},
		"MinimalServiceBrokerConfigTooLarge": {
			reason: "The brokers counted are those of the bootstrap list, other clusters' too.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.MinimalService = true
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "node-[0-299]" } ]`)
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "this instance has up to 304 hosts in spec.flux.brokerConfig"},
		},
		"MinimalServiceHostlistTooLarge": {
			reason: "A custom host list counts whole.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) { f.MinimalService = true }), withBursting(func(b *v1alpha2.Bursting) {
				b.Hostlist = "flux-sample-[0-3],node-[0-299]"
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "this instance has up to 304 hosts in spec.flux.bursting.hostlist"},
		},
		"MinimalServiceTooLarge": {
			reason: "More brokers than the fanout + 1 make a tree.",
			args: mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MaxSize = 300 }), withFlux(func(f *v1alpha2.FluxSpec) {
				f.MinimalService = true
			})),
			want: invalid{fields: []string{"spec.flux.minimalService"}, msg: "with more than 257 brokers"},
		},
	}
}

// fluxValid: Flux settings at their edges.
func fluxValid() map[string]validCase {
	return map[string]validCase{
		"FluxOptions": {
			reason: "Valid Flux settings at their edges.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.ConnectTimeout = ptr("500ms")
				f.LogLevel = ptr(int32(0))
				f.Topology = "mincrit:3"
				f.Scheduler.QueuePolicy = "easy"
				f.Container = v1alpha2.FluxContainer{Name: "view", Image: "ghcr.io/converged-computing/flux-view-rocky:tag-9", MountPath: "/opt/flux-view"}
				f.Environment = map[string]string{"FLUX_URI_RESOLVE": "1", "_private": "x"}
				f.CurveCertSecret = "my-curve-cert"
			})),
		},
		"ConnectTimeoutEmpty": {
			reason: `"" turns the connect timeout off.`,
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.ConnectTimeout = ptr("") })),
		},
		"LogLevelSeven": {
			reason: "7 is debug.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.LogLevel = ptr(int32(7)) })),
		},
		"Topologies": {
			reason: "kary, binomial and custom.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "kary:2" })),
		},
		"BinomialTopology": {
			reason: "binomial takes no argument.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Topology = "binomial" })),
		},
	}
}

// TestFSDSeconds: Flux durations as the overlay module reads them.
func TestFSDSeconds(t *testing.T) {
	cases := map[string]struct {
		reason string
		fsd    string
		want   float64
	}{
		"Bare":         {"A bare number is seconds.", "5", 5},
		"Milliseconds": {"ms is not m.", "500ms", 0.5},
		"Minutes":      {"m.", "1.5m", 90},
		"Hours":        {"h.", "2h", 7200},
		"Days":         {"d.", "24d", 24 * 86400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := fsdSeconds(tc.fsd); got != tc.want {
				t.Errorf("%s\nfsdSeconds(%q) = %v, want %v", tc.reason, tc.fsd, got, tc.want)
			}
		})
	}
}
