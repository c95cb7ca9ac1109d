package convert

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// runnerIndex is the Flux runner's index: the container with runFlux, or
// the only one; -1 if there is none or more than one (the v1alpha2 schema
// then says what is wrong).
func runnerIndex(cs []v1alpha1Container) int {
	if len(cs) == 1 {
		return 0
	}
	found := -1
	for i, ct := range cs {
		if ct.RunFlux {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func (c *converter) container(ct *v1alpha1Container, path string, runner bool) v1alpha2.MiniClusterContainer {
	o := v1alpha2.MiniClusterContainer{
		Name:            ct.Name,
		Image:           ct.Image,
		ImagePullSecret: ct.ImagePullSecret,
		PullAlways:      ct.PullAlways,
		WorkingDir:      ct.WorkingDir,
		Command:         ct.Command,
		RunFlux:         ct.RunFlux,
		Launcher:        ct.Launcher,
		Batch:           ct.Batch,
		BatchRaw:        ct.BatchRaw,
		Logs:            ct.Logs,
		Ports:           ct.Ports,
		Environment:     ct.Environment,
		Secrets:         ct.Secrets,
	}
	if ct.LifeCycle != nil {
		o.LifeCycle = *ct.LifeCycle
	}
	if ct.Resources != nil {
		o.Resources = *ct.Resources
	}
	if sc := ct.SecurityContext; sc != nil {
		o.SecurityContext.Privileged = sc.Privileged
		o.SecurityContext.AddCapabilities = sc.AddCapabilities
	}
	if cm := ct.Commands; cm != nil {
		o.Commands = v1alpha2.Commands{Prefix: cm.Prefix, Init: cm.Init, Pre: cm.Pre, Post: cm.Post, WorkerPre: cm.WorkerPre, BrokerPre: cm.BrokerPre}
		if cm.RunFluxAsRoot != nil {
			c.note(path+".commands.runFluxAsRoot", "no v1alpha2 field: Flux runs as the container's own user (root unless the image or securityContext.runAsUser says otherwise), with no sudo and no flux user; dropped")
		}
	}
	if ct.PreCommand != "" {
		o.Commands.Pre = joinHooks(ct.PreCommand, o.Commands.Pre)
		c.note(path+".preCommand", "moved to commands.pre (before any commands.pre): it ran just before commands.pre on every broker pod (the certificate generator it also ran in is gone); if it sets up what flux itself needs (PATH, LD_LIBRARY_PATH), move it to commands.init, which runs before Flux is set up; lines setting asFlux do nothing now")
	}
	if ct.Cores != nil {
		c.note(path+".cores", "no v1alpha2 field: each broker offers Flux its runner's CPU limit (else its CPU request) in whole cores, else the node's; to give Flux N cores, set resources.limits.cpu: N on the runner; dropped")
	}
	if ct.Diagnostics != nil && !*ct.Diagnostics {
		c.note(path+".diagnostics", "no v1alpha2 field, and false is what v1alpha2 does: dropped")
	}
	if ct.Diagnostics != nil && *ct.Diagnostics {
		msg := "no v1alpha2 field: run the diagnostics yourself in the lead pod (kubectl exec ... -- flux proxy local:///mnt/flux/config/run/flux/local flux overlay status, flux lsattr -v, flux dmesg)"
		if runner && ct.Command == "" {
			msg += "; the claim sets spec.interactive: true so that the cluster stays up, as diagnostics' sleep infinity did"
		} else if runner {
			msg += "; the command now runs, where v1alpha1 ran the diagnostics instead"
		}
		c.note(path+".diagnostics", "%s", msg)
	}
	if ct.FluxUser != nil {
		msg := "no v1alpha2 field: Flux runs as the container's own user, with no sudo and no adduser"
		if ct.FluxUser.UID != nil {
			msg += fmt.Sprintf("; to run it as uid %d, set securityContext.runAsUser: %d (the hooks then run as that user too)", *ct.FluxUser.UID, *ct.FluxUser.UID)
		}
		c.note(path+".fluxUser", "%s; dropped", msg)
	}
	for _, k := range slices.Sorted(maps.Keys(ct.ExistingVolumes)) {
		v := ct.ExistingVolumes[k]
		if o.Volumes == nil {
			o.Volumes = map[string]v1alpha2.ContainerVolume{}
		}
		o.Volumes[k] = v1alpha2.ContainerVolume{Path: v.Path, ConfigMapName: v.ConfigMapName, Items: v.Items, ClaimName: v.ClaimName, SecretName: v.SecretName, ReadOnly: v.ReadOnly}
	}
	return o
}

// joinHooks runs a before b in one hook.
func joinHooks(a, b string) string {
	switch {
	case strings.TrimSpace(b) == "":
		return a
	case strings.TrimSpace(a) == "":
		return b
	}
	return strings.TrimRight(a, "\n") + "\n" + b
}
