package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/internal/brokerconfig"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// MaxConfigMapBytes is Kubernetes' limit on a ConfigMap's data.
const MaxConfigMapBytes = 1 << 20

// files builds the entrypoint ConfigMap's files: broker.toml, the host list
// and every script, checking the user strings that become words of a
// command and the ConfigMap's size.
func (p *Plan) files() field.ErrorList {
	mc := p.MiniCluster
	f := &mc.Spec.Flux
	// The scripts and broker.toml take their paths and defaulted values
	// from here, so neither decides one of its own.
	layout := p.Layout
	script := entrypoint.Plan{
		Layout:    layout,
		Name:      mc.Name,
		Size:      p.Size,
		Tasks:     mc.Spec.TasksValue(),
		Quorum:    p.BrokerQuorum,
		LogLevel:  f.LogLevelValue(),
		Resources: p.Resources,
	}
	commands, errs := entrypoint.Prepare(mc, p.Runner, script)
	if len(errs) > 0 {
		return errs
	}
	script.Commands = commands

	broker := f.BrokerConfig
	if broker == "" {
		b, err := brokerconfig.Build(brokerconfig.Options{
			Paths: brokerconfig.Paths{
				Resources:  layout.Resources(),
				CurveCert:  layout.CurveCert(),
				JobArchive: layout.JobArchive(),
			},
			Service:     p.Names.Service,
			Namespace:   p.Namespace,
			Hosts:       p.Hosts,
			QueuePolicy: f.Scheduler.QueuePolicy,
		}).Marshal()
		if err != nil {
			// Our own configuration always encodes; this is a bug, not a
			// user's mistake.
			return field.ErrorList{field.InternalError(field.NewPath("spec", "flux"), err)}
		}
		broker = string(b)
	}
	files := map[string]string{
		entrypoint.BrokerConfigKey: broker,
		entrypoint.HostlistKey:     p.Hosts.All,
		entrypoint.InitKey:         entrypoint.Init(mc, script),
	}
	for i := range mc.Spec.Containers {
		c := &mc.Spec.Containers[i]
		switch {
		case c.RunFlux:
			files[entrypoint.RunnerKey(i)] = entrypoint.Runner(mc, i, script)
		case !c.NoWrapEntrypoint:
			files[entrypoint.SidecarKey(i)] = entrypoint.Sidecar(mc, i, script)
		}
	}
	size := 0
	for k, v := range files {
		size += len(k) + len(v)
	}
	if size > MaxConfigMapBytes {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "containers"), "<scripts>", fmt.Sprintf("the scripts and hooks of spec.containers (commands, command, brokerConfig) add up to %d bytes, over Kubernetes' limit of %d bytes for the entrypoint ConfigMap: move long scripts into the image or into a ConfigMap mounted as a volume", size, MaxConfigMapBytes))}
	}
	p.Files = files
	return nil
}
