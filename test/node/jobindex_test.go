package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// upstreamBrokerService is the Flux Operator's bursting recipe's Service
// (examples/experimental/bursting/broker-eks/service/broker-service.yaml
// at flux-framework/flux-operator 0d75cef8), unchanged: it selects the lead
// broker by job-index alone.
const upstreamBrokerService = `apiVersion: v1
kind: Service
metadata:
  name: lead-broker-service
spec:
  type: NodePort
  ports:
  - port: 8050
    nodePort: 30093
  selector:
    job-index: "0"
`

// providerOwnRBAC stands in for Crossplane's RBAC manager, which grants a
// provider's service account its own CRDs; compositions/burst-rbac.yaml
// grants the rest.
const providerOwnRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: minicluster-burst-own-crds
rules:
  - apiGroups: ["bursting.flux-framework.org"]
    resources: ["*"]
    verbs: ["*"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: minicluster-burst-own-crds
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: minicluster-burst-own-crds
subjects:
  - kind: ServiceAccount
    name: minicluster-burst
    namespace: crossplane-system
`

// startProviderAs runs cmd/provider as the service account that
// compositions/burst-rbac.yaml binds, with a token of it, as the provider
// package runs in a cluster.
func startProviderAs(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := harness.BuildBinary(ctx, root, "./cmd/provider", dir, "provider")
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-f", filepath.Join(root, "package", "provider", "crds"))
	if _, err := kubectl(t, cp, "get", "namespace", "crossplane-system"); err != nil {
		mustKubectl(t, cp, "create", "namespace", "crossplane-system")
	}
	mustKubectl(t, cp, "apply", "-f", filepath.Join(root, "compositions", "burst-rbac.yaml"))
	own := filepath.Join(dir, "own.yaml")
	if err := os.WriteFile(own, []byte(providerOwnRBAC), 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-f", own)
	if _, err := kubectl(t, cp, "get", "serviceaccount", "minicluster-burst", "-n", "crossplane-system"); err != nil {
		mustKubectl(t, cp, "create", "serviceaccount", "minicluster-burst", "-n", "crossplane-system")
	}
	token := strings.TrimSpace(mustKubectl(t, cp, "create", "token", "minicluster-burst", "-n", "crossplane-system", "--duration=1h"))
	kc := filepath.Join(dir, "provider.kubeconfig")
	b, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, b, 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "--kubeconfig", kc, "config", "set-credentials", "minicluster-burst", "--token", token)
	mustKubectl(t, cp, "--kubeconfig", kc, "config", "set-context", "--current", "--user", "minicluster-burst")

	p, err := cp.StartProvider(ctx, bin, kc, "--debug")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
	})
}

// TestJobIndexSelectsLead runs upstream's bursting NodePort Service,
// selecting job-index: "0", next to a MiniCluster that opts in to job-index
// (spec.pod.labels flux-framework.org/job-index: "true"): with the provider
// installed (as burst-rbac.yaml's service account), every broker pod
// carries job-index=<its index>, and the Service's EndpointSlice holds the
// lead broker's address and no other.
func TestJobIndexSelectsLead(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "job-index")
	startProviderAs(t, cp)

	svc := filepath.Join(t.TempDir(), "broker-service.yaml")
	if err := os.WriteFile(svc, []byte(upstreamBrokerService), 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-n", ns, "-f", svc)
	// job-index is opt-in, per MiniCluster: the provider watches and
	// labels only the pods that carry flux-framework.org/job-index: "true".
	optIn := func(mc map[string]any) {
		if err := unstructured.SetNestedField(mc, "true", "spec", "pod", "labels", "flux-framework.org/job-index"); err != nil {
			t.Fatal(err)
		}
	}
	mustKubectl(t, cp, "apply", "-f", manifest(t, "interactive", ns, optIn))
	mustKubectl(t, cp, "wait", "minicluster/flux-sample", "-n", ns, "--for=condition=Ready", "--timeout=5m")

	eventually(t, time.Minute, "every broker pod labelled job-index=<its index>", func() error {
		out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", podsSelector, "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.batch\.kubernetes\.io/job-completion-index}/{.metadata.labels.job-index}{"\n"}{end}`)
		if err != nil {
			return err
		}
		pods := strings.Fields(out)
		if len(pods) != 4 {
			return fmt.Errorf("%d pods: %v", len(pods), pods)
		}
		for _, p := range pods {
			name, idx, _ := strings.Cut(p, "=")
			if completion, label, _ := strings.Cut(idx, "/"); completion == "" || label != completion {
				return fmt.Errorf("pod %s: completion index %q, job-index %q", name, completion, label)
			}
		}
		return nil
	})

	leadIP := strings.TrimSpace(mustKubectl(t, cp, "get", "pods", "-n", ns, "-l", leadSelector, "-o", "jsonpath={.items[*].status.podIP}"))
	if leadIP == "" || strings.Contains(leadIP, " ") {
		t.Fatalf("lead pod IP %q, want one", leadIP)
	}
	eventually(t, time.Minute, "the Service's EndpointSlice holds the lead "+leadIP+" alone", func() error {
		out, err := kubectl(t, cp, "get", "endpointslices", "-n", ns, "-l", "kubernetes.io/service-name=lead-broker-service",
			"-o", `jsonpath={range .items[*].endpoints[*]}{.addresses[0]}{"\n"}{end}`)
		if err != nil {
			return err
		}
		got := strings.Fields(out)
		sort.Strings(got)
		if len(got) != 1 || got[0] != leadIP {
			return fmt.Errorf("endpoints %v, want [%s]", got, leadIP)
		}
		return nil
	})
	t.Logf("kubectl get pods -L job-index:\n%s", mustKubectl(t, cp, "get", "pods", "-n", ns, "-L", "job-index,batch.kubernetes.io/job-completion-index"))
	deleteAndWaitGone(t, cp, ns, "flux-sample")
}
