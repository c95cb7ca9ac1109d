package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestOperatorCRD pins what happens when the Flux Operator's CRD,
// miniclusters.flux-framework.org, already exists and the XRD is applied:
// the claim CRD Crossplane makes has the same name (docs/migration.md).
//
// The operator's CRD carries no owner reference, so Crossplane's XRD
// controller takes it over without a word: it overwrites the CRD with the
// claim CRD and makes the XRD its controller, and the XRD becomes
// Established and Offered as on an empty cluster. Every MiniCluster the
// operator made becomes a claim at once. Its composite cannot take over
// the operator's Job, ConfigMap and Service (each already has a controller,
// the MiniCluster), so the composite is Synced=False ("Unsynced resources:
// ...") with a Warning event per object naming both controllers, the claim
// stays Ready=False, and the operator's running Job is left as it was.
// Re-applying the operator's CRD with kubectl apply (as flux-cloud and an
// operator upgrade do) replaces the claim CRD's versions, but a client-side
// apply leaves the fields the operator's manifest does not name, the claim
// category among them, so Crossplane's watch sees the change and puts the
// claim CRD back within seconds; a replace of the whole CRD (kubectl
// replace) drops the category and stays until Crossplane next reconciles
// the XRD. Deleting the MiniCluster and creating it again from
// the same YAML moves it over.
//
// No operator runs here: the test creates the objects the operator would
// have made (reference shapes: Job <name>, ConfigMap <name>-entrypoint,
// Service <name>, each controlled by the MiniCluster).
func TestOperatorCRD(t *testing.T) {
	requireE2E(t)
	cp := startOwnControlPlane(t, harness.Options{Name: "operator-crd", SkipInstall: true})
	const ns = "operator"
	createNamespace(t, cp, ns)
	if err := cp.ApplyFile(ctx(t), "compositions/rbac.yaml"); err != nil {
		t.Fatal(err)
	}

	mc := exampleClaim(t, cp, helloWorld, ns, "")
	name := mc.GetName()
	var opJob *batchv1.Job
	step(t, "the operator's CRD and a MiniCluster it runs", func(t *testing.T) {
		// As flux-cloud installs the operator: kubectl apply of its manifest.
		kubectl(t, cp, "apply", "-f", operatorCRDFile(t))
		eventually(t, time.Minute, "the operator's CRD is established", func() error {
			return crdEstablished(t, cp)
		})
		// Established is the CRD's word; the client's discovery of the new
		// kind may lag it by a moment on a loaded machine.
		eventually(t, time.Minute, "the operator's MiniCluster is created", func() error {
			c := mc.DeepCopy()
			err := cp.Client.Create(ctx(t), c)
			if err != nil && !meta.IsNoMatchError(err) {
				t.Fatal(err)
			}
			if err == nil {
				mc = c // with its uid, which the operator's objects own it by
			}
			return err
		})
		opJob = operatorJob(mc)
		for _, o := range operatorObjects(mc, opJob) {
			if err := cp.Client.Create(ctx(t), o); err != nil {
				t.Fatal(err)
			}
		}
	})

	step(t, "the XRD takes the operator's CRD over without a word", func(t *testing.T) {
		if err := cp.ApplyFile(ctx(t), "compositions/definition.yaml"); err != nil {
			t.Fatal(err)
		}
		// Established and Offered, as on a cluster without the operator.
		if err := cp.WaitXRD(ctx(t), harness.XRDName, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, crd); err != nil {
			t.Fatal(err)
		}
		if c := metav1.GetControllerOf(crd); c == nil || c.Kind != "CompositeResourceDefinition" || c.Name != harness.XRDName {
			t.Errorf("CRD %s is controlled by %v, want the XRD %s", crd.Name, c, harness.XRDName)
		}
		if !isClaimCRD(crd) {
			t.Errorf("CRD %s still has the operator's schema, want the claim CRD's (printer columns SYNCED and READY)", crd.Name)
		}
		// Nothing on the XRD says that a CRD was taken over: the claim
		// CRD's controller (events OfferClaim) only says it applied it.
		for _, e := range eventsOf(t, cp, "CompositeResourceDefinition", harness.XRDName) {
			if e.Reason == "OfferClaim" && e.Type == corev1.EventTypeWarning {
				t.Errorf("Warning event on the XRD: %s: %s (Crossplane reports the takeover after all: update docs/migration.md)", e.Reason, e.Message)
			}
		}
		// The operator's MiniCluster is a claim now.
		eventually(t, time.Minute, "the operator's MiniCluster is bound to a composite", func() error {
			c, err := getClaim(t, cp, ns, name)
			if err != nil {
				return err
			}
			_, err = compositeOf(t, cp, c)
			return err
		})
	})

	step(t, "the function refuses to compose over the operator's Job, and says so", func(t *testing.T) {
		if err := cp.ApplyFile(ctx(t), "compositions/composition.yaml"); err != nil {
			t.Fatal(err)
		}
		// The function asks Crossplane for a Job of the name it would
		// compose, finds the operator's, and says so: Valid=False on the
		// claim, naming the operator's MiniCluster and the fix, and nothing
		// composed.
		want := fmt.Sprintf("Job %s/%s already exists, made by the Flux Operator for its MiniCluster %s (uid %s)", ns, name, name, mc.GetUID())
		eventually(t, 2*time.Minute, "the claim is Valid=False (JobExists) naming the operator's Job", func() error {
			c, err := getClaim(t, cp, ns, name)
			if err != nil {
				return err
			}
			if err := wantConditionReason(c, v1alpha2.ConditionValid, "False", v1alpha2.ReasonJobExists); err != nil {
				return err
			}
			if _, msg := condition(c, v1alpha2.ConditionValid); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "docs/migration.md") {
				return fmt.Errorf("Valid=False says %q, want it to start with %q and point at docs/migration.md", msg, want)
			}
			return nil
		})
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-curve-cert"}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
			t.Errorf("Secret %s-curve-cert: %v, want nothing composed", name, err)
		}
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		for typ, want := range map[string]string{"Ready": "False", string(v1alpha2.ConditionValid): "False"} {
			if err := wantCondition(c, typ, want); err != nil {
				t.Error(err)
			}
		}
		// The operator's objects are as they were.
		job := &batchv1.Job{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			t.Fatal(err)
		}
		if job.UID != opJob.UID {
			t.Errorf("Job %s was re-created", name)
		}
		if ctl := metav1.GetControllerOf(job); ctl == nil || ctl.Kind != "MiniCluster" || ctl.UID != mc.GetUID() {
			t.Errorf("Job %s is controlled by %v, want the MiniCluster (%s)", name, ctl, mc.GetUID())
		}
		if got := job.Spec.Template.Spec.Containers[0].Command; strings.Join(got, " ") != "/bin/bash /flux_operator/wait-0.sh" {
			t.Errorf("Job %s runs %q, want the operator's command", name, got)
		}
		cm := &corev1.ConfigMap{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-entrypoint"}, cm); err != nil {
			t.Fatal(err)
		}
		if _, ok := cm.Data["broker.toml"]; ok || cm.Data["wait-0"] != operatorScript {
			t.Errorf("ConfigMap %s-entrypoint was changed: keys %v", name, slices.Collect(maps.Keys(cm.Data)))
		}
	})

	step(t, "a replaced operator CRD stays until Crossplane reconciles the XRD", func(t *testing.T) {
		// As kubectl replace: the whole spec, the owner reference
		// Crossplane set left in place.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, crd); err != nil {
			t.Fatal(err)
		}
		crd.Spec = operatorCRD().Spec
		if err := cp.Client.Update(ctx(t), crd); err != nil {
			t.Fatal(err)
		}
		// Crossplane watches only CRDs in its "claim" category, which the
		// operator's spec drops: nothing puts the claim CRD back.
		consistently(t, 20*time.Second, "the operator's schema", func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, got); err != nil {
				return err
			}
			if isClaimCRD(got) {
				return fmt.Errorf("crossplane restored the claim CRD at once: update docs/migration.md")
			}
			return nil
		})
		// Its next reconcile of the XRD (here a restart; on a cluster also
		// the periodic resync) does.
		c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := cp.RestartCrossplane(c); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "Crossplane restores the claim CRD after a restart", func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, got); err != nil {
				return err
			}
			if !isClaimCRD(got) {
				return fmt.Errorf("CRD %s has the operator's schema", got.Name)
			}
			return nil
		})
	})

	step(t, "kubectl apply of the operator's CRD again: Crossplane puts the claim CRD back at once", func(t *testing.T) {
		// The operator's upgrade, or flux-cloud installing it again: the
		// real kubectl, a client-side apply of the same manifest.
		// What the apply makes of the claim CRD, before Crossplane acts on
		// it: the operator's versions, Crossplane's claim category kept.
		dry := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(kubectl(t, cp, "apply", "--dry-run=server", "-o", "yaml", "-f", operatorCRDFile(t))), dry); err != nil {
			t.Fatal(err)
		}
		if isClaimCRD(dry) || !slices.Contains(dry.Spec.Names.Categories, "claim") {
			t.Errorf("kubectl apply would make versions %v, categories %v: want the operator's versions and the claim category kept", dry.Spec.Versions, dry.Spec.Names.Categories)
		}
		start := time.Now()
		kubectl(t, cp, "apply", "-f", operatorCRDFile(t))
		eventually(t, 30*time.Second, "Crossplane restores the claim CRD without a restart", func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, got); err != nil {
				return err
			}
			if !isClaimCRD(got) {
				return fmt.Errorf("CRD %s has the operator's schema", got.Name)
			}
			// The claim category is what lets Crossplane's watch see the
			// apply: a client-side apply keeps what the manifest does not
			// name.
			if !slices.Contains(got.Spec.Names.Categories, "claim") {
				return fmt.Errorf("CRD %s lost the claim category: %v", got.Name, got.Spec.Names.Categories)
			}
			return nil
		})
		t.Logf("kubectl apply -> claim CRD back in %s", time.Since(start).Round(100*time.Millisecond))
	})

	step(t, "delete and re-create moves the MiniCluster over", func(t *testing.T) {
		if err := cp.Client.Delete(ctx(t), newClaim(ns, name)); err != nil {
			t.Fatal(err)
		}
		// The garbage collector removes the operator's objects with their
		// owner (for a kind it has just discovered, after a resync).
		eventually(t, 2*time.Minute, "the MiniCluster and the operator's objects are gone", func() error {
			var left []string
			for _, o := range []client.Object{newClaim(ns, name), &batchv1.Job{}, &corev1.ConfigMap{}, &corev1.Service{}} {
				n := name
				if _, ok := o.(*corev1.ConfigMap); ok {
					n += "-entrypoint"
				}
				if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: n}, o); !kerrors.IsNotFound(err) {
					left = append(left, fmt.Sprintf("%T %s (%v)", o, n, err))
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
		eventually(t, 2*time.Minute, "the re-created MiniCluster composes its objects and is Synced", func() error {
			c, err := getClaim(t, cp, ns, name)
			if err != nil {
				return err
			}
			xr, err := compositeOf(t, cp, c)
			if err != nil {
				return err
			}
			for _, typ := range []string{"Synced", string(v1alpha2.ConditionValid)} {
				if err := wantCondition(xr, typ, "True"); err != nil {
					return err
				}
			}
			objs, err := getComposed(t, cp, ns, name)
			if err != nil {
				return err
			}
			for _, o := range objs.objects() {
				if err := ownedBy(o, xr); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// operatorScript stands for the runner script in the operator's ConfigMap.
const operatorScript = "#!/bin/sh\n# the Flux Operator's wait.sh\n"

// operatorCRD is a CRD shaped like the Flux Operator's (group, kind,
// plural, version, scope, status and scale subresources); its schema keeps
// every field.
func operatorCRD() *apiextensionsv1.CustomResourceDefinition {
	keep := true
	selector := ".status.selector"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: harness.ClaimCRDName},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "flux-framework.org",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "MiniCluster", ListKind: "MiniClusterList", Plural: "miniclusters", Singular: "minicluster"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &keep},
						"status": {Type: "object", XPreserveUnknownFields: &keep},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size", LabelSelectorPath: &selector},
				},
			}},
		},
	}
}

// operatorCRDFile writes operatorCRD as the YAML manifest kubectl applies.
func operatorCRDFile(t *testing.T) string {
	t.Helper()
	crd := operatorCRD()
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	b, err := yaml.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "operator-crd.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// kubectl runs the real kubectl (apply is client-side by default) against
// cp and returns its standard output: $MC_KUBECTL, else the pinned one of
// hack/tools.sh.
func kubectl(t *testing.T, cp *harness.ControlPlane, args ...string) string {
	t.Helper()
	bin := os.Getenv(harness.EnvKubectl)
	if bin == "" {
		out, err := exec.Command(filepath.Join(cp.Options().RepoRoot, "hack", "tools.sh"), "path", "kubectl").Output()
		if err != nil {
			t.Fatalf("no kubectl (hack/tools.sh install kubernetes, or set %s): %v", harness.EnvKubectl, err)
		}
		bin = strings.TrimSpace(string(out))
	}
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if e := strings.TrimSpace(stderr.String()); e != "" {
		t.Logf("kubectl %s: %s", strings.Join(args, " "), e)
	}
	return stdout.String()
}

// operatorJob is the operator's Indexed Job of a MiniCluster, controlled by it.
func operatorJob(mc *unstructured.Unstructured) *batchv1.Job {
	name, size := mc.GetName(), int32(4)
	indexed := batchv1.IndexedCompletion
	backoff := int32(100)
	return &batchv1.Job{
		ObjectMeta: operatorMeta(mc, name),
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed, Parallelism: &size, Completions: &size, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "flux-operator", "app.kubernetes.io/name": name, "hpa-selector": name, "namespace": mc.GetNamespace()}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Subdomain:     name,
					Containers:    []corev1.Container{{Name: name, Image: "rockylinux:9", Command: []string{"/bin/bash", "/flux_operator/wait-0.sh"}}},
				},
			},
		},
	}
}

// operatorObjects are what the operator makes for a MiniCluster: its Job,
// the entrypoint ConfigMap (which also holds the curve certificate) and the
// headless Service.
func operatorObjects(mc *unstructured.Unstructured, job *batchv1.Job) []client.Object {
	name := mc.GetName()
	return []client.Object{
		job,
		&corev1.ConfigMap{ObjectMeta: operatorMeta(mc, name+"-entrypoint"), Data: map[string]string{"wait-0": operatorScript, "curve.cert": "# the operator's certificate\n"}},
		&corev1.Service{ObjectMeta: operatorMeta(mc, name), Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"job-name": name}}},
	}
}

func operatorMeta(mc *unstructured.Unstructured, name string) metav1.ObjectMeta {
	yes := true
	return metav1.ObjectMeta{Name: name, Namespace: mc.GetNamespace(), OwnerReferences: []metav1.OwnerReference{{
		APIVersion: claimGVK.GroupVersion().String(), Kind: claimGVK.Kind, Name: mc.GetName(), UID: mc.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes,
	}}}
}

func crdEstablished(t *testing.T, cp *harness.ControlPlane) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.ClaimCRDName}, crd); err != nil {
		return err
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("CRD %s is not established", crd.Name)
}

// isClaimCRD tells the claim CRD Crossplane renders from the operator's: it
// has Crossplane's SYNCED and READY printer columns.
func isClaimCRD(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		cols := map[string]bool{}
		for _, c := range v.AdditionalPrinterColumns {
			cols[c.Name] = true
		}
		if cols["SYNCED"] && cols["READY"] {
			return true
		}
	}
	return false
}

// eventsOf lists the events of a cluster-scoped object; they are recorded
// in the default namespace.
func eventsOf(t *testing.T, cp *harness.ControlPlane, kind, name string) []corev1.Event {
	l := &corev1.EventList{}
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.Client.List(c, l, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		t.Logf("cannot list events: %v", err)
		return nil
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}
