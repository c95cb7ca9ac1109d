package node_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

const (
	leadSelector = "job-name=flux-sample,batch.kubernetes.io/job-completion-index=0"
	podsSelector = "job-name=flux-sample"
)

// The README installs the Crossplane v2 shape (the MiniCluster is a
// namespaced composite) and says claims are for platforms that use them, so
// its flows run in both shapes. The claim shape's run first: the files
// before this one leave the node on a claim-shape control plane, and a
// machine has one node at a time, so the v2 flows come last here.

// TestReadmeRunAMiniClusterClaims is TestReadmeRunAMiniCluster on a
// platform that installed configuration-minicluster (claims).
func TestReadmeRunAMiniClusterClaims(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	readmeInstalled(t, cp)
	readmeHelloWorld(t, cp)
}

// TestReadmeInteractiveClaims is TestReadmeInteractive with claims.
func TestReadmeInteractiveClaims(t *testing.T) {
	readmeInteractive(t, nodePlane(t, driver.ShapeClaims))
}

// TestReadmeRunAMiniCluster runs the README's install checks and its "Run
// a MiniCluster" section command by command with hello-world, in namespace
// default as written, in the shape the README installs: apply, watch, logs,
// wait for the end, delete.
func TestReadmeRunAMiniCluster(t *testing.T) {
	cp := nodePlane(t, driver.ShapeV2)
	readmeInstalled(t, cp)
	readmeHelloWorld(t, cp)
}

// TestReadmeInteractive runs the README's interactive commands: wait for
// Ready, attach through the lead, submit across the brokers, delete.
func TestReadmeInteractive(t *testing.T) {
	readmeInteractive(t, nodePlane(t, driver.ShapeV2))
}

// TestReadmeQuickLook runs the README's render without a cluster, in the
// shape it installs, from the repository as a reader would: it prints the
// objects hello-world composes.
func TestReadmeQuickLook(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/minicluster", "render", "--shape", "v2", "-f", "examples/hello-world/claim.yaml")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./cmd/minicluster render --shape v2: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"kind: Job", "kind: Service", "kind: ConfigMap", "kind: Secret", "name: flux-sample\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's render: want %q in\n%s", want, out)
		}
	}
}

// readmeInstalled runs the README's checks of an installed cluster: the
// MiniCluster CRD belongs to an XRD (not the Flux Operator), and the XRD
// of the shape is established (and, for claims, offered).
func readmeInstalled(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	owner := mustKubectl(t, cp, "get", "crd", "miniclusters.flux-framework.org",
		"-o", `jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}{"\n"}`)
	if got := strings.TrimSpace(owner); got != "CompositeResourceDefinition" {
		t.Errorf("the README's CRD check printed %q, want CompositeResourceDefinition (installed)", got)
	}
	xrd, want := harness.XRDNameV2, map[string]string{"ESTABLISHED": "True"}
	if cp.Shape() == driver.ShapeClaims {
		xrd, want = harness.XRDName, map[string]string{"ESTABLISHED": "True", "OFFERED": "True"}
	}
	out := mustKubectl(t, cp, "get", "xrd", xrd)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get xrd %s printed %q", xrd, out)
	}
	got := parseColumns(lines[0], lines[1])
	for col, v := range want {
		if got[col] != v {
			t.Errorf("kubectl get xrd %s: %s %q, want %q\n%s", xrd, col, got[col], v, out)
		}
	}
}

func readmeHelloWorld(t *testing.T, cp *harness.ControlPlane) {
	const ns = "default"
	crossplaneColumn := "COMPOSITION"
	if cp.Shape() == driver.ShapeClaims {
		crossplaneColumn = "CONNECTION-SECRET"
	}
	start := time.Now()
	mustKubectl(t, cp, "apply", "-f", manifest(t, "hello-world", ns, nil))

	// kubectl get miniclusters -n default -w, read until the end.
	phases := []string{}
	maxBrokers := 0
	eventually(t, 3*time.Minute, "PHASE Succeeded", func() error {
		c, err := columns(t, cp, ns, "flux-sample")
		if err != nil {
			return err
		}
		if c["SIZE"] != "4" {
			return fmt.Errorf("SIZE %q, want 4", c["SIZE"])
		}
		// The README shows a composite's COMPOSITION column and says a
		// claim has CONNECTION-SECRET there.
		if _, ok := c[crossplaneColumn]; !ok {
			t.Fatalf("kubectl get miniclusters: no column %s in %v", crossplaneColumn, c)
		}
		if n, err := strconv.Atoi(c["BROKERS"]); err == nil && n > maxBrokers {
			maxBrokers = n
		}
		if len(phases) == 0 || phases[len(phases)-1] != c["PHASE"] {
			phases = append(phases, c["PHASE"])
		}
		if c["PHASE"] == "Failed" {
			return fmt.Errorf("PHASE Failed: %s", mustKubectl(t, cp, "describe", "minicluster", "flux-sample", "-n", ns))
		}
		if c["PHASE"] != "Succeeded" {
			return fmt.Errorf("PHASE %q", c["PHASE"])
		}
		return nil
	})
	t.Logf("apply -> Succeeded in %s; phases %v; most brokers seen up %d", time.Since(start).Round(100*time.Millisecond), phases, maxBrokers)
	t.Logf("kubectl get miniclusters -n %s:\n%s", ns, mustKubectl(t, cp, "get", "miniclusters", "-n", ns))
	if phases[0] != "Pending" && phases[0] != "" && phases[0] != "Running" {
		t.Errorf("first PHASE %q, want Pending or Running", phases[0])
	}

	// The lead's log carries the job's output.
	logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", leadSelector, "--tail=-1")
	if !strings.Contains(logs, "hello world") {
		t.Errorf("kubectl logs of the lead: want %q in\n%s", "hello world", logs)
	}
	if out := mustKubectl(t, cp, "logs", "-n", ns, "job/flux-sample"); out == "" {
		t.Error("kubectl logs job/flux-sample printed nothing")
	}
	// After the end the lead's pod is still there, and so is every broker
	// that ended before the lead did, each with a readable log. A follower
	// still running when the lead succeeds is stopped by the Job's
	// successPolicy and removed by the job controller: which followers that
	// is depends on whose pod status reaches the API server first.
	if lead := strings.Fields(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "-o", "name")); len(lead) != 1 {
		t.Errorf("after the end: %d pods of index 0, want the lead's one: %v", len(lead), lead)
	}
	pods := strings.Fields(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", podsSelector, "-o", "name"))
	if len(pods) > 4 {
		t.Errorf("after the end: %d broker pods, want at most 4: %v", len(pods), pods)
	}
	for _, p := range pods {
		if _, err := kubectl(t, cp, "logs", "-n", ns, p); err != nil {
			t.Errorf("after the end: %v", err)
		}
	}
	out := mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", podsSelector, "-L", "batch.kubernetes.io/job-completion-index")
	t.Logf("pods:\n%s", out)

	mustKubectl(t, cp, "wait", "minicluster/flux-sample", "-n", ns, "--for=condition=Finished", "--timeout=1m")
	if got := mustKubectl(t, cp, "get", "minicluster", "flux-sample", "-n", ns, "-o", "jsonpath={.status.phase}"); got != "Succeeded" {
		t.Errorf("status.phase %q, want Succeeded", got)
	}
	mustKubectl(t, cp, "wait", "minicluster/flux-sample", "-n", ns, "--for=jsonpath={.status.phase}=Succeeded", "--timeout=1m")

	deleteAndWaitGone(t, cp, ns, "flux-sample")
}

func readmeInteractive(t *testing.T, cp *harness.ControlPlane) {
	const ns = "default"
	mustKubectl(t, cp, "apply", "-f", manifest(t, "interactive", ns, nil))
	mustKubectl(t, cp, "wait", "minicluster/flux-sample", "-n", ns, "--for=condition=Ready", "--timeout=5m")
	eventually(t, time.Minute, "BROKERS 4, PHASE Running", func() error {
		c, err := columns(t, cp, ns, "flux-sample")
		if err != nil {
			return err
		}
		if c["BROKERS"] != "4" || c["PHASE"] != "Running" {
			return fmt.Errorf("BROKERS %q PHASE %q", c["BROKERS"], c["PHASE"])
		}
		return nil
	})
	lead := strings.TrimSpace(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector,
		"--field-selector=status.phase=Running", "-o", "name"))
	if lead == "" || strings.Contains(lead, "\n") {
		t.Fatalf("LEAD=%q, want one pod", lead)
	}
	inFlux := func(cmd string) string {
		return mustKubectl(t, cp, "exec", "-n", ns, lead, "--", "bash", "-c", `. /mnt/flux/flux-view.sh && flux proxy "$fluxsocket" `+cmd)
	}
	res := inFlux("flux resource list")
	t.Logf("flux resource list:\n%s", res)
	if !strings.Contains(res, "flux-sample-[0-3]") {
		t.Errorf("flux resource list: want the four brokers flux-sample-[0-3] in\n%s", res)
	}
	out := inFlux("flux submit -N4 --watch hostname")
	for i := range 4 {
		if want := fmt.Sprintf("flux-sample-%d", i); !strings.Contains(out, want) {
			t.Errorf("flux submit -N4 --watch hostname: want %s in\n%s", want, out)
		}
	}
	inFlux("flux submit -N2 hostname")
	jobs := inFlux("flux jobs -a")
	if strings.Count(jobs, "hostname") < 2 {
		t.Errorf("flux jobs -a: want both jobs in\n%s", jobs)
	}
	deleteAndWaitGone(t, cp, ns, "flux-sample")
}

// deleteAndWaitGone deletes a MiniCluster as the README does and waits
// until its composed objects and pods are gone.
func deleteAndWaitGone(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	start := time.Now()
	mustKubectl(t, cp, "delete", "minicluster", name, "-n", ns)
	eventually(t, 2*time.Minute, "every object and pod of "+name+" gone", func() error {
		var left []string
		// What Crossplane composed carries the composite's label; the
		// pods, the Job's.
		composed := "jobs,services,configmaps,secrets,pods"
		if cp.ServesWorkloadAPI() {
			composed += ",podgroups.scheduling.k8s.io,workloads.scheduling.k8s.io"
		}
		for _, q := range [][]string{
			{composed, "-l", "crossplane.io/composite"},
			{"pods", "-l", "job-name=" + name},
		} {
			out, err := kubectl(t, cp, append([]string{"get", q[0], "-n", ns, "-o", "name"}, q[1:]...)...)
			if err != nil {
				return err
			}
			left = append(left, strings.Fields(out)...)
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %v", left)
		}
		return nil
	})
	t.Logf("delete -> gone in %s", time.Since(start).Round(100*time.Millisecond))
}
