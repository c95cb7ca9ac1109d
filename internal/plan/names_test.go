package plan

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// namesInvalid: the names and hostnames a MiniCluster derives (checkNames),
// and the Services it composes, checked with Kubernetes' rules.
func namesInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"SidecarWithPortsNamedLikeNumber": {
			reason: "A sidecar with ports gets a Service named after it, and Service names start with a letter.",
			args:   mc(withSidecar("8app", ports(80))),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "names the Service of this container's ports"},
		},
		"NameTooLongForHostnames": {
			reason: "The last pod's hostname <name>-<maxSize-1> is a DNS label of at most 63 characters.",
			args:   mc(withName(strings.Repeat("a", 62))),
			want:   invalid{fields: []string{"metadata.name"}, msg: "would have more than 63 characters; use a name of at most 61 characters"},
		},
		"NameTooLongForMaxSize": {
			reason: "The hostnames are sized for maxSize, not size.",
			args: mc(withName(strings.Repeat("a", 60)), withSpec(func(s *v1alpha2.MiniClusterSpec) {
				s.MaxSize = 1000
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "-999\", would have more than 63 characters"},
		},
		"EmptyName": {
			reason: "Everything is named after the MiniCluster.",
			args:   mc(withName("")),
			want:   invalid{fields: []string{"metadata.name"}, msg: "a MiniCluster needs a name"},
		},
		"UppercaseName": {
			reason: "The name is a hostname prefix, so a lowercase DNS label.",
			args:   mc(withName("Flux-Sample")),
			want:   invalid{fields: []string{"metadata.name"}, msg: "lowercase RFC 1123 label"},
		},
		"HeadlessNameStartsWithDigit": {
			reason: "Service names must start with a letter, which a pod subdomain need not.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "1flux" })),
			want:   invalid{fields: []string{"spec.network.headlessName"}, msg: "start with an alphabetic character"},
		},
		"NameStartsWithDigit": {
			reason: "The headless Service defaults to the MiniCluster's name, so the error says where the value came from.",
			args: func() *v1alpha2.MiniCluster {
				m := raw(withName("1sample"))
				v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{})
				return m
			}(),
			want: invalid{fields: []string{"metadata.name"}, msg: "Service names must start with a letter"},
		},
		"LeadBrokerServiceNameTooLong": {
			reason: "A burst root composes <name>-lead-broker, a Service name of at most 63 characters.",
			args: mc(withName(strings.Repeat("a", 52)), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "lead broker's NodePort Service"},
		},
		"ServicesPodHostnameTooLong": {
			reason: "The services Pod's hostname is <name>-services, a DNS label.",
			args:   mc(withName(strings.Repeat("a", 56)), withServices(sidecar("db"))),
			want:   invalid{fields: []string{"metadata.name"}, msg: "is too long for spec.services"},
		},
		"SidecarServiceNamedLikeHeadless": {
			reason: "A sidecar with ports gets a Service named after it, which must not be the broker Service.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "web" }), withSidecar("web", ports(80))),
			want:   invalid{fields: []string{"spec.containers[1].name"}, msg: "like the broker Service"},
		},
		"SidecarServiceNamedLikeLeadBroker": {
			reason: "Two Services of one claim cannot share a name.",
			args: mc(withSidecar("flux-sample-lead-broker", ports(80)), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 2}}
			})),
			want: invalid{fields: []string{"spec.containers[1].name"}, msg: "like the lead broker's NodePort Service"},
		},
		"LeadBrokerServiceTooLong": {
			reason: "Only the MiniCluster's name makes <name>-lead-broker: the fix is a shorter name, not headlessName.",
			args: mc(withName(strings.Repeat("a", 52)), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "svc" }), withBursting(func(b *v1alpha2.Bursting) {
				b.Clusters = []v1alpha2.BurstedCluster{{Name: "burst", Size: 2}}
			})),
			want: invalid{fields: []string{"metadata.name"}, msg: "use a name that starts with a letter and has at most 51 characters"},
		},
	}
}

// namesValid: names at their edges.
func namesValid() map[string]validCase {
	return map[string]validCase{
		"LongestName": {
			reason: "A name whose last hostname is exactly 63 characters.",
			args:   mc(withName(strings.Repeat("a", 61)), withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "svc" })),
		},
		"CustomHeadlessName": {
			reason: "headlessName may differ from the name.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Network.HeadlessName = "flux-service" })),
		},
		"SidecarWithoutPortsNamedLikeNumber": {
			reason: "Without ports no Service is named after the sidecar, so a DNS-1123 label suffices.",
			args:   mc(withSidecar("8app")),
		},
	}
}
