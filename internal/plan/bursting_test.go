package plan

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// burstingInvalid: spec.flux.bursting of a root and of a burst cluster
// (checkBursting).
func burstingInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"DuplicateBurstClusters": {
			reason: "Two clusters with one name would list the same hostnames twice.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[1].name"}, msg: "each cluster needs its own name"},
		},
		"BurstClusterNamedLikeMiniCluster": {
			reason: "A cluster named like the root would repeat the root's hostnames.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "flux-sample", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[0].name"}, msg: "already the root MiniCluster's name"},
		},
		"BurstNotAmongClusters": {
			reason: "A burst's own hostnames must be in the shared host list.",
			args: burst(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-1", Size: 4}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "a burst cluster must list the root's clusters, itself among them"},
		},
		"BurstClusterNamedLikeRoot": {
			reason: "In a burst, the root is leadBroker.name: a cluster named so would repeat its hostnames.",
			args: burst(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = append(b.Clusters, v1alpha2.BurstedCluster{Name: "flux-sample", Size: 4})
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[1].name"}, msg: "already the root MiniCluster's name"},
		},
		"BadLeadBrokerAddress": {
			reason: "The address lands in broker.toml's connect URI.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Address = "not an address!" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.address"}, msg: "must be an IP address or a DNS name"},
		},
		"BadLeadBrokerName": {
			reason: "The root's name is the prefix of its hostnames.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Name = "Flux_Sample" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.name"}, msg: "must be the root MiniCluster's name"},
		},
		"BurstClusterHostnameTooLong": {
			reason: "Each burst cluster's hostnames <name>-<index> are DNS labels too.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: strings.Repeat("b", 62), Size: 10}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters[0].name"}, msg: "use a shorter name"},
		},
		"BurstWithoutClusters": {
			reason: "A burst cluster's own hostnames come from the root's clusters list.",
			args:   burst(withBursting(func(b *v1alpha2.Bursting) { b.Clusters = nil })),
			want:   invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "itself among them"},
		},
		"LeadBrokerIPv6": {
			reason: "Flux enables IPv4 only unless [bootstrap] enable_ipv6, which broker.toml leaves off.",
			args:   burst(withFlux(func(f *v1alpha2.FluxSpec) { f.Bursting.LeadBroker.Address = "fd00::1" })),
			want:   invalid{fields: []string{"spec.flux.bursting.leadBroker.address"}, msg: "is an IPv6 address, and the brokers speak IPv4 only"},
		},
		"HostlistNotDNSName": {
			reason: "bursting.hostlist becomes [bootstrap] hosts, which flux-core checks as DNS names.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3],-login" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: `has the host "-login", which Flux refuses`},
		},
		"BurstPastFanout": {
			reason: "Past rank 256 a burst broker's parent is a root broker other than rank 0, unreachable from its cluster.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 254}}
			})),
			want: invalid{fields: []string{"spec.flux.bursting.clusters"}, msg: "make an instance of 258 brokers, and past 257"},
		},
		"HostlistLeadNotFirst": {
			reason: "The pod named <name>-0 runs the job as the lead, so it must be rank 0.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "node-[0-1],flux-sample-[0-3]" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "starts with \"node-0\", but rank 0 must be \"flux-sample-0\""},
		},
		"NodePortOutsideRange": {
			reason: "The API server refuses a NodePort outside its range (30000-32767 by default).",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 2}}
				b.LeadBrokerService.NodePort = 8050
			})),
			want: invalid{fields: []string{"spec.flux.bursting.leadBrokerService.nodePort"}, msg: "is outside Kubernetes' NodePort range 30000-32767"},
		},
		"HostlistNotAHostlist": {
			reason: "bursting.hostlist is parsed as Flux will.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "is not a Flux host list"},
		},
		"HostlistWithoutOwnPods": {
			reason: "The brokers find their ranks by hostname in the host list.",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "node-[0-3]" })),
			want:   invalid{fields: []string{"spec.flux.bursting.hostlist"}, msg: "does not include \"flux-sample-0\""},
		},
	}
}

// burstingValid: roots, bursts and custom host lists.
func burstingValid() map[string]validCase {
	return map[string]validCase{
		"BurstAtFanout": {
			reason: "257 brokers in all keep every burst broker a child of rank 0.",
			args: mc(withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 253}}
			})),
		},
		"BurstingRoot": {
			reason: "A root declares the clusters that may join and may pick its NodePort.",
			args: mc(
				withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MaxSize = 8 }),
				withBursting(func(b *v1alpha2.Bursting) {
					b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-1", Size: 2}}
					b.LeadBrokerService.NodePort = 30093
				}),
			),
		},
		"BurstingRootDefaulted": {
			reason: "Clusters without name or size are valid once defaulted.",
			args: func() *v1alpha2.MiniCluster {
				m := raw(withBursting(func(b *v1alpha2.Bursting) { b.Clusters = []v1alpha2.BurstedCluster{{}, {}} }))
				v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{})
				return m
			}(),
		},
		"Burst": {
			reason: "A burst whose own name is among the clusters (it shares the root's list).",
			args:   burst(),
		},
		"BurstAmongSeveralClusters": {
			reason: "A burst that is not the first cluster.",
			args: burst(withName("burst-1"), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "burst-1" }), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 4}, {Name: "burst-1", Size: 4}}
			})),
		},
		"BurstDNSAddress": {
			reason: "The lead broker's address may be a DNS name.",
			args:   burst(withLeadBroker(func(lb *v1alpha2.FluxBroker) { lb.Address = "lead.hpc.example.com" })),
		},
		"CustomHostlist": {
			reason: "Hosts that do not follow <name>-<index> (upstream's Compute Engine example).",
			args:   mc(withBursting(func(b *v1alpha2.Bursting) { b.Hostlist = "flux-sample-[0-3],gffw-compute-a-[001-003]" })),
		},
	}
}
