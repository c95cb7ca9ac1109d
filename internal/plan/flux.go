package plan

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

var (
	// Flux Standard Duration: a number with an optional unit. The XRD's
	// rule on spec.flux.connectTimeout states the same form (a test holds
	// them together); this one checks broker.toml's durations.
	fsdRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ms|s|m|h|d)?$`)
	// flux.environment lands in `export K=V` lines of a shell script.
	shellNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// scriptVariables are the entrypoint scripts' own shell variables.
var scriptVariables = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range entrypoint.ScriptVariables {
		m[v] = true
	}
	return m
}()

func checkFlux(mc *v1alpha2.MiniCluster, plan *Plan) field.ErrorList {
	f := &mc.Spec.Flux
	p := field.NewPath("spec", "flux")
	var errs field.ErrorList
	// The schema states the forms of connectTimeout and topology; their
	// values' limits need parsing.
	if f.ConnectTimeout != nil && *f.ConnectTimeout != "" && fsdSeconds(*f.ConnectTimeout) > maxZMQTimeout {
		errs = append(errs, field.Invalid(p.Child("connectTimeout"), *f.ConnectTimeout, zmqTimeoutDetail))
	}
	if _, k, ok := strings.Cut(f.Topology, ":"); ok {
		// flux-core reads k with strtoul, which fails past 64 bits.
		if _, err := strconv.ParseUint(k, 10, 64); err != nil {
			errs = append(errs, field.Invalid(p.Child("topology"), f.Topology, "has a k too large for Flux, which then refuses to start: use a k such as 2 or 16"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
		switch {
		case !shellNameRE.MatchString(k):
			errs = append(errs, field.Invalid(p.Child("environment").Key(k), k, "must be a shell variable name (letters, digits and '_', not starting with a digit): it is exported in flux-view.sh"))
		case scriptVariables[k]:
			errs = append(errs, field.Invalid(p.Child("environment").Key(k), k, "is a variable of the brokers' entrypoint script, which exports spec.flux.environment, so it would change what the script does (where it finds Flux's configuration, what it runs): choose another name"))
		}
	}
	// hosts is the size of the instance as Flux sees it: every host of the
	// bootstrap list, this cluster's and the others'.
	hosts := instanceHosts(mc, plan.MaximumSize)
	if f.BrokerConfig != "" {
		n, e := checkBrokerConfig(mc, plan.brokerTOML, plan.MaximumSize, p.Child("brokerConfig"))
		errs = append(errs, e...)
		if n > 0 {
			hosts = n
		}
	}
	// Only rank 0 has a DNS name: every other broker must be its child (a
	// topology with minimalService is the schema's rule).
	if f.MinimalService {
		if hosts > entrypoint.TBONFanout+1 {
			errs = append(errs, field.Invalid(p.Child("minimalService"), true, fmt.Sprintf("gives only the lead broker a DNS name, and with more than %d brokers (this instance has up to %d%s) Flux makes some brokers parents of others: remove minimalService", entrypoint.TBONFanout+1, hosts, hostsWhere(mc))))
		}
	}
	return errs
}

// instanceHosts is the number of hosts in the instance's bootstrap list
// without a brokerConfig: this cluster's maximum size and every cluster that
// may join, a burst's root and clusters, or the custom host list.
func instanceHosts(mc *v1alpha2.MiniCluster, maximumSize int32) int {
	b := &mc.Spec.Flux.Bursting
	n := int(maximumSize)
	if b.LeadBroker != nil {
		n = int(b.LeadBroker.Size)
	}
	for _, c := range b.Clusters {
		n += int(c.Size)
	}
	if b.Hostlist != "" && b.LeadBroker == nil {
		if l, err := hostlist.Parse(b.Hostlist); err == nil {
			n = l.Len()
		}
	}
	return n
}

// hostsWhere says which fields the instance's hosts come from, for
// messages about their number.
func hostsWhere(mc *v1alpha2.MiniCluster) string {
	f := &mc.Spec.Flux
	switch {
	case f.BrokerConfig != "":
		return " hosts in spec.flux.brokerConfig"
	case f.Bursting.Hostlist != "":
		return " hosts in spec.flux.bursting.hostlist"
	case f.Bursting.LeadBroker != nil || len(f.Bursting.Clusters) > 0:
		return " hosts with spec.flux.bursting.clusters"
	}
	return ""
}

// maxZMQTimeout is the longest timeout in seconds the brokers can hand
// ZeroMQ, which takes milliseconds as a C int: past it the conversion
// overflows, ZeroMQ refuses the negative value and the broker cannot reach
// its parent.
const maxZMQTimeout = float64(math.MaxInt32) / 1000

const zmqTimeoutDetail = "is longer than ZeroMQ's limit of 2147483 seconds (about 24 days), and the brokers could not connect: use a shorter duration"

// fsdSeconds is a Flux Standard Duration that matches fsdRE, in seconds.
func fsdSeconds(fsd string) float64 {
	num := strings.TrimRight(fsd, "mshd")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	return v * map[string]float64{"": 1, "ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[fsd[len(num):]]
}
