package harness

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

// Gang scheduling (Kubernetes' Workload API, scheduling.k8s.io/v1beta1) is
// beta in Kubernetes 1.37 and off by default: one feature gate on the API
// server, the scheduler and the controller manager, and the beta API
// version on the API server. The control plane turns it on whenever its
// binaries are 1.37 or later, as a platform that offers gang scheduling
// would (docs/install.md), so the e2e and node tiers run what users run;
// an older kube-apiserver (the oldest supported version's tier) runs
// without it, as those clusters do.
const (
	workloadAPIMinor   = 37
	workloadAPIGate    = "--feature-gates=GenericWorkload=true"
	workloadAPIRuntime = "--runtime-config=scheduling.k8s.io/v1beta1=true"
	// podGroupProtection removes the finalizer the API server puts on every
	// PodGroup once no running pod names it: without it a deleted
	// MiniCluster's PodGroup stays Terminating.
	podGroupProtection = "podgroup-protection-controller"
)

var kubeVersionRE = regexp.MustCompile(`v1\.(\d+)\.`)

// kubeMinor is the minor version kube-apiserver at path says it is.
func kubeMinor(ctx context.Context, path string) (int, error) {
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s --version: %w: %s", path, err, out)
	}
	m := kubeVersionRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s --version: no Kubernetes version in %q", path, out)
	}
	return strconv.Atoi(string(m[1]))
}

// ServesWorkloadAPI tells whether the control plane serves
// scheduling.k8s.io/v1beta1 and its scheduler places PodGroups whole.
func (cp *ControlPlane) ServesWorkloadAPI() bool { return cp.kubeMinor >= workloadAPIMinor }

// KubernetesMinor is the control plane's Kubernetes minor version (37 for
// v1.37.2).
func (cp *ControlPlane) KubernetesMinor() int { return cp.kubeMinor }

// workloadAPIFlags are the flags that turn the Workload API on for one
// component: the gate for every component, the API version for the API
// server.
func (cp *ControlPlane) workloadAPIFlags(apiserver bool) []string {
	if !cp.ServesWorkloadAPI() {
		return nil
	}
	if apiserver {
		return []string{workloadAPIGate, workloadAPIRuntime}
	}
	return []string{workloadAPIGate}
}
