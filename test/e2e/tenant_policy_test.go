package e2e_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/e2e/harness"
)

// TestTenantPolicy is the hostile tenant (DESIGN.md §7, 5b) on the real
// control plane: a user who may create MiniClusters, and nothing else, in
// a namespace nobody labelled tries every escape the platform's default
// policy closes. Each is refused with Valid=False (reason Policy) naming
// the policy key and the claim's field, nothing is composed for it, and
// nothing outside the namespace changes. The tenant cannot create pods,
// Secrets or RoleBindings itself: MiniClusters are its only way in, so the
// function's policy is the guardrail. What a platform opens with labels
// composes once it labels; a running MiniCluster outlives a tighter
// policy, which only refuses it more pods.
func TestTenantPolicy(t *testing.T) { testTenantPolicy(t, controlPlane(t)) }

// TestTenantPolicyV2 is TestTenantPolicy in the Crossplane v2 shape, where
// the tenant creates the namespaced composite itself.
func TestTenantPolicyV2(t *testing.T) { testTenantPolicy(t, controlPlaneV2(t)) }

// policyEscape is one thing a tenant asks for that the default policy
// refuses.
type policyEscape struct {
	reason string
	// spec is merged into hello-world's spec (maps merge, the rest is
	// replaced), as YAML.
	spec string
	// key is the policy key the refusal names, fields the claim's fields.
	key    string
	fields []string
	// opens is what a platform labels to allow it ("" if no label does).
	opens string
}

const (
	opensNamespace      = "namespace"
	opensServiceAccount = "serviceaccount"
	opensSecrets        = "secrets"
)

func testTenantPolicy(t *testing.T, cp *harness.ControlPlane) {
	const (
		ns     = "tenant-policy"
		user   = "mallory"
		hello  = "hello"
		sa     = "builder"
		token  = "builder-token"
		foreig = hello + "-curve-cert" // another MiniCluster's certificate
	)
	top := t
	createNamespace(t, cp, ns)
	tenant, err := cp.AsTenant(ctx(t), ns, user)
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string]policyEscape{
		"privileged": {
			reason: "A privileged container with the node's root filesystem and its PID and IPC namespaces: Pod Security baseline, the policy's default level where the namespace sets none, refuses it.",
			spec: `
pod: {hostPID: true, hostIPC: true}
containers:
  - image: ubuntu:noble
    command: echo hello world
    securityContext: {privileged: true}
    volumes: {root: {hostPath: /, path: /host}}`,
			key:    "policy.podSecurity.defaultLevel",
			fields: []string{"spec.containers[0].securityContext.privileged", "spec.pod.hostPID", "spec.pod.hostIPC", "spec.containers[0].volumes[root]"},
			opens:  opensNamespace,
		},
		"foreign-sa": {
			reason: "Another ServiceAccount of the namespace, which exists but nobody labelled for MiniClusters: the pods would run with its rights.",
			spec:   `pod: {serviceAccountName: ` + sa + `}`,
			key:    "policy.serviceAccounts",
			fields: []string{"spec.pod.serviceAccountName"},
			opens:  opensServiceAccount,
		},
		"token": {
			reason: "Its ServiceAccount's token mounted: the ServiceAccount's rights to whatever the job runs. No label opens it: only the policy.",
			spec:   `pod: {serviceAccountName: ` + sa + `, automountServiceAccountToken: true}`,
			key:    "policy.serviceAccounts.automountToken",
			fields: []string{"spec.pod.automountServiceAccountToken"},
		},
		"secret-env": {
			reason: "Another MiniCluster's CURVE certificate read into an environment variable.",
			spec: `
containers:
  - image: ubuntu:noble
    command: echo hello world
    secrets: {CERT: {name: ` + foreig + `, key: curve.cert}}`,
			key:    "policy.secrets",
			fields: []string{"spec.containers[0].secrets[CERT].name"},
			opens:  opensSecrets,
		},
		"secret-volume": {
			reason: "A legacy service-account-token Secret of the namespace mounted as a volume.",
			spec: `
containers:
  - image: ubuntu:noble
    command: echo hello world
    volumes: {tok: {secretName: ` + token + `, path: /token}}`,
			key:    "policy.secrets",
			fields: []string{"spec.containers[0].volumes[tok].secretName"},
			opens:  opensSecrets,
		},
		"curve-cert": {
			reason: "Another MiniCluster's CURVE certificate as its own: it would join that cluster's overlay.",
			spec:   `flux: {curveCertSecret: ` + foreig + `}`,
			key:    "policy.secrets",
			fields: []string{"spec.flux.curveCertSecret"},
			opens:  opensSecrets,
		},
		"nodeport": {
			reason: "The root of a burst opens a NodePort on every node of the cluster.",
			spec:   `flux: {bursting: {clusters: [{name: burst-0, size: 2}]}}`,
			key:    "policy.nodePorts",
			fields: []string{"spec.flux.bursting.clusters"},
			opens:  opensNamespace,
		},
		"size": {
			reason: "100,000 pods, what the schema allows, are more than the policy's maximum (1024).",
			spec:   `size: 100000`,
			key:    "policy.maxSize",
			fields: []string{"spec.size"},
		},
		"csi": {
			reason: "An inline CSI volume: whatever its driver makes of the attributes.",
			spec: `
containers:
  - image: ubuntu:noble
    command: echo hello world
    volumes: {data: {csiDriver: hostpath.csi.k8s.io, csiDriverAttributes: {path: /}, path: /data}}`,
			key:    "policy.csiDrivers",
			fields: []string{"spec.containers[0].volumes[data].csiDriver"},
		},
		"runtime-class": {
			reason: "A runtime class the platform did not choose.",
			spec:   `pod: {runtimeClassName: unconfined}`,
			key:    "policy.runtimeClasses",
			fields: []string{"spec.pod.runtimeClassName"},
		},
		"scheduler": {
			reason: "A scheduler of its own choosing, which may place pods anywhere.",
			spec:   `pod: {schedulerName: my-scheduler}`,
			key:    "policy.schedulers",
			fields: []string{"spec.pod.schedulerName"},
		},
		"control-plane": {
			reason: "A toleration of the control plane's taint: pods beside the API server.",
			spec:   `pod: {tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]}`,
			key:    "policy.tolerations.forbiddenKeys",
			fields: []string{"spec.pod.tolerations[0]"},
		},
		"keyless-toleration": {
			reason: "A toleration without a key tolerates every taint, the control plane's too.",
			spec:   `pod: {tolerations: [{operator: Exists}]}`,
			key:    "policy.tolerations.forbiddenKeys",
			fields: []string{"spec.pod.tolerations[0]"},
		},
		"crossplane-label": {
			reason: "A pod label of Crossplane's own prefix, which says which composite owns an object.",
			spec:   `pod: {labels: {crossplane.io/composite: victim}}`,
			key:    "policy.metadata.forbiddenPrefixes",
			fields: []string{"spec.pod.labels[crossplane.io/composite]"},
		},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)

	step(t, "the tenant's rights are MiniClusters only", func(t *testing.T) {
		forbidden := map[string]client.Object{
			"create a pod": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escape"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "ubuntu:noble"}}}},
			"create a Secret": &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escape"}},
			"create a RoleBinding": &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escape"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}},
			"create a MiniCluster in another namespace": exampleClaim(t, cp, helloWorld, "default", "escape"),
		}
		for what, obj := range forbidden {
			err := tenant.Create(ctx(t), obj)
			if !kerrors.IsForbidden(err) {
				t.Errorf("the tenant could %s: got %v, want Forbidden", what, err)
				if err == nil {
					_ = cp.Client.Delete(context.Background(), obj)
				}
				continue
			}
			t.Logf("%s: %v", what, err)
		}
		if err := tenant.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{}); !kerrors.IsForbidden(err) {
			t.Errorf("the tenant could read a ServiceAccount: got %v, want Forbidden", err)
		}
	})

	step(t, "hello-world from the tenant composes", func(t *testing.T) {
		createTenantClaim(t, top, cp, tenant, exampleClaim(t, cp, helloWorld, ns, hello))
		waitComposed(t, cp, ns, hello)
	})

	// What a tenant's escapes would reach: a ServiceAccount and a legacy
	// token Secret of it, made by an admin (the tenant cannot).
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: token,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}}, Type: corev1.SecretTypeServiceAccountToken},
	} {
		if err := cp.Client.Create(ctx(t), o); err != nil {
			t.Fatal(err)
		}
	}

	before := clusterState(t, cp, ns)
	step(t, "every escape is refused with its policy key and field, and nothing is composed", func(t *testing.T) {
		for _, name := range names {
			c := tenantClaim(t, cp, ns, name, cases[name].spec)
			createTenantClaim(t, top, cp, tenant, c)
		}
		for _, name := range names {
			tc := cases[name]
			t.Run(name, func(t *testing.T) {
				waitRefused(t, cp, ns, name, tc.key, tc.fields...)
				if err := nothingComposed(t, cp, ns, name); err != nil {
					t.Errorf("%s: %v", tc.reason, err)
				}
			})
		}
	})

	step(t, "nothing outside the namespace changed, and nothing was composed later", func(t *testing.T) {
		consistently(t, 5*time.Second, "no escape composes anything", func() error {
			var errs []string
			for _, name := range names {
				if err := nothingComposed(t, cp, ns, name); err != nil {
					errs = append(errs, err.Error())
				}
			}
			return errorsJoin(errs)
		})
		if err := before.unchangedOutside(clusterState(t, cp, ns)); err != nil {
			t.Error(err)
		}
	})

	step(t, "what the platform labels composes; what no label opens stays refused", func(t *testing.T) {
		// As a platform team would: the namespace may run privileged pods
		// and open NodePorts, the ServiceAccount and the Secrets are
		// opened to MiniClusters.
		label(t, cp, &corev1.Namespace{}, "", ns, map[string]string{
			"pod-security.kubernetes.io/enforce": "privileged",
			v1beta1.LabelNodePorts:               v1beta1.AllowedValue,
		})
		label(t, cp, &corev1.ServiceAccount{}, ns, sa, map[string]string{v1beta1.LabelAllowed: v1beta1.AllowedValue})
		for _, s := range []string{token, foreig} {
			label(t, cp, &corev1.Secret{}, ns, s, map[string]string{v1beta1.LabelAllowed: v1beta1.AllowedValue})
		}
		for _, name := range names {
			nudge(t, tenant, ns, name)
		}
		for _, name := range names {
			tc := cases[name]
			t.Run(name, func(t *testing.T) {
				if tc.opens == "" {
					waitRefused(t, cp, ns, name, tc.key, tc.fields...)
					if err := nothingComposed(t, cp, ns, name); err != nil {
						t.Error(err)
					}
					return
				}
				waitComposed(t, cp, ns, name)
			})
		}
		svc := &corev1.Service{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nodeport-lead-broker"}, svc); err != nil {
			t.Error(err)
		} else if svc.Spec.Type != corev1.ServiceTypeNodePort {
			t.Errorf("Service %s is of type %s, want NodePort", svc.Name, svc.Spec.Type)
		}
	})

	// Crossplane's own fields of the tenant's object name other objects:
	// a v2 composite's spec.crossplane.resourceRefs, a claim's
	// spec.resourceRef. Neither may reach what the MiniCluster did not make.
	step(t, "Crossplane's reference fields reach nothing else", func(t *testing.T) {
		victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "victim"}, Data: map[string]string{"k": "v"}}
		if err := cp.Client.Create(ctx(t), victim); err != nil {
			t.Fatal(err)
		}
		composite := func() (*unstructured.Unstructured, error) {
			c, err := getClaim(t, cp, ns, hello)
			if err != nil {
				return nil, err
			}
			return compositeOf(t, cp, c)
		}
		helloXR, err := composite()
		if err != nil {
			t.Fatal(err)
		}
		spec := `{"crossplane":{"resourceRefs":[{"apiVersion":"v1","kind":"ConfigMap","name":"victim"}]}}`
		if cp.Shape() != driver.ShapeV2 {
			spec = fmt.Sprintf(`{"resourceRef":{"apiVersion":%q,"kind":%q,"name":%q}}`, helloXR.GetAPIVersion(), helloXR.GetKind(), helloXR.GetName())
		}
		grabber := tenantClaim(t, cp, ns, "grabber", spec)
		if err := tenant.Create(ctx(t), grabber); err != nil {
			t.Logf("the API server refused the reference: %v", err)
			return
		}
		t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), grabber) })
		time.Sleep(15 * time.Second)
		got := &corev1.ConfigMap{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "victim"}, got); err != nil {
			t.Fatalf("the ConfigMap the tenant named is gone: %v", err)
		}
		if got.ResourceVersion != victim.ResourceVersion || len(got.OwnerReferences) > 0 {
			t.Errorf("the ConfigMap the tenant named was changed: %+v", got.ObjectMeta)
		}
		xr, err := composite()
		if err != nil {
			t.Fatalf("the MiniCluster the tenant's claim named is gone: %v", err)
		}
		if ref, _, _ := unstructured.NestedString(xr.Object, "spec", "claimRef", "name"); cp.Shape() != driver.ShapeV2 && ref != hello {
			t.Errorf("%s's composite is bound to claim %q now, want %q", hello, ref, hello)
		}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: hello}, &batchv1.Job{}); err != nil {
			t.Errorf("%s's Job: %v", hello, err)
		}
	})

	step(t, "a running MiniCluster is never torn down by a policy change", func(t *testing.T) {
		running := snapshot(t, cp, ns, hello)
		t.Cleanup(func() {
			if _, err := cp.SetPolicy(context.Background(), cp.Options().Policy); err != nil {
				t.Errorf("cannot restore the policy: %v", err)
			}
		})
		// The platform tightens its policy below what runs: at most 2 pods
		// a MiniCluster, and no label of the prefix flux-framework.org/.
		rev, err := cp.SetPolicy(ctx(t), map[string]any{
			"maxSize":  2,
			"metadata": map[string]any{"forbiddenPrefixes": []any{"flux-framework.org/"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		nudge(t, tenant, ns, hello)
		eventually(t, 2*time.Minute, "the MiniCluster's composite uses the tighter policy's revision "+rev, func() error {
			c, err := getClaim(t, cp, ns, hello)
			if err != nil {
				return err
			}
			xr, err := compositeOf(t, cp, c)
			if err != nil {
				return err
			}
			if got := compositionRevision(xr); got != rev {
				return fmt.Errorf("composite %s uses revision %q", xr.GetName(), got)
			}
			return nil
		})
		consistently(t, 5*time.Second, "the running MiniCluster stays Valid and its objects unchanged", func() error {
			c, err := getClaim(t, cp, ns, hello)
			if err != nil {
				return err
			}
			if err := wantCondition(c, "Valid", "True"); err != nil {
				return err
			}
			return running.unchanged(t, cp, true)
		})

		// A new MiniCluster of the same size is refused.
		createTenantClaim(t, top, cp, tenant, exampleClaim(t, cp, helloWorld, ns, "hello-again"))
		waitRefused(t, cp, ns, "hello-again", "policy.maxSize", "spec.size", "4 pods are more than the platform's maximum of 2")
		if err := nothingComposed(t, cp, ns, "hello-again"); err != nil {
			t.Error(err)
		}

		// Scaling the running one above what runs is refused; the Job
		// keeps its pods.
		if err := mergePatchAs(t, tenant, ns, hello, `{"spec":{"size":5}}`); err != nil {
			t.Fatal(err)
		}
		waitRefused(t, cp, ns, hello, "policy.maxSize", "spec.size", "the 4 running keep running")
		if err := running.unchanged(t, cp, true); err != nil {
			t.Error(err)
		}
		if job := getJob(t, cp, ns, hello); deref(job.Spec.Parallelism) != 4 {
			t.Errorf("Job %s parallelism = %d, want 4", hello, deref(job.Spec.Parallelism))
		}
		if _, err := getClaim(t, cp, ns, hello); err != nil {
			t.Errorf("the MiniCluster is gone: %v", err)
		}
		if err := mergePatchAs(t, tenant, ns, hello, `{"spec":{"size":4}}`); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "back at its size, the MiniCluster is Valid again", func() error {
			c, err := getClaim(t, cp, ns, hello)
			if err != nil {
				return err
			}
			return wantCondition(c, "Valid", "True")
		})
		if err := running.unchanged(t, cp, false); err != nil {
			t.Error(err)
		}
	})
}

// tenantClaim is hello-world named name in ns with spec (YAML) merged into
// its spec.
func tenantClaim(t *testing.T, cp *harness.ControlPlane, ns, name, spec string) *unstructured.Unstructured {
	t.Helper()
	c := exampleClaim(t, cp, helloWorld, ns, name)
	var extra map[string]any
	if err := yaml.Unmarshal([]byte(spec), &extra); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, _, _ := unstructured.NestedMap(c.Object, "spec")
	mergeMaps(s, extra)
	if err := unstructured.SetNestedMap(c.Object, s, "spec"); err != nil {
		t.Fatal(err)
	}
	return c
}

// mergeMaps merges src into dst: maps merge, anything else replaces.
func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// createTenantClaim creates a claim as the tenant and deletes it (as
// admin) when top ends: the whole test, not the step (a step's cleanups
// run when it ends, and later steps use the claim).
func createTenantClaim(t, top *testing.T, cp *harness.ControlPlane, tenant client.Client, c *unstructured.Unstructured) {
	t.Helper()
	if err := tenant.Create(ctx(t), c.DeepCopy()); err != nil {
		t.Fatalf("the tenant cannot create MiniCluster %s/%s: %v", c.GetNamespace(), c.GetName(), err)
	}
	top.Cleanup(func() {
		_ = cp.Client.Delete(context.Background(), newClaim(c.GetNamespace(), c.GetName()))
	})
}

func mergePatchAs(t *testing.T, c client.Client, namespace, name, patch string) error {
	return c.Patch(ctx(t), newClaim(namespace, name), client.RawPatch("application/merge-patch+json", []byte(patch)))
}

// nudge annotates a MiniCluster, as its tenant may, so that Crossplane
// composes it again now rather than at its next poll.
func nudge(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.flux-framework.org/nudge":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := mergePatchAs(t, c, ns, name, patch); err != nil {
		t.Fatalf("cannot annotate MiniCluster %s/%s: %v", ns, name, err)
	}
}

// label sets labels on an object, as an admin.
func label(t *testing.T, cp *harness.ControlPlane, obj client.Object, ns, name string, labels map[string]string) {
	t.Helper()
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	obj.SetLabels(l)
	if err := cp.Client.Patch(ctx(t), obj, patch); err != nil {
		t.Fatal(err)
	}
}

// waitRefused waits until a MiniCluster is Valid=False with reason Policy
// and a message naming the policy key and each of wants (fields, words).
func waitRefused(t *testing.T, cp *harness.ControlPlane, ns, name, key string, wants ...string) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%s is refused by %s", name, key), func() error {
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if err := wantConditionReason(c, "Valid", "False", "Policy"); err != nil {
			return err
		}
		_, msg := condition(c, "Valid")
		var missing []string
		for _, w := range append([]string{"(" + key, "nothing was composed or changed"}, wants...) {
			if !strings.Contains(msg, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the message %q does not say %q", msg, missing)
		}
		t.Logf("Valid=False (Policy): %s", msg)
		return nil
	})
}

// waitComposed waits until a MiniCluster is Valid=True and its Job,
// Service and ConfigMap exist (its own CURVE Secret too, unless it names
// one: spec.flux.curveCertSecret).
func waitComposed(t *testing.T, cp *harness.ControlPlane, ns, name string) {
	t.Helper()
	eventually(t, 2*time.Minute, name+" is Valid and composed", func() error {
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if err := wantCondition(c, "Valid", "True"); err != nil {
			return err
		}
		objs := map[string]client.Object{name: &batchv1.Job{}, name + "/service": &corev1.Service{}, name + "-entrypoint": &corev1.ConfigMap{}}
		if s, _, _ := unstructured.NestedString(c.Object, "spec", "flux", "curveCertSecret"); s == "" {
			objs[name+"-curve-cert"] = &corev1.Secret{}
		}
		for key, o := range objs {
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: strings.TrimSuffix(key, "/service")}, o); err != nil {
				return fmt.Errorf("%T %s: %w", o, key, err)
			}
		}
		return nil
	})
}

// nothingComposed checks that no object of a MiniCluster exists: none of
// the names it composes, no pod of its Job.
func nothingComposed(t *testing.T, cp *harness.ControlPlane, ns, name string) error {
	var found []string
	for _, o := range []struct {
		name string
		obj  client.Object
	}{
		{name, &batchv1.Job{}}, {name, &corev1.Service{}}, {name + "-lead-broker", &corev1.Service{}},
		{name + "-entrypoint", &corev1.ConfigMap{}}, {name + "-curve-cert", &corev1.Secret{}}, {name + "-services", &corev1.Pod{}},
	} {
		err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: o.name}, o.obj)
		if err == nil {
			found = append(found, fmt.Sprintf("%T %s", o.obj, o.name))
		} else if !kerrors.IsNotFound(err) {
			return err
		}
	}
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: name}); err != nil {
		return err
	}
	for _, p := range pods.Items {
		found = append(found, "Pod "+p.Name)
	}
	if len(found) > 0 {
		return fmt.Errorf("MiniCluster %s/%s was refused, yet these exist: %s", ns, name, strings.Join(found, ", "))
	}
	return nil
}

// compositionRevision is the CompositionRevision a composite uses.
func compositionRevision(xr *unstructured.Unstructured) string {
	if n, _, _ := unstructured.NestedString(xr.Object, "spec", "compositionRevisionRef", "name"); n != "" {
		return n
	}
	n, _, _ := unstructured.NestedString(xr.Object, "spec", "crossplane", "compositionRevisionRef", "name")
	return n
}

// state is every object of some kinds in the cluster, by kind, namespace
// and name, with what tells that it changed: its uid and its
// resourceVersion (for Jobs, whose status the job controller keeps
// writing, their generation).
type state struct {
	skip    string
	objects map[string]string
	deleted map[string]bool
}

// clusterState lists the objects an escape could create or change, in
// every namespace but skip (and skip itself).
func clusterState(t *testing.T, cp *harness.ControlPlane, skip string) *state {
	t.Helper()
	s := &state{skip: skip, objects: map[string]string{}, deleted: map[string]bool{}}
	lists := []client.ObjectList{
		&corev1.NamespaceList{}, &batchv1.JobList{}, &corev1.PodList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{},
		&corev1.SecretList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{},
		&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{},
	}
	for _, l := range lists {
		if err := cp.Client.List(ctx(t), l); err != nil {
			t.Fatal(err)
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o, ok := it.(client.Object)
			if !ok || o.GetNamespace() == skip || o.GetName() == skip && o.GetNamespace() == "" {
				continue
			}
			key := fmt.Sprintf("%T %s/%s", o, o.GetNamespace(), o.GetName())
			version := o.GetResourceVersion()
			if _, isJob := o.(*batchv1.Job); isJob {
				version = fmt.Sprint(o.GetGeneration())
			}
			if _, isPod := o.(*corev1.Pod); isPod {
				version = "" // the kubelet's part: only new pods count
			}
			s.objects[key] = string(o.GetUID()) + "/" + version
			s.deleted[key] = o.GetDeletionTimestamp() != nil
		}
	}
	return s
}

// unchangedOutside says what is new or changed in now. Objects that went
// away, or are being deleted (what earlier tests left to the garbage
// collector), do not count.
func (s *state) unchangedOutside(now *state) error {
	var errs []string
	for key, v := range now.objects {
		was, ok := s.objects[key]
		switch {
		case !ok:
			errs = append(errs, "new: "+key)
		case was != v && !now.deleted[key]:
			errs = append(errs, fmt.Sprintf("changed: %s (%s, was %s)", key, v, was))
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return fmt.Errorf("outside namespace %s: %s", s.skip, strings.Join(errs, "; "))
	}
	return nil
}
