package convert

import (
	"fmt"
	"strings"
)

// headlessV1alpha1 is the v1alpha1 default of network.headlessName.
const headlessV1alpha1 = "flux-service"

// headless warns about commands that name the v1alpha1 default headless
// Service: v1alpha2's default is the MiniCluster's name.
func (c *converter) headless() {
	if c.out.Spec.Network.HeadlessName != "" {
		return
	}
	ns := c.out.Namespace
	if ns == "" {
		ns = "<namespace>"
	}
	check := func(path, s string) {
		if strings.Contains(s, headlessV1alpha1) {
			c.note(path, "mentions %s, the v1alpha1 default of spec.network.headlessName: in v1alpha2 the pods' subdomain defaults to the MiniCluster's name (%s-0.%s.%s.svc.cluster.local): change it, or set spec.network.headlessName: %s", headlessV1alpha1, c.out.Name, c.out.Name, ns, headlessV1alpha1)
		}
	}
	for i, ct := range c.in.Spec.Containers {
		p := fmt.Sprintf("spec.containers[%d]", i)
		check(p+".command", ct.Command)
		check(p+".preCommand", ct.PreCommand)
		if cm := ct.Commands; cm != nil {
			for _, h := range []struct{ name, v string }{{"init", cm.Init}, {"pre", cm.Pre}, {"post", cm.Post}, {"brokerPre", cm.BrokerPre}, {"workerPre", cm.WorkerPre}, {"prefix", cm.Prefix}} {
				check(p+".commands."+h.name, h.v)
			}
		}
	}
}
