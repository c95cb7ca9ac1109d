package node_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// How an example ends on the node.
type outcome int

const (
	// succeeds: PHASE Succeeded, and the lead's log has every logHas.
	succeeds outcome = iota
	// staysUp: a persistent cluster: Ready with every broker up, then
	// deleted by the test.
	staysUp
	// staysPending: the pods cannot be scheduled here, as the example
	// documents (cluster-specific scheduler, nodes or sizes).
	staysPending
	// notRun: the example needs what no image here can give; the reason
	// says what.
	notRun
	// leadDone: the lead's runner ran the job and exited 0 (its log has
	// every logHas), but the pod goes on: a sidecar container of the
	// runner's pod keeps running, so the pod, the Job and the MiniCluster
	// never end. The reason says so; the example is deleted by the test.
	leadDone
	// refused: the platform's policy (the node's Composition has the
	// default one) refuses it: Valid=False with a message naming every
	// refusalHas, and no Job.
	refused
)

type exampleCase struct {
	reason string
	want   outcome
	logHas []string
	// takes is how long it may take to succeed (default 5 minutes).
	takes time.Duration
	// cleanedUp: spec.cleanup removes the Job and its pods once it ends
	// (so there is no log left to read).
	cleanedUp bool
	// refusalHas: what the Valid=False message of a refused example names.
	refusalHas []string
	// setup makes what the example expects to exist on this machine
	// (volumes) in the test's namespace, and may adapt the manifest to
	// it. What the platform provides for the example (its cluster.yaml)
	// is applied before, by applyPlatform.
	setup func(t *testing.T, cp *harness.ControlPlane, ns string) func(map[string]any)
}

// examples is every directory of examples/ with a claim, and what it does
// on the node. TestEveryExampleIsCovered keeps it complete.
var examples = map[string]exampleCase{
	"batch":             {reason: "every line of the batch runs as a job", want: succeeds},
	"bursting-root":     {reason: "the root's own brokers are its quorum; the burst hosts stay down until a burst cluster joins", want: staysUp},
	"bursting-hostlist": {reason: "the brokers of the hostlist up; extra hosts down", want: staysUp},
	"bursting-burst": {reason: "its brokers connect to the root cluster's lead broker (flux.bursting.leadBroker), which the burst controller wires " +
		"across clusters: test/e2e's TestBurst checks the wiring on two control planes; a second node is not possible on one machine", want: notRun},
	"custom-config":      {reason: "the user's broker.toml keys are read by the brokers", want: succeeds, logHas: []string{"hello world"}},
	"debug":              {reason: "verbose entrypoints", want: succeeds, logHas: []string{"hello world"}},
	"disable-view":       {reason: "the application image brings Flux", want: succeeds, logHas: []string{"lmp"}},
	"elastic":            {reason: "interactive, elastic", want: staysUp},
	"emptydir":           {reason: "a memory emptyDir at /dev/shm", want: succeeds, logHas: []string{"/dev/shm"}},
	"existing-volumes":   {reason: "a PVC, a ConfigMap and a Secret mounted", want: succeeds, logHas: []string{"settings.toml"}, setup: existingVolumes},
	"flux-resource-list": {reason: "flux resource list as the job", want: succeeds, logHas: []string{"flux-sample-[0-3]"}},
	// The sidecar's `flux jobs -a` ends at once, and a pod with an ended
	// container is not Ready: BROKERS stays empty until the runner's
	// 200 s sleep ends the MiniCluster.
	"flux-sidecar":    {reason: "a Flux sidecar beside a runner that sleeps 200 s", want: succeeds, logHas: []string{"JOBID"}},
	"hello-world":     {reason: "the README's example", want: succeeds, logHas: []string{"hello world"}},
	"hooks":           {reason: "commands hooks and the strace wrapper", want: succeeds, logHas: []string{"running on"}},
	"interactive":     {reason: "the README's interactive example", want: staysUp},
	"kueue":           {reason: "queued by Kueue in its kueue.yaml's queues (made by setup), admitted whole, runs", want: succeeds, logHas: []string{"hello world"}, setup: kueueExample},
	"lammps":          {reason: "lmp from the application image (a stand-in)", want: succeeds, logHas: []string{"lmp (stand-in"}},
	"minimal-service": {reason: "a ClusterIP Service for the lead", want: succeeds, logHas: []string{"hello-world"}},
	"nginx-service":   {reason: "the services Pod's nginx, reached by DNS from the job", want: succeeds, logHas: []string{"Welcome to nginx"}},
	"nginx-sidecar-service": {reason: "an nginx sidecar reached on localhost; the nginx container keeps the lead's pod running after the job, " +
		"so the MiniCluster never ends (a sidecar should be a native sidecar container: issue 20)", want: leadDone, logHas: []string{"Welcome to nginx"}},
	"osu-benchmarks": {reason: "osu_latency from the working directory (a stand-in)", want: succeeds, logHas: []string{"osu_latency (stand-in"}},
	"pod-settings": {reason: "its cluster.yaml gives it the labelled ServiceAccount and Secrets, but the node's Composition has the default policy, " +
		"which allows neither the scheduler fluence nor ServiceAccount tokens (its input.yaml is the policy that would): refused, nothing composed",
		want: refused, refusalHas: []string{"policy.schedulers", "spec.pod.schedulerName", "policy.serviceAccounts.automountToken", "spec.pod.automountServiceAccountToken"}},
	"pokemon": {reason: "pokemon from the application image (a stand-in)", want: succeeds, logHas: []string{"pokemon (stand-in"}},
	"post":    {reason: "commands.post on every broker", want: succeeds, logHas: []string{"hello world"}},
	"restful-api": {reason: "the Flux RESTful API is a Python web application (uvicorn, FastAPI) on flux-core's Python bindings in its own image: " +
		"no image here brings it (and the stand-in flux has no Python bindings)", want: notRun},
	"script":      {reason: "a whole script as the job", want: succeeds},
	"singularity": {reason: "singularity from the application image (a stand-in)", want: succeeds, logHas: []string{"singularity (stand-in"}},
	"snakemake": {reason: "snakemake from the application image (a stand-in), the workflow on a hostPath; cleanup: true removes the Job and its pods at the end",
		want: succeeds, cleanedUp: true, setup: hostPathVolume},
	"timed":   {reason: "logging.timed with /usr/bin/time", want: succeeds, logHas: []string{"hello world"}},
	"volumes": {reason: "a hostPath volume (a directory of the test's instead of the host's /data)", want: succeeds, logHas: []string{"from-the-host"}, setup: hostPathVolume},
}

// TestEveryExampleIsCovered: every example with a claim has a case.
func TestEveryExampleIsCovered(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := filepath.Glob(filepath.Join(root, "examples", "*", "claim.yaml"))
	for _, c := range claims {
		name := filepath.Base(filepath.Dir(c))
		if _, ok := examples[name]; !ok {
			t.Errorf("examples/%s has no case in the real-node examples table", name)
		}
	}
	for name := range examples {
		if _, err := os.Stat(filepath.Join(root, "examples", name, "claim.yaml")); err != nil {
			t.Errorf("case %s: %v", name, err)
		}
	}
}

// TestEveryExample applies every example, side by side (each in its own
// namespace), with the node's images, and checks that its pods start and its
// brokers come up, or that it ends as documented.
func TestEveryExample(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	// Four at a time fit the node's two cores without starving the
	// control plane.
	slots := make(chan struct{}, 4)
	for name, tc := range examples {
		t.Run(name, func(t *testing.T) {
			if tc.want == notRun {
				t.Skip(tc.reason)
			}
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			runExample(t, cp, name, tc)
		})
	}
}

func runExample(t *testing.T, cp *harness.ControlPlane, example string, tc exampleCase) {
	ns := namespace(t, cp, "ex-"+example)
	applyPlatform(t, cp, example, ns)
	var edit func(map[string]any)
	if tc.setup != nil {
		edit = tc.setup(t, cp, ns)
	}
	f := manifest(t, example, ns, edit)
	mustKubectl(t, cp, "apply", "-f", f)
	name := claimName(t, f)
	size := fmt.Sprint(sizeOf(t, f))
	describe := func() string {
		out, _ := kubectl(t, cp, "describe", "minicluster", name, "-n", ns)
		pods, _ := kubectl(t, cp, "get", "pods", "-n", ns, "-o", "wide")
		return out + "\n" + pods
	}
	switch tc.want {
	case succeeds:
		takes := tc.takes
		if takes == 0 {
			takes = 5 * time.Minute
		}
		eventually(t, takes, example+" Succeeded", func() error {
			c, err := columns(t, cp, ns, name)
			if err != nil {
				return err
			}
			if c["PHASE"] == "Failed" {
				t.Fatalf("%s failed:\n%s", example, describe())
			}
			if c["PHASE"] != "Succeeded" {
				return fmt.Errorf("PHASE %q", c["PHASE"])
			}
			return nil
		})
		if tc.cleanedUp {
			eventually(t, time.Minute, example+"'s Job and pods removed", func() error {
				out, err := kubectl(t, cp, "get", "jobs,pods", "-n", ns, "-o", "name")
				if err != nil || strings.TrimSpace(out) != "" {
					return fmt.Errorf("still there: %q (%v)", out, err)
				}
				return nil
			})
		}
		logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", "job-name="+name+",batch.kubernetes.io/job-completion-index=0", "--tail=-1", "--all-containers")
		for _, want := range tc.logHas {
			if !strings.Contains(logs, want) {
				t.Errorf("the lead's log: want %q in\n%s", want, logs)
			}
		}
	case staysUp:
		eventually(t, 4*time.Minute, example+" Ready with its brokers up", func() error {
			c, err := columns(t, cp, ns, name)
			if err != nil {
				return err
			}
			ready, _ := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			// Every broker up, not only the quorum Ready waits for.
			if c["PHASE"] != "Running" || c["BROKERS"] != size || ready != "True" {
				return fmt.Errorf("PHASE %q BROKERS %q (want %s) Ready %q", c["PHASE"], c["BROKERS"], size, ready)
			}
			return nil
		})
	case leadDone:
		lead := "job-name=" + name + ",batch.kubernetes.io/job-completion-index=0"
		eventually(t, 4*time.Minute, example+"'s lead runner done", func() error {
			code, err := kubectl(t, cp, "get", "pods", "-n", ns, "-l", lead, "-o",
				`jsonpath={.items[*].status.containerStatuses[?(@.name=="`+name+`")].state.terminated.exitCode}`)
			if err != nil {
				return err
			}
			if code != "0" {
				return fmt.Errorf("the lead's runner: exit code %q", code)
			}
			return nil
		})
		logs := mustKubectl(t, cp, "logs", "-n", ns, "-l", lead, "-c", name, "--tail=-1")
		for _, want := range tc.logHas {
			if !strings.Contains(logs, want) {
				t.Errorf("the lead's log: want %q in\n%s", want, logs)
			}
		}
	case staysPending:
		// Nothing runs, however long it waits: the MiniCluster stays
		// Pending and no pod is bound to the node.
		time.Sleep(30 * time.Second)
		c, err := columns(t, cp, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if c["PHASE"] != "Pending" {
			t.Errorf("PHASE %q, want Pending", c["PHASE"])
		}
		out := mustKubectl(t, cp, "get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}")
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				t.Errorf("pod %s bound to node %s: want none to run", f[0], f[1])
			}
		}
	case refused:
		var msg string
		eventually(t, time.Minute, example+" Valid=False", func() error {
			out, err := kubectl(t, cp, "get", "minicluster", name, "-n", ns, "-o", conditionJSONPath(v1alpha2.ConditionValid, "|", "status", "message"))
			if err != nil {
				return err
			}
			status, m, _ := strings.Cut(out, "|")
			if status != "False" {
				return fmt.Errorf("Valid %q: %q", status, m)
			}
			msg = m
			return nil
		})
		for _, want := range tc.refusalHas {
			if !strings.Contains(msg, want) {
				t.Errorf("Valid=False message: want %q in\n%s", want, msg)
			}
		}
		// Give Crossplane the time of a few reconciles to (wrongly)
		// create the Job.
		time.Sleep(10 * time.Second)
		if jobs := mustKubectl(t, cp, "get", "jobs", "-n", ns, "-o", "name"); strings.TrimSpace(jobs) != "" {
			t.Errorf("want no Job, have %q", jobs)
		}
	case notRun:
		// Skipped before it was applied.
	}
	deleteAndWaitGone(t, cp, ns, name)
}

func readManifest(t *testing.T, f string) *unstructured.Unstructured {
	t.Helper()
	objs, err := harness.ReadObjects(f)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v", f, err)
	}
	return objs[0]
}

func claimName(t *testing.T, f string) string { return readManifest(t, f).GetName() }

func sizeOf(t *testing.T, f string) int64 { return specInt(t, f, "size") }

// specInt reads an integer of a manifest's spec, however the YAML decoder
// typed it.
func specInt(t *testing.T, f, field string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(readManifest(t, f).Object, "spec", field)
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	default:
		return 0
	}
}

// applyPlatform applies what the docs tell a platform to provide for the
// example, its cluster.yaml (driver.ExampleFixtures), in the test's
// namespace: a Namespace's labels go on the test's namespace, every other
// object is made in it.
func applyPlatform(t *testing.T, cp *harness.ControlPlane, example, ns string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cluster, _, err := driver.ExampleFixtures(filepath.Join(root, "examples", example))
	if err != nil {
		t.Fatal(err)
	}
	var objs []byte
	for _, o := range cluster {
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
			args := []string{"label", "namespace", ns, "--overwrite"}
			for _, k := range slices.Sorted(maps.Keys(o.GetLabels())) {
				args = append(args, k+"="+o.GetLabels()[k])
			}
			if len(args) > 4 {
				mustKubectl(t, cp, args...)
			}
			continue
		}
		o = o.DeepCopy()
		o.SetNamespace(ns)
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(append(objs, "---\n"...), b...)
	}
	if len(objs) == 0 {
		return
	}
	f := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(f, objs, 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-f", f)
}

// existingVolumes makes what examples/existing-volumes mounts besides the
// Secret its cluster.yaml provides: a bound PersistentVolumeClaim "data"
// (a hostPath PersistentVolume in the test's directory: there is no
// provisioner) and the ConfigMap, the tenant's own.
func existingVolumes(t *testing.T, cp *harness.ControlPlane, ns string) func(map[string]any) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // G302: the pods' users read it
		t.Fatal(err)
	}
	pv := "pv-" + ns
	objs := fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  storageClassName: manual
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %[2]s}
  claimRef: {namespace: %[3]s, name: data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %[3]s}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: manual
  volumeName: %[1]s
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: flux-sample-settings, namespace: %[3]s}
data: {settings.toml: "mode = 'test'\n"}
`, pv, dir, ns)
	f := filepath.Join(t.TempDir(), "volumes.yaml")
	if err := os.WriteFile(f, []byte(objs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.toml"), []byte("on the volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, "apply", "-f", f)
	t.Cleanup(func() { _, _ = kubectl(t, cp, "delete", "pv", pv, "--wait=false") })
	return nil
}

// hostPathVolume points examples/volumes' hostPath at a directory of the
// test's, so the host's /data is neither needed nor made.
func hostPathVolume(t *testing.T, _ *harness.ControlPlane, _ string) func(map[string]any) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // G302: the pods' users read it
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "from-the-host"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return func(o map[string]any) {
		cs, _, _ := unstructured.NestedSlice(o, "spec", "containers")
		for _, c := range cs {
			_ = unstructured.SetNestedField(c.(map[string]any), dir, "volumes", "data", "hostPath")
		}
		_ = unstructured.SetNestedSlice(o, cs, "spec", "containers")
	}
}
