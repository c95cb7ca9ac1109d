package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"maps"
	"slices"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// container is the one place a container declaration becomes a container,
// for the brokers' containers, the services and the init container alike,
// so that image pull policy, resources, security context, hooks, ports and
// environment mean the same in every pod. The caller says what it runs,
// what it mounts, and gives its resources as the plan parsed them.
func container(c *v1alpha2.MiniClusterContainer, res corev1.ResourceRequirements, command []string, mounts []corev1.VolumeMount) corev1.Container {
	return corev1.Container{
		Name:            c.Name,
		Image:           c.Image,
		ImagePullPolicy: pullPolicy(c.PullAlways, c.ImagePullPolicy),
		WorkingDir:      c.WorkingDir,
		Command:         command,
		Stdin:           true,
		TTY:             true,
		Lifecycle:       lifecycleHooks(c.LifeCycle),
		Resources:       res,
		SecurityContext: securityContext(c.SecurityContext),
		Ports:           containerPorts(c.Ports),
		Env:             env(c),
		VolumeMounts:    mounts,
	}
}

// initContainer installs the broker configuration and copies the Flux view
// into the shared volumes before any broker container starts.
func initContainer(in Input) corev1.Container {
	view := &in.MiniCluster.Spec.Flux.Container
	out := container(&v1alpha2.MiniClusterContainer{
		Name:            view.Name,
		Image:           view.Image,
		PullAlways:      view.PullAlways,
		WorkingDir:      view.WorkingDir,
		SecurityContext: view.SecurityContext,
	}, in.ViewResources(), []string{"/bin/bash", in.Layout.Entrypoint(entrypoint.InitKey)}, viewMounts(in))
	// It runs to completion on its own; nobody attaches to it.
	out.Stdin, out.TTY = false, false
	if uid, gid := in.ViewUID, in.ViewGID; uid != nil {
		if out.SecurityContext == nil {
			out.SecurityContext = &corev1.SecurityContext{}
		}
		out.SecurityContext.RunAsUser = uid
		if gid != nil {
			out.SecurityContext.RunAsGroup = gid
		}
	}
	return out
}

// brokerContainer is container i of spec.containers in a broker pod. The
// runner is named after the MiniCluster and runs its runner script; any
// other container runs its sidecar script, which waits for the broker,
// unless it keeps its image's entrypoint (noWrapEntrypoint).
func brokerContainer(in Input, i int) corev1.Container {
	mc := in.MiniCluster
	c := &mc.Spec.Containers[i]
	var command []string
	switch {
	case c.RunFlux:
		command = []string{"/bin/bash", in.Layout.Entrypoint(entrypoint.RunnerKey(i))}
	case !c.NoWrapEntrypoint:
		command = []string{"/bin/bash", in.Layout.Entrypoint(entrypoint.SidecarKey(i))}
	}
	out := container(c, in.ContainerResources(i), command, brokerMounts(in, c))
	if c.RunFlux {
		out.Name = mc.Name
		out.Env = append(out.Env, viewFitEnv(mc, c)...)
		// Ready means this pod's broker is up: its local socket exists.
		out.ReadinessProbe = &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"/bin/sh", "-c", "test -S " + in.Layout.Socket()},
			}},
			PeriodSeconds:    5,
			FailureThreshold: 1,
		}
	}
	return out
}

// serviceContainer is a container of spec.services. Services are not
// brokers: they mount only their own volumes and run their command through
// a shell, or their image's entrypoint when they have none.
func serviceContainer(c *v1alpha2.MiniClusterContainer, res corev1.ResourceRequirements) corev1.Container {
	var command []string
	if c.Command != "" {
		command = []string{"/bin/sh", "-c", c.Command}
	}
	return container(c, res, command, userMounts(c))
}

func pullPolicy(pullAlways bool, policy string) corev1.PullPolicy {
	switch {
	case pullAlways:
		return corev1.PullAlways
	case policy != "":
		return corev1.PullPolicy(policy)
	default:
		return corev1.PullIfNotPresent
	}
}

// lifecycleHooks run through a shell, so a hook can have arguments.
func lifecycleHooks(lc v1alpha2.LifeCycle) *corev1.Lifecycle {
	if lc.PostStartExec == "" && lc.PreStopExec == "" {
		return nil
	}
	out := &corev1.Lifecycle{}
	if lc.PostStartExec != "" {
		out.PostStart = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", lc.PostStartExec}}}
	}
	if lc.PreStopExec != "" {
		out.PreStop = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", lc.PreStopExec}}}
	}
	return out
}

// securityContext leaves out what the claim does not ask for, so that an
// empty one renders as none rather than as {}. Both spellings of added
// capabilities go into capabilities.add.
func securityContext(sc v1alpha2.SecurityContext) *corev1.SecurityContext {
	out := &corev1.SecurityContext{
		RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup, RunAsNonRoot: sc.RunAsNonRoot,
		AllowPrivilegeEscalation: sc.AllowPrivilegeEscalation, ReadOnlyRootFilesystem: sc.ReadOnlyRootFilesystem,
		SeccompProfile: seccompProfile(sc.SeccompProfile), SELinuxOptions: seLinuxOptions(sc.SELinuxOptions),
		AppArmorProfile: appArmorProfile(sc.AppArmorProfile),
	}
	if sc.Privileged {
		out.Privileged = ptr.To(true)
	}
	if sc.ProcMount != "" {
		out.ProcMount = ptr.To(corev1.ProcMountType(sc.ProcMount))
	}
	caps := &corev1.Capabilities{Add: capabilities(plan.AddedCapabilities(sc))}
	if sc.Capabilities != nil {
		caps.Drop = capabilities(sc.Capabilities.Drop)
	}
	if caps.Add != nil || caps.Drop != nil {
		out.Capabilities = caps
	}
	if *out == (corev1.SecurityContext{}) {
		return nil
	}
	return out
}

func capabilities(cs []v1alpha2.Capability) []corev1.Capability {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Capability, 0, len(cs))
	for _, c := range cs {
		out = append(out, corev1.Capability(c))
	}
	return out
}

func seccompProfile(p *v1alpha2.SeccompProfile) *corev1.SeccompProfile {
	if p == nil {
		return nil
	}
	return &corev1.SeccompProfile{Type: corev1.SeccompProfileType(p.Type), LocalhostProfile: p.LocalhostProfile}
}

func appArmorProfile(p *v1alpha2.AppArmorProfile) *corev1.AppArmorProfile {
	if p == nil {
		return nil
	}
	return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileType(p.Type), LocalhostProfile: p.LocalhostProfile}
}

func seLinuxOptions(o *v1alpha2.SELinuxOptions) *corev1.SELinuxOptions {
	if o == nil {
		return nil
	}
	return &corev1.SELinuxOptions{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

// restrict adds to a container what the restricted Pod Security level
// requires of it and the claim left unset (see plan.Restricted; the pod's
// part is restrictPod's).
func restrict(c *corev1.Container) {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	if len(sc.Capabilities.Drop) == 0 {
		sc.Capabilities.Drop = []corev1.Capability{"ALL"}
	}
}

func containerPorts(ports []int32) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		out = append(out, corev1.ContainerPort{ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	return out
}

// env sets plain variables first, then those from Secrets, each sorted, so
// the order does not depend on map iteration.
func env(c *v1alpha2.MiniClusterContainer) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
		out = append(out, corev1.EnvVar{Name: k, Value: c.Environment[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Secrets)) {
		s := c.Secrets[k]
		out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key},
		}})
	}
	return out
}

// viewFitEnv names the runner's image and the Flux view's, for the message
// of a runner whose view cannot run in its image (entrypoint.viewFits).
func viewFitEnv(mc *v1alpha2.MiniCluster, c *v1alpha2.MiniClusterContainer) []corev1.EnvVar {
	if mc.Spec.Flux.Container.Disable {
		return nil
	}
	return []corev1.EnvVar{
		{Name: entrypoint.EnvAppImage, Value: c.Image},
		{Name: entrypoint.EnvViewImage, Value: mc.Spec.Flux.Container.Image},
	}
}
