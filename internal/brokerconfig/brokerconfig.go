// Package brokerconfig builds the Flux broker configuration (broker.toml) of
// a MiniCluster as data and encodes it with a TOML encoder, so no value can
// break the file's syntax.
package brokerconfig

import (
	"bytes"
	"fmt"

	"github.com/pelletier/go-toml/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// DefaultPort is the port every broker binds for the overlay network. The
// number's one source is v1alpha2.BrokerPort, in the API package, which must
// not import internal/; a test here holds the XRD's schema default to it.
const DefaultPort = v1alpha2.BrokerPort

// Options are what the broker configuration depends on.
type Options struct {
	// Paths are the files broker.toml points Flux at, in the pods.
	Paths Paths
	// Service is the headless Service (pod subdomain) and Namespace its
	// namespace: brokers reach each other at <host>.<service>.<namespace>.
	Service   string
	Namespace string
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// Hosts are the instance's hosts in rank order.
	Hosts hostlist.Hosts
	// QueuePolicy of fluxion's queue manager.
	QueuePolicy string
}

// Paths are where the pods keep what broker.toml names. They come from
// entrypoint.Layout, as the scripts' do, so the scripts write the files
// where Flux looks for them.
type Paths struct {
	// Resources is R, which the runner encodes at start.
	Resources string
	// CurveCert is the runner's copy of the CURVE certificate.
	CurveCert string
	// JobArchive is the job-archive module's database.
	JobArchive string
}

// Config is broker.toml. Field order is table order in the file.
type Config struct {
	Access    Access    `toml:"access"`
	Resource  Resource  `toml:"resource"`
	Bootstrap Bootstrap `toml:"bootstrap"`
	Archive   Archive   `toml:"archive"`
	Qmanager  Qmanager  `toml:"sched-fluxion-qmanager"`
}

// Access is the [access] table connector-local reads; Build lets the
// instance owner's jobs and guests in, as upstream does.
type Access struct {
	AllowGuestUser bool           `toml:"allow-guest-user"`
	AllowRootOwner bool           `toml:"allow-root-owner"`
	PrivateMode    bool           `toml:"private-mode,omitempty"`
	Roles          map[string]any `toml:"roles,omitempty"`
}

// Resource points at the resource set the runner encodes at start.
type Resource struct {
	Path string `toml:"path"`
}

// Bootstrap is the config-file bootstrap: each broker finds its rank by
// matching its hostname in Hosts. Flux accepts only these keys, with these
// types (boot_config_parse). Every key is optional, and Flux tells an
// absent key from an empty one, so the fields are pointers.
type Bootstrap struct {
	CurveCert      *string `toml:"curve_cert,omitempty"`
	DefaultPort    *int64  `toml:"default_port,omitempty"`
	DefaultBind    *string `toml:"default_bind,omitempty"`
	DefaultConnect *string `toml:"default_connect,omitempty"`
	EnableIPv6     *bool   `toml:"enable_ipv6,omitempty"`
	Hosts          []Host  `toml:"hosts,inline"`
}

// Host is one entry of the bootstrap hosts array. Flux accepts only these
// keys.
type Host struct {
	Host    *string `toml:"host,omitempty"`
	Bind    *string `toml:"bind,omitempty"`
	Connect *string `toml:"connect,omitempty"`
	Parent  *string `toml:"parent,omitempty"`
}

// Archive configures the job-archive module, as upstream does.
type Archive struct {
	DBPath      string `toml:"dbpath"`
	Period      string `toml:"period"`
	BusyTimeout string `toml:"busytimeout"`
}

// Qmanager configures fluxion's queue manager.
type Qmanager struct {
	QueuePolicy string `toml:"queue-policy"`
}

// Build returns the broker configuration for o.
func Build(o Options) Config {
	domain := o.ClusterDomain
	if domain == "" {
		domain = "cluster.local"
	}
	c := Config{
		Access:   Access{AllowGuestUser: true, AllowRootOwner: true},
		Resource: Resource{Path: o.Paths.Resources},
		Bootstrap: Bootstrap{
			CurveCert:      ptr(o.Paths.CurveCert),
			DefaultPort:    ptr(int64(DefaultPort)),
			DefaultBind:    ptr("tcp://eth0:%p"),
			DefaultConnect: ptr(fmt.Sprintf("tcp://%%h.%s.%s.svc.%s:%%p", o.Service, o.Namespace, domain)),
		},
		Archive: Archive{
			DBPath:      o.Paths.JobArchive,
			Period:      "1m",
			BusyTimeout: "50s",
		},
		Qmanager: Qmanager{QueuePolicy: o.QueuePolicy},
	}
	if lead := o.Hosts.Lead; lead != nil {
		// A burst cluster reaches rank 0 through the root's NodePort; its
		// own ranks use default_connect. Rank 0's bind is never used here.
		c.Bootstrap.Hosts = []Host{{
			Host:    ptr(lead.Address),
			Bind:    ptr(fmt.Sprintf("tcp://eth0:%d", lead.Port)),
			Connect: ptr(fmt.Sprintf("tcp://%s:%d", lead.Address, lead.Port)),
		}}
		if o.Hosts.Rest != "" {
			c.Bootstrap.Hosts = append(c.Bootstrap.Hosts, Host{Host: ptr(o.Hosts.Rest)})
		}
	} else {
		c.Bootstrap.Hosts = []Host{{Host: ptr(o.Hosts.All)}}
	}
	return c
}

// Marshal encodes c as TOML.
func (c Config) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	enc.SetIndentTables(false)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("cannot encode broker config: %w", err)
	}
	return b.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }
