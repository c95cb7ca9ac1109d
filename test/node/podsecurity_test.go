package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// podSecurityNamespace is a namespace for one test whose Pod Security
// enforce label is level, as a multi-tenant cluster labels its tenants'.
func podSecurityNamespace(t *testing.T, cp *harness.ControlPlane, name, level string) string {
	t.Helper()
	ns := namespace(t, cp, name)
	mustKubectl(t, cp, "label", "namespace", ns, "pod-security.kubernetes.io/enforce="+level)
	return ns
}

// TestPodSecurityRestrictedNonRoot runs hello-world with a runner as uid
// 1000 in a namespace that enforces restricted: the API server admits its
// pods (the view's init container too) and it runs to Succeeded.
func TestPodSecurityRestrictedNonRoot(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := podSecurityNamespace(t, cp, "psa-restricted", "restricted")
	// The API server enforces the label: a pod as the image's user is refused.
	if out, err := kubectl(t, cp, "run", "probe", "-n", ns, "--image=busybox", "--dry-run=server"); err == nil || !strings.Contains(out+err.Error(), "violates PodSecurity") {
		t.Fatalf("a root pod in a restricted namespace: want the API server to refuse it (violates PodSecurity), got %q, %v", out, err)
	}
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, func(o map[string]any) {
		setContainer(o, "command", "id -u")
		setContainer(o, "securityContext", map[string]any{"runAsUser": int64(1000), "runAsGroup": int64(1000)})
	}))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
	if !strings.Contains(logs, "1000") {
		t.Errorf("the lead's log: want uid 1000 in\n%s", logs)
	}
	if v := validCondition(t, cp, ns); v != "True" {
		t.Errorf("Valid %q, want True", v)
	}
}

// TestPodSecurityRestrictedRoot applies the default hello-world (root) in a
// namespace that enforces restricted: the MiniCluster says Valid=False,
// naming the policy, the violations and the fields that fix them, and no
// Job is created.
func TestPodSecurityRestrictedRoot(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := podSecurityNamespace(t, cp, "psa-root", "restricted")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, nil))
	var msg string
	eventually(t, time.Minute, "Valid=False naming restricted", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionValid, "|", "status", "message"))
		if err != nil {
			return err
		}
		status, m, _ := strings.Cut(out, "|")
		if status != "False" || !strings.Contains(m, "enforce=restricted") {
			return fmt.Errorf("Valid %q: %q", status, m)
		}
		msg = m
		return nil
	})
	for _, want := range []string{
		"namespace " + ns + " sets Pod Security enforce=restricted:latest (label pod-security.kubernetes.io/enforce)",
		"allowPrivilegeEscalation != false", "spec.containers[0].securityContext.allowPrivilegeEscalation",
		"spec.flux.container.securityContext.allowPrivilegeEscalation",
		"runAsNonRoot != true", "seccompProfile", "unrestricted capabilities",
		"securityContext.runAsUser",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Valid=False message: want %q in\n%s", want, msg)
		}
	}
	// Crossplane composes after the function's answer: give it the time
	// of a few reconciles to (wrongly) create the Job.
	time.Sleep(10 * time.Second)
	if jobs := mustKubectl(t, cp, "get", "jobs", "-n", ns, "-o", "name"); strings.TrimSpace(jobs) != "" {
		t.Errorf("want no Job, have %q", jobs)
	}
}

// TestPodSecurityBaseline runs the default hello-world in a namespace that
// enforces baseline: the composed pods pass it.
func TestPodSecurityBaseline(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := podSecurityNamespace(t, cp, "psa-baseline", "baseline")
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, nil))
	wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
	if v := validCondition(t, cp, ns); v != "True" {
		t.Errorf("Valid %q, want True", v)
	}
}

// validCondition is the status of flux-sample's Valid condition.
func validCondition(t *testing.T, cp *harness.ControlPlane, ns string) string {
	t.Helper()
	return mustKubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionValid, "", "status"))
}
