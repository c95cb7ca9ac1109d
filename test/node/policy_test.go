package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
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
		jsonpath := conditionJSONPath(v1alpha2.ConditionValid, "|", "status", "reason", "message")
		var msg string
		eventually(t, time.Minute, "Valid=False (Policy) naming policy.podSecurity.defaultLevel", func() error {
			out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", jsonpath)
			if err != nil {
				return err
			}
			parts := strings.SplitN(out, "|", 3)
			if len(parts) != 3 || parts[0] != "False" || parts[1] != string(v1alpha2.ReasonPolicy) || !strings.Contains(parts[2], "policy.podSecurity.defaultLevel") {
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

// TestPolicyGraftV2 is issue 33's orphan graft on the real node, where the
// pod it composed did run: privileged, every capability, the node's /
// mounted, an unlabelled Secret in its environment. The tenant (kubectl
// --as, MiniClusters only) creates a harmless interactive MiniCluster,
// deletes it with --cascade=orphan (its Job keeps running, its objects lose
// their owner), and creates it again with spec.crossplane.resourceRefs
// naming those objects and such a services Pod. The MiniCluster is refused
// (Valid=False, ForeignObject), no services Pod is ever created, and the
// orphans stay unowned. Then hello-world runs to Succeeded in the same
// namespace, which nobody labelled: the refusal closed the graft, not the
// namespace.
//
// The graft needs the v2 shape (a claim has no resourceRefs of its own), so
// this test moves the node to a v2 plane, which costs a plane start.
func TestPolicyGraftV2(t *testing.T) {
	cp := nodePlane(t, driver.ShapeV2)
	ns := namespace(t, cp, "policy-graft")
	const (
		user = "tenant-graft"
		name = "orph"
		loot = "graft-loot"
	)
	if _, err := cp.AsTenant(context.Background(), ns, user); err != nil {
		t.Fatal(err)
	}
	// An admin's Secret, unlabelled: what the services Pod would read.
	mustKubectl(t, cp, "create", "secret", "generic", loot, "-n", ns, "--from-literal=password=not-for-tenants")
	orphans := []string{"job/" + name, "configmap/" + name + "-entrypoint", "secret/" + name + "-curve-cert", "service/" + name}
	owners := func() (map[string]string, error) {
		out, err := kubectl(t, cp, append([]string{"get", "-n", ns, "-o",
			`jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.ownerReferences}{"\n"}{end}`}, orphans...)...)
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			k, v, _ := strings.Cut(l, "=")
			m[k] = v
		}
		if len(m) != len(orphans) {
			return nil, fmt.Errorf("want %d objects, got %q", len(orphans), out)
		}
		return m, nil
	}

	t.Run("the orphan graft is refused and its services Pod never exists", func(t *testing.T) {
		mustKubectl(t, cp, "apply", "--as", user, "-f", manifest(t, "interactive", ns, withSpec(name, `size: 2`)))
		wantColumns(t, cp, ns, name, 3*time.Minute, map[string]string{"PHASE": "Running"})

		mustKubectl(t, cp, "delete", "minicluster", name, "-n", ns, "--as", user, "--cascade=orphan", "--timeout=2m")
		eventually(t, 2*time.Minute, "the Job, ConfigMap, Secret and Service have no owner", func() error {
			m, err := owners()
			if err != nil {
				return err
			}
			for k, v := range m {
				if v != "" {
					return fmt.Errorf("%s is still owned: %s", k, v)
				}
			}
			return nil
		})

		mustKubectl(t, cp, "apply", "--as", user, "-f", manifest(t, "interactive", ns, withSpec(name, harness.GraftHostileSpec(name, loot))))
		servicesPod := func() string {
			return strings.TrimSpace(mustKubectl(t, cp, "get", "pods", "-n", ns, "--field-selector", "metadata.name="+name+"-services", "-o", "name"))
		}
		jsonpath := conditionJSONPath(v1alpha2.ConditionValid, "|", "status", "reason", "message")
		var msg string
		eventually(t, 2*time.Minute, "Valid=False (ForeignObject)", func() error {
			out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", jsonpath)
			if err != nil {
				return err
			}
			parts := strings.SplitN(out, "|", 3)
			if len(parts) == 3 && parts[0] == "True" {
				m, _ := owners()
				t.Fatalf("the graft is Valid=True (%s): composed, want Valid=False (ForeignObject); owners now %v; services Pod %q", parts[2], m, servicesPod())
			}
			if len(parts) != 3 || parts[0] != "False" || parts[1] != string(v1alpha2.ReasonForeignObject) {
				return fmt.Errorf("Valid: %q", out)
			}
			msg = parts[2]
			return nil
		})
		for _, want := range []string{"Job " + ns + "/" + name, "spec.crossplane.resourceRefs", "nothing was composed or changed"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Valid=False message: want %q in\n%s", want, msg)
			}
		}
		// Crossplane composes after the function's answer: give it the
		// time of a few reconciles to (wrongly) create the Pod or adopt.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if p := servicesPod(); p != "" {
				t.Fatalf("the refused graft has %s", p)
			}
			m, err := owners()
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range m {
				if v != "" {
					t.Fatalf("%s was adopted by the refused graft: %s", k, v)
				}
			}
			time.Sleep(time.Second)
		}
		if out := mustKubectl(t, cp, "get", "events", "-n", ns, "--field-selector", "involvedObject.name="+name+"-services", "-o", "name"); strings.TrimSpace(out) != "" {
			t.Errorf("events of Pod %s-services: %s; want none, the Pod never existed", name, out)
		}
		// The graft is refused; the tenant deletes it, which leaves the
		// orphans (nothing owns them), and an admin deletes those, as
		// the message tells: the orphaned brokers still hold the node.
		mustKubectl(t, cp, "delete", "minicluster", name, "-n", ns, "--as", user, "--timeout=2m")
		if m, err := owners(); err != nil {
			t.Errorf("the orphans after the refused MiniCluster was deleted: %v", err)
		} else {
			for k, v := range m {
				if v != "" {
					t.Errorf("%s is owned after the refused MiniCluster was deleted: %s", k, v)
				}
			}
		}
		mustKubectl(t, cp, append([]string{"delete", "-n", ns, "--cascade=background", "--timeout=2m"}, orphans...)...)
	})

	t.Run("hello-world still runs to Succeeded in the unlabelled namespace", func(t *testing.T) {
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
}

// withSpec is a manifest edit: the MiniCluster named name, with spec (YAML)
// merged into its spec (maps merge, the rest is replaced).
func withSpec(name, spec string) func(map[string]any) {
	return func(o map[string]any) {
		u := unstructured.Unstructured{Object: o}
		u.SetName(name)
		extra := map[string]any{}
		if err := yaml.Unmarshal([]byte(spec), &extra); err != nil {
			panic(fmt.Sprintf("withSpec %s: %v", name, err))
		}
		s, _, _ := unstructured.NestedMap(o, "spec")
		mergeInto(s, extra)
		_ = unstructured.SetNestedMap(o, s, "spec")
	}
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
