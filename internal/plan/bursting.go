package plan

import (
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// The API server's NodePort range (--service-node-port-range) by default.
const (
	MinNodePort = 30000
	MaxNodePort = 32767
)

func checkBursting(mc *v1alpha2.MiniCluster, plan *Plan) field.ErrorList {
	b := &mc.Spec.Flux.Bursting
	p := field.NewPath("spec", "flux", "bursting")
	var errs field.ErrorList
	// Every name gives hostnames <name>-<index>, which must be unique: the
	// root's (this MiniCluster, or leadBroker.name for a burst, which is
	// itself one of the clusters) and each cluster's.
	root := mc.Name
	if b.LeadBroker != nil {
		root = b.LeadBroker.Name
	}
	names := map[string]string{}
	if root != "" {
		names[root] = "the root MiniCluster's name"
	}
	for i, c := range b.Clusters {
		cp := p.Child("clusters").Index(i)
		if prev, ok := names[c.Name]; ok {
			errs = append(errs, duplicate(cp.Child("name"), c.Name, "already "+prev+": each cluster needs its own name, as its hostnames <name>-<index> join one host list"))
		} else {
			names[c.Name] = "the name of " + cp.String()
		}
		if host := fmt.Sprintf("%s-%d", c.Name, c.Size-1); len(validation.IsDNS1123Label(host)) > 0 {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, fmt.Sprintf("gives the hostname %q to the cluster's last broker, which is not a DNS label of at most 63 characters: use a shorter name", host)))
		}
	}
	if np := b.LeadBrokerService.NodePort; np != 0 && ComposesLeadBroker(mc) && (np < MinNodePort || np > MaxNodePort) {
		errs = append(errs, field.Invalid(p.Child("leadBrokerService", "nodePort"), np, fmt.Sprintf("is outside Kubernetes' NodePort range %d-%d, and the API server refuses the lead broker's Service: choose a port in the range, or leave nodePort unset for Kubernetes to allocate one", MinNodePort, MaxNodePort)))
	}
	if lb := b.LeadBroker; lb != nil {
		lp := p.Child("leadBroker")
		// The schema requires an address and a name, and no hostlist.
		if lb.Address != "" && len(validation.IsValidIP(lp.Child("address"), lb.Address)) > 0 && len(validation.IsDNS1123Subdomain(lb.Address)) > 0 {
			errs = append(errs, field.Invalid(lp.Child("address"), lb.Address, "must be an IP address or a DNS name"))
		} else if ip := net.ParseIP(lb.Address); ip != nil && ip.To4() == nil {
			// broker.toml leaves [bootstrap] enable_ipv6 at Flux's default,
			// false: an IPv6 connect URI would never reach the root.
			errs = append(errs, field.Invalid(lp.Child("address"), lb.Address, "is an IPv6 address, and the brokers speak IPv4 only (Flux's default, which lets them bind eth0 whatever its addresses): use the root's IPv4 address or a DNS name"))
		}
		if host := fmt.Sprintf("%s-%d", lb.Name, lb.Size-1); lb.Name != "" && (len(validation.IsDNS1123Label(lb.Name)) > 0 || len(validation.IsDNS1123Label(host)) > 0) {
			errs = append(errs, field.Invalid(lp.Child("name"), lb.Name, fmt.Sprintf("must be the root MiniCluster's name, whose brokers are named %q and so on (DNS labels of at most 63 characters)", host)))
		}
		found := false
		for _, c := range b.Clusters {
			if c.Name == mc.Name {
				found = true
				if c.Size < plan.MaximumSize {
					errs = append(errs, field.Invalid(p.Child("clusters"), c.Size, fmt.Sprintf("the entry for this cluster (%s) declares %d hosts, fewer than this cluster's maximum size %d: its extra brokers would not find their hostnames", mc.Name, c.Size, plan.MaximumSize)))
				}
			}
		}
		switch {
		case len(b.Clusters) == 0:
			errs = append(errs, field.Required(p.Child("clusters"), "a burst cluster (leadBroker set) must list the root's clusters, itself among them (an entry named "+mc.Name+"): its brokers find their ranks by their hostnames in that list"))
		case !found:
			errs = append(errs, field.Invalid(p.Child("clusters"), mc.Name, "a burst cluster must list the root's clusters, itself among them (an entry named "+mc.Name+"): its brokers find their ranks by their hostnames in that list"))
		}
	}
	if n := instanceHosts(mc, plan.MaximumSize); (len(b.Clusters) > 0 || b.LeadBroker != nil) && n > entrypoint.TBONFanout+1 {
		// In Flux's k-ary tree rank r's parent is rank (r-1)/fanout: past
		// rank fanout a burst broker's parent is a root broker other than
		// rank 0, and only rank 0 is reachable from another cluster.
		errs = append(errs, field.Invalid(p.Child("clusters"), n, fmt.Sprintf("make an instance of %d brokers, and past %d Flux gives some burst brokers a parent other than the lead broker, the only one reachable from another cluster: keep the root's maximum size and the clusters' sizes at %d brokers in all", n, entrypoint.TBONFanout+1, entrypoint.TBONFanout+1)))
	}
	if b.Hostlist != "" && b.LeadBroker == nil {
		l, err := hostlist.Parse(b.Hostlist)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, "is not a Flux host list: it "+err.Error()))
		default:
			if host, why := badFluxHost(l); host != "" {
				errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, fmt.Sprintf("has the host %q, which Flux refuses in broker.toml's [bootstrap] hosts (%s): hosts are DNS names", host, why)))
			} else if host := hostlist.Missing(mc.Name, plan.MaximumSize, l); host != "" {
				errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, fmt.Sprintf("does not include %q, the hostname of a broker of this cluster: start the list with %s", host, hostlist.Range(mc.Name, 0, plan.MaximumSize))))
			} else if first, lead := firstHost([]hostlist.List{l}), mc.Name+"-0"; first != lead {
				errs = append(errs, field.Invalid(p.Child("hostlist"), b.Hostlist, fmt.Sprintf("starts with %q, but rank 0 must be %q, the lead broker that runs the job: start the list with %s", first, lead, hostlist.Range(mc.Name, 0, plan.MaximumSize))))
			}
		}
	}
	return errs
}
