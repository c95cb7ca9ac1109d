package convert

import (
	"fmt"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func (c *converter) flux() {
	f, o := c.in.Spec.Flux, &c.out.Spec.Flux
	if f != nil {
		switch root := strings.TrimSuffix(f.InstallRoot, "/"); root {
		case "":
		case "/usr":
			c.note("spec.flux.installRoot", "no v1alpha2 field: the brokers run the flux on PATH, /usr/bin/flux for this root; dropped")
		default:
			c.note("spec.flux.installRoot", "no v1alpha2 field: the brokers run the flux on PATH: add %s/bin to PATH in the runner's commands.init; dropped", root)
		}
		o.Wrap = f.Wrap
		o.ConnectTimeout = f.ConnectTimeout
		o.OptionFlags = f.OptionFlags
		o.MinimalService = f.MinimalService
		o.LogLevel = f.LogLevel
		o.CurveCertSecret = f.CurveCertSecret
		if f.CurveCert != "" {
			o.CurveCert = f.CurveCert
			c.note("spec.flux.curveCert", "kept, but the certificate's secret key is in the manifest: put it in a Secret (key curve.cert) and name it in spec.flux.curveCertSecret instead")
		}
		if f.Scheduler != nil {
			o.Scheduler.QueuePolicy = f.Scheduler.QueuePolicy
		}
		if f.MungeSecret != "" {
			c.note("spec.flux.mungeSecret", "no v1alpha2 meaning: Flux runs as the container's user without the IMP, so no munge key is needed; dropped")
		}
		if b := f.Bursting; b != nil {
			o.Bursting.Hostlist = b.Hostlist
			o.Bursting.Clusters = b.Clusters
			if lb := b.LeadBroker; lb != nil {
				if lb.Address != "" {
					o.Bursting.LeadBroker = &v1alpha2.FluxBroker{Address: lb.Address, Name: lb.Name, Size: lb.Size, Port: lb.Port}
				} else if *lb != (v1alpha1FluxBroker{}) {
					c.note("spec.flux.bursting.leadBroker", "dropped: without an address it marked the root cluster in v1alpha1 too")
				}
			}
		}
		if f.BrokerConfig != "" {
			o.BrokerConfig = f.BrokerConfig
			c.note("spec.flux.brokerConfig", "kept verbatim: its paths must be v1alpha2's: curve_cert = \"/mnt/flux/config/curve/curve.cert\", [resource] path = \"/mnt/flux/config/etc/flux/system/R\" (v1alpha1 used /etc/curve and /etc/flux)")
		}
	}
	// Flags and log level lived on the container in early v1alpha1.
	for i, ct := range c.in.Spec.Containers {
		p := fmt.Sprintf("spec.containers[%d]", i)
		if ct.FluxOptionFlags != "" {
			if o.OptionFlags == "" {
				o.OptionFlags = ct.FluxOptionFlags
				c.note(p+".fluxOptionFlags", "moved to spec.flux.optionFlags (its place since v1alpha1 0.1.0)")
			} else if o.OptionFlags != ct.FluxOptionFlags {
				c.note(p+".fluxOptionFlags", "dropped: spec.flux.optionFlags (%q) is set and wins", o.OptionFlags)
			}
		}
		if ct.FluxLogLevel != nil {
			if o.LogLevel == nil {
				o.LogLevel = ct.FluxLogLevel
				c.note(p+".fluxLogLevel", "moved to spec.flux.logLevel (its place since v1alpha1 0.1.0)")
			} else if *o.LogLevel != *ct.FluxLogLevel {
				c.note(p+".fluxLogLevel", "dropped: spec.flux.logLevel (%d) is set and wins", *o.LogLevel)
			}
		}
	}
}

// viewless makes the image's own Flux run the brokers, as in v1alpha1,
// whose images had to contain Flux: v1alpha2 otherwise copies Flux in from
// a view image, which must match the image's OS.
func (c *converter) viewless(runner int) {
	if runner < 0 {
		return
	}
	fc := &c.out.Spec.Flux.Container
	fc.Disable = true
	fc.Image = c.out.Spec.Containers[runner].Image
	img := fc.Image
	if img == "" {
		img = v1alpha2.DefaultImage
		fc.Image = img
	}
	c.note("spec.flux.container", "set disable: true and image: %s: a v1alpha1 image brings its own Flux, so the brokers run it (the init container, from the same image, only writes the configuration); to take Flux from a Flux view instead, remove both and pick a view image that matches the image's OS", img)
}
