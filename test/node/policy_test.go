package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// TestPolicyDefault is the platform's default policy on the real node, for
// a tenant who may create MiniClusters and nothing else, in a namespace
// nobody labelled: hello-world runs to Succeeded, and the same claim with
// a privileged container is refused by policy.podSecurity.defaultLevel
// (baseline where a namespace has no enforce label) with no pod ever
// created for it.
func TestPolicyDefault(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "policy-default")
	const user = "tenant-policy"
	if _, err := cp.AsTenant(context.Background(), ns, user); err != nil {
		t.Fatal(err)
	}
	// The tenant applies with its own rights (kubectl --as): MiniClusters
	// only.
	if out, err := kubectl(t, cp, "auth", "can-i", "create", "pods", "-n", ns, "--as", user); err == nil || strings.TrimSpace(out) != "no" {
		t.Fatalf("the tenant may create pods (%q, %v): want MiniClusters only", out, err)
	}

	t.Run("hello-world runs to Succeeded", func(t *testing.T) {
		mustKubectl(t, cp, "apply", "--as", user, "-f", manifest(t, "hello-world", ns, nil))
		wantColumns(t, cp, ns, "flux-sample", 3*time.Minute, map[string]string{"PHASE": "Succeeded"})
		if v := validCondition(t, cp, ns); v != "True" {
			t.Errorf("Valid %q, want True", v)
		}
		logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
		if !strings.Contains(logs, "hello world") {
			t.Errorf("the lead's log: want hello world in\n%s", logs)
		}
	})

	t.Run("privileged is refused and no pod appears", func(t *testing.T) {
		const name = "privileged"
		mustKubectl(t, cp, "apply", "--as", user, "-f", manifest(t, "hello-world", ns, func(o map[string]any) {
			o["metadata"].(map[string]any)["name"] = name
			setContainer(o, "securityContext", map[string]any{"privileged": true})
		}))
		jsonpath := `jsonpath={.status.conditions[?(@.type=="Valid")].status}|{.status.conditions[?(@.type=="Valid")].reason}|{.status.conditions[?(@.type=="Valid")].message}`
		var msg string
		eventually(t, time.Minute, "Valid=False (Policy) naming policy.podSecurity.defaultLevel", func() error {
			out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", jsonpath)
			if err != nil {
				return err
			}
			parts := strings.SplitN(out, "|", 3)
			if len(parts) != 3 || parts[0] != "False" || parts[1] != "Policy" || !strings.Contains(parts[2], "policy.podSecurity.defaultLevel") {
				return fmt.Errorf("Valid: %q", out)
			}
			msg = parts[2]
			return nil
		})
		for _, want := range []string{
			"refused by the platform's policy (policy.podSecurity.defaultLevel: baseline, for namespace " + ns,
			"spec.containers[0].securityContext.privileged",
			"pod-security.kubernetes.io/enforce=privileged",
			"nothing was composed or changed",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("Valid=False message: want %q in\n%s", want, msg)
			}
		}
		// Crossplane composes after the function's answer: give it the
		// time of a few reconciles to (wrongly) create the Job or a pod.
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			out := mustKubectl(t, cp, "get", "jobs,pods", "-n", ns, "-l", "job-name="+name, "-o", "name")
			if job := mustKubectl(t, cp, "get", "jobs", "-n", ns, "--field-selector", "metadata.name="+name, "-o", "name"); strings.TrimSpace(out+job) != "" {
				t.Fatalf("a refused MiniCluster has %q", out+job)
			}
			time.Sleep(time.Second)
		}
	})
}
