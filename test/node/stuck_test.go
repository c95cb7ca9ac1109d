package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Pods that do not come up: for each cause, the MiniCluster's own Brokers
// condition (what kubectl describe minicluster shows) says which brokers
// and why, within 30 seconds of the cause showing on the pods or the Job.

// sayWithin is how soon after Kubernetes shows a cause the MiniCluster
// must say it.
const sayWithin = 30 * time.Second

// stuckManifest is hello-world at size 2 in ns, with after applied once
// the node's images are set (so that it can name an image the node lacks).
func stuckManifest(t *testing.T, ns string, after func(map[string]any)) string {
	t.Helper()
	f := manifest(t, "hello-world", ns, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, int64(2), "spec", "size")
	})
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	o := map[string]any{}
	if err := yaml.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	after(o)
	out, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	f = filepath.Join(t.TempDir(), "stuck.yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// podsShow is a check that the MiniCluster's pods show want somewhere in
// the jsonpath expression path.
func podsShow(t *testing.T, cp *harness.ControlPlane, ns, path, want string) func() error {
	return func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample", "-o", "jsonpath="+path)
		if err != nil {
			return err
		}
		if !strings.Contains(out, want) {
			return fmt.Errorf("pods show %q, want %q", out, want)
		}
		return nil
	}
}

// jobFailedCreate is a check that the job controller has recorded that it
// cannot create the Job's pods.
func jobFailedCreate(t *testing.T, cp *harness.ControlPlane, ns string) func() error {
	return func() error {
		out, err := kubectl(t, cp, "get", "events", "-n", ns, "--field-selector", "reason=FailedCreate,involvedObject.kind=Job,involvedObject.name=flux-sample", "-o", "name")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) == "" {
			return fmt.Errorf("no FailedCreate event on Job flux-sample yet")
		}
		return nil
	}
}

// wantStuck waits until cause shows (at most 3 minutes), then until the
// MiniCluster's Brokers condition has reason and a message with each of
// want, at most sayWithin later; kubectl describe minicluster then shows
// that message, and the MiniCluster's events a warning with it.
func wantStuck(t *testing.T, cp *harness.ControlPlane, ns string, cause func() error, reason v1alpha2.ConditionReason, want ...string) {
	t.Helper()
	eventually(t, 3*time.Minute, "the cause shows on the pods or the Job", cause)
	var msg string
	eventually(t, sayWithin, "the MiniCluster says why its brokers are not up", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o",
			conditionJSONPath(v1alpha2.ConditionBrokers, `{"\n"}`, "reason", "message"))
		if err != nil {
			return err
		}
		got, m, _ := strings.Cut(out, "\n")
		if got != string(reason) {
			return fmt.Errorf("Brokers reason %q, want %q (message %q)", got, reason, m)
		}
		for _, w := range want {
			if !strings.Contains(m, w) {
				return fmt.Errorf("Brokers message %q, want %q in it", m, w)
			}
		}
		msg = m
		return nil
	})
	t.Logf("Brokers: %s: %s", reason, msg)
	describe := mustKubectl(t, cp, "describe", "minicluster", "flux-sample", "-n", ns)
	if !strings.Contains(describe, msg) {
		t.Errorf("kubectl describe minicluster does not show the message %q:\n%s", msg, describe)
	}
	eventually(t, sayWithin, "a warning event on the MiniCluster", func() error {
		out, err := kubectl(t, cp, "get", "events", "-n", ns, "--field-selector", "type=Warning,involvedObject.name=flux-sample,involvedObject.kind=MiniCluster",
			"-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
		if err != nil {
			return err
		}
		if !strings.Contains(out, msg) {
			return fmt.Errorf("warnings %q, want %q", out, msg)
		}
		return nil
	})
	if c, err := columns(t, cp, ns, "flux-sample"); err == nil && c["PHASE"] != "Pending" {
		t.Errorf("PHASE %q, want Pending while the brokers do not come up", c["PHASE"])
	}
}

// TestStuckImageNeverPull: an application image the node does not have,
// with imagePullPolicy Never.
func TestStuckImageNeverPull(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-image")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		setContainer(o, "image", "localhost/minicluster-e2e/missing:1")
		setContainer(o, "imagePullPolicy", "Never")
	}))
	wantStuck(t, cp, ns, podsShow(t, cp, ns, "{..state.waiting.reason}", "ErrImageNeverPull"),
		"ErrImageNeverPull", "0 of 2 brokers up; flux-sample-0, flux-sample-1: ErrImageNeverPull: ", `"localhost/minicluster-e2e/missing:1" is not present`)
}

// TestStuckQuotaNeedsLimits: a ResourceQuota on limits.cpu, and a claim
// that sets no limits: the Job cannot create a pod.
func TestStuckQuotaNeedsLimits(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-quota")
	mustKubectl(t, cp, "create", "quota", "cpu", "-n", ns, "--hard=limits.cpu=4")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(map[string]any) {}))
	wantStuck(t, cp, ns, jobFailedCreate(t, cp, ns),
		v1alpha2.ReasonFailedCreate, "0 of 2 brokers up; the Job cannot create its pods: ", "must specify limits.cpu")
}

// TestStuckLimitRange: a LimitRange whose max cpu per container is below
// the claim's container's limit: LimitRanger admission refuses the pods.
func TestStuckLimitRange(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-limitrange")
	applyObject(t, cp, map[string]any{
		"apiVersion": "v1",
		"kind":       "LimitRange",
		"metadata":   map[string]any{"name": "cpu-max", "namespace": ns},
		"spec": map[string]any{"limits": []any{map[string]any{
			"type": "Container",
			"max":  map[string]any{"cpu": "500m"},
		}}},
	})
	const refusal = "maximum cpu usage per Container is 500m"
	eventually(t, sayWithin, "the LimitRange refuses a pod over its max", refusedPod(t, cp, ns,
		`{"spec":{"containers":[{"name":"probe","image":"`+harness.AppImageRef+`","resources":{"limits":{"cpu":"1"}}}]}}`, refusal))
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		setContainer(o, "resources", map[string]any{"limits": map[string]any{"cpu": "1"}})
	}))
	wantStuck(t, cp, ns, jobFailedCreate(t, cp, ns),
		v1alpha2.ReasonFailedCreate, "0 of 2 brokers up; the Job cannot create its pods: ", refusal+", but limit is 1")
}

// TestStuckMissingServiceAccount: spec.pod.serviceAccountName names a
// ServiceAccount the namespace does not have. The default policy refuses
// it outright; under a policy that names it (policy.serviceAccounts.names)
// the Job is composed, and the MiniCluster says why it has no pods.
func TestStuckMissingServiceAccount(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-sa")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, "flux-runner", "spec", "pod", "serviceAccountName")
	}))
	// Under the default policy a ServiceAccount that does not exist is
	// refused before anything is composed.
	eventually(t, time.Minute, "Valid=False (Policy) naming policy.serviceAccounts", func() error {
		out, err := kubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o",
			conditionJSONPath(v1alpha2.ConditionValid, `{"\n"}`, "reason", "message"))
		if err != nil {
			return err
		}
		if reason, msg, _ := strings.Cut(out, "\n"); reason != string(v1alpha2.ReasonPolicy) || !strings.Contains(msg, "(policy.serviceAccounts)") || !strings.Contains(msg, `ServiceAccount "flux-runner" does not exist`) {
			return fmt.Errorf("Valid: %q", out)
		}
		return nil
	})
	// A platform whose policy names the ServiceAccount its tenants' jobs
	// run as, which it provisions in each namespace (late, here): the Job
	// is composed and cannot create its pods.
	t.Cleanup(func() {
		if _, err := cp.SetPolicy(context.Background(), cp.Options().Policy); err != nil {
			t.Errorf("cannot restore the policy: %v", err)
		}
	})
	if _, err := cp.SetPolicy(context.Background(), map[string]any{
		"serviceAccounts": map[string]any{"names": []any{"default", "flux-runner"}},
	}); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "annotate", "minicluster", "flux-sample", "-n", ns, "--overwrite", "e2e.flux-framework.org/policy=flux-runner")
	wantStuck(t, cp, ns, jobFailedCreate(t, cp, ns),
		v1alpha2.ReasonFailedCreate, "the Job cannot create its pods: ", `serviceaccount "flux-runner" not found`)
}

// TestStuckUnschedulable: a nodeSelector no node matches.
func TestStuckUnschedulable(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-schedule")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		_ = unstructured.SetNestedStringMap(o, map[string]string{"minicluster.test/pool": "gpu"}, "spec", "pod", "nodeSelector")
	}))
	wantStuck(t, cp, ns, podsShow(t, cp, ns, `{..conditions[?(@.type=="PodScheduled")].reason}`, "Unschedulable"),
		"Unschedulable", "flux-sample-0, flux-sample-1: Unschedulable: ", "node affinity/selector")
}

// TestStuckViewInitFails: a Flux view image that has no view: the init
// container that copies it fails, and the Job keeps replacing the pods.
func TestStuckViewInitFails(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-view")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, harness.AppImageRef, "spec", "flux", "container", "image")
	}))
	wantStuck(t, cp, ns, podsShow(t, cp, ns, "{..initContainerStatuses[*].state.terminated.reason}", "Error"),
		"Init:Error", "Init:Error: container flux-view exited with 1")
}

// TestStuckCrashLoop: every broker's runner exits before its broker starts
// (commands.pre fails), and the Job replaces the pods again and again.
func TestStuckCrashLoop(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-crash")
	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(o map[string]any) {
		setContainer(o, "commands", map[string]any{"pre": "echo crashing on purpose; exit 7"})
	}))
	wantStuck(t, cp, ns, podsShow(t, cp, ns, "{..status.phase}", "Failed"),
		"Error", "container flux-sample exited with 7")
	// The Job replaces the failed pods: the message stays as it was, so the
	// MiniCluster's status is not rewritten with each new pod.
	brokers := func() string {
		return mustKubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionBrokers, "", "message"))
	}
	before := brokers()
	eventually(t, 2*time.Minute, "a failed broker replaced, and the replacement failed", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", "job-name=flux-sample", "--field-selector=status.phase=Failed", "-o", "name")
		if err != nil {
			return err
		}
		if n := len(strings.Fields(out)); n < 3 {
			return fmt.Errorf("%d failed pods", n)
		}
		return nil
	})
	if after := brokers(); after != before {
		t.Errorf("the Brokers message changed while the Job replaced pods for the same cause:\nbefore %q\nafter  %q", before, after)
	}
}

// writeObject writes obj as YAML to a file for kubectl -f.
func writeObject(t *testing.T, obj any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "object.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// applyObject applies obj with kubectl.
func applyObject(t *testing.T, cp *harness.ControlPlane, obj any) {
	t.Helper()
	mustKubectl(t, cp, "apply", "-f", writeObject(t, obj))
}

// refusedPod is a check that the API server refuses, with want in its
// answer, a pod in ns (created with --dry-run=server, so nothing stays)
// with overrides applied: that what refuses pods there is in force before
// the MiniCluster's pods are created.
func refusedPod(t *testing.T, cp *harness.ControlPlane, ns, overrides, want string) func() error {
	return func() error {
		args := []string{"run", "probe", "-n", ns, "--image=" + harness.AppImageRef, "--restart=Never", "--dry-run=server"}
		if overrides != "" {
			args = append(args, "--overrides="+overrides)
		}
		out, err := kubectl(t, cp, args...)
		if err == nil {
			return fmt.Errorf("the pod was admitted: %s", strings.TrimSpace(out))
		}
		if !strings.Contains(err.Error(), want) {
			return fmt.Errorf("the pod was refused without %q: %w", want, err)
		}
		return nil
	}
}
