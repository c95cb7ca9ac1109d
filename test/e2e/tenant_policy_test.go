package e2e_test

import (
	"context"
	"fmt"
	"slices"
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
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
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
			if err := wantCondition(c, v1alpha2.ConditionValid, "True"); err != nil {
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
			return wantCondition(c, v1alpha2.ConditionValid, "True")
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
		if err := wantConditionReason(c, v1alpha2.ConditionValid, "False", v1alpha2.ReasonPolicy); err != nil {
			return err
		}
		_, msg := condition(c, v1alpha2.ConditionValid)
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
		if err := wantCondition(c, v1alpha2.ConditionValid, "True"); err != nil {
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
// the names it composes, no pod of its Job. except are names an admin
// made, which exist whatever the MiniCluster did.
func nothingComposed(t *testing.T, cp *harness.ControlPlane, ns, name string, except ...string) error {
	var found []string
	for _, o := range []struct {
		name string
		obj  client.Object
	}{
		{name, &batchv1.Job{}}, {name, &corev1.Service{}}, {name + "-lead-broker", &corev1.Service{}},
		{name + "-entrypoint", &corev1.ConfigMap{}}, {name + "-curve-cert", &corev1.Secret{}}, {name + "-services", &corev1.Pod{}},
	} {
		if slices.Contains(except, o.name) {
			continue
		}
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

// TestTenantPolicyFindings is the rest of issue 33 ("one admission room
// that trusts nothing it observes") on the real control plane: what the
// review of the admission path found a tenant with MiniCluster rights only
// could get past the default policy. Each is refused before anything is
// composed, with Valid=False naming the policy key, the claim's field and
// the fix, and nothing outside the namespace changes:
//
//   - the platform's pull secret (defaults.imagePullSecrets) is exempt from
//     policy.secrets as a pull secret only, not mounted or read into env;
//   - a MiniCluster's own certificate is the Secret it composed, not any
//     Secret named <name>-curve-cert;
//   - label keys are matched as domains (statefulset.kubernetes.io/ is
//     kubernetes.io/'s), and Kueue's priority class is the platform's;
//   - annotations that steer a mesh, the CNI or cloud identity after the
//     function judged the pod are refused unless the platform allows them;
//   - tolerations of cordoned nodes and of the pressure taints are
//     forbidden by default;
//   - a seccomp localhostProfile with ".." is refused as the API server
//     refuses it (it used to be Valid=True for a Job the API server then
//     refused);
//   - the services Pod gets the Job's deadline and goes when the Job ends.
func TestTenantPolicyFindings(t *testing.T) { testTenantPolicyFindings(t, controlPlane(t)) }

// TestTenantPolicyFindingsV2 is TestTenantPolicyFindings in the Crossplane
// v2 shape.
func TestTenantPolicyFindingsV2(t *testing.T) { testTenantPolicyFindings(t, controlPlaneV2(t)) }

// policyFinding is one of issue 33's findings, as a MiniCluster named after
// its case.
type policyFinding struct {
	reason string
	// spec is merged into hello-world's spec, as YAML.
	spec string
	// refusal is Valid=False's reason (Policy when ""); keys the policy
	// keys of which the refusal names one (none for InvalidSpec), fields
	// the claim's fields.
	refusal v1alpha2.ConditionReason
	keys    []string
	fields  []string
	// allowed: the case composes (what an exemption still allows).
	allowed bool
	// adminMade are objects of a name the MiniCluster would compose that
	// an admin made: there, and not the MiniCluster's.
	adminMade []string
}

// helloContainer is hello-world's container, for cases that replace
// spec.containers.
const helloContainer = `
containers:
  - image: ubuntu:noble
    command: echo hello world`

func testTenantPolicyFindings(t *testing.T, cp *harness.ControlPlane) {
	const (
		ns       = "tenant-findings"
		user     = "mallory"
		regcred  = "regcred"      // the platform's pull secret
		ownCert  = "x-curve-cert" // MiniCluster x's name, made by an admin
		services = "svc"
	)
	top := t
	createNamespace(t, cp, ns)
	tenant, err := cp.AsTenant(ctx(t), ns, user)
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string]policyFinding{
		"pull-volume": {
			reason: "The platform's registry credentials mounted as a volume: the exemption of defaults.imagePullSecrets is for pulling images only.",
			spec:   helloContainer + "\n    volumes: {creds: {secretName: " + regcred + ", path: /creds}}",
			keys:   []string{"policy.secrets"},
			fields: []string{"spec.containers[0].volumes[creds].secretName"},
		},
		"pull-env": {
			reason: "The platform's registry credentials read into an environment variable.",
			spec:   helloContainer + "\n    secrets: {CREDS: {name: " + regcred + ", key: .dockerconfigjson}}",
			keys:   []string{"policy.secrets"},
			fields: []string{"spec.containers[0].secrets[CREDS].name"},
		},
		"pull-image": {
			reason:  "The platform's pull secret named as a pull secret: what the exemption is for.",
			spec:    helloContainer + "\n    imagePullSecret: " + regcred,
			allowed: true,
		},
		"x": {
			reason:    "A Secret named like MiniCluster x's own certificate, which x did not compose (an admin made it, unlabelled): the exemption is for the Secret x composed.",
			spec:      `flux: {curveCertSecret: ` + ownCert + `}`,
			keys:      []string{"policy.secrets"},
			fields:    []string{"spec.flux.curveCertSecret"},
			adminMade: []string{ownCert},
		},
		"label-sts": {
			reason: "statefulset.kubernetes.io/pod-name receives a StatefulSet pod's own traffic; it is in kubernetes.io/, matched as a domain.",
			spec:   `pod: {labels: {statefulset.kubernetes.io/pod-name: web-0}}`,
			keys:   []string{"policy.metadata.forbiddenPrefixes"},
			fields: []string{"spec.pod.labels[statefulset.kubernetes.io/pod-name]"},
		},
		"label-evict": {
			reason: "cluster-autoscaler.kubernetes.io/safe-to-evict steers the cluster autoscaler; it is in kubernetes.io/, matched as a domain.",
			spec:   `pod: {labels: {cluster-autoscaler.kubernetes.io/safe-to-evict: "false"}}`,
			keys:   []string{"policy.metadata.forbiddenPrefixes"},
			fields: []string{"spec.pod.labels[cluster-autoscaler.kubernetes.io/safe-to-evict]"},
		},
		"kueue-job": {
			reason: "Kueue's priority class on the Job: cluster-scoped, it takes another team's quota by preemption.",
			spec:   `jobLabels: {kueue.x-k8s.io/priority-class: high}`,
			keys:   []string{"policy.kueue.priorityClasses"},
			fields: []string{"spec.jobLabels[kueue.x-k8s.io/priority-class]"},
		},
		"kueue-pod": {
			reason: "Kueue's priority class on the pods.",
			spec:   `pod: {labels: {kueue.x-k8s.io/priority-class: high}}`,
			keys:   []string{"policy.kueue.priorityClasses"},
			fields: []string{"spec.pod.labels[kueue.x-k8s.io/priority-class]"},
		},
		"ann-istio": {
			reason: "Istio's sidecar injector mounts whatever sidecar.istio.io/userVolume says, after the function judged the pod.",
			spec:   `pod: {annotations: {sidecar.istio.io/userVolume: '[{"name":"host","hostPath":{"path":"/"}}]'}}`,
			// Either lock will do: not allowed, and istio.io/ is one of the
			// default forbidden domains (the mesh's labels too).
			keys:   []string{"policy.metadata.allowedAnnotationPrefixes", "policy.metadata.forbiddenPrefixes"},
			fields: []string{"spec.pod.annotations[sidecar.istio.io/userVolume]"},
		},
		"ann-multus": {
			reason: "Multus attaches the pods to another namespace's network.",
			spec:   `pod: {annotations: {k8s.v1.cni.cncf.io/networks: kube-system/host-net}}`,
			keys:   []string{"policy.metadata.allowedAnnotationPrefixes"},
			fields: []string{"spec.pod.annotations[k8s.v1.cni.cncf.io/networks]"},
		},
		"ann-iam": {
			reason: "kube2iam and kiam give the pods the cloud role the annotation names.",
			spec:   `pod: {annotations: {iam.amazonaws.com/role: "arn:aws:iam::123456789012:role/admin"}}`,
			keys:   []string{"policy.metadata.allowedAnnotationPrefixes"},
			fields: []string{"spec.pod.annotations[iam.amazonaws.com/role]"},
		},
		"tol-unsched": {
			reason: "A toleration of node.kubernetes.io/unschedulable: pods on cordoned and draining nodes.",
			spec:   `pod: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]}`,
			keys:   []string{"policy.tolerations.forbiddenKeys"},
			fields: []string{"spec.pod.tolerations[0]"},
		},
		"tol-memory": {
			reason: "A toleration of node.kubernetes.io/memory-pressure: pods on nodes the kubelet is evicting from.",
			spec:   `pod: {tolerations: [{key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}]}`,
			keys:   []string{"policy.tolerations.forbiddenKeys"},
			fields: []string{"spec.pod.tolerations[0]"},
		},
		"seccomp": {
			reason:  "A seccomp localhostProfile that climbs out of the kubelet's seccomp directory: the API server refuses the Job, so it must not be Valid.",
			spec:    helloContainer + "\n    securityContext: {seccompProfile: {type: Localhost, localhostProfile: ../../x}}",
			refusal: v1alpha2.ReasonInvalidSpec,
			fields:  []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile"},
		},
		"seccomp-pod": {
			reason:  "The same in the pods' security context.",
			spec:    `pod: {securityContext: {seccompProfile: {type: Localhost, localhostProfile: ../../x}}}`,
			refusal: v1alpha2.ReasonInvalidSpec,
			fields:  []string{"spec.pod.securityContext.seccompProfile.localhostProfile"},
		},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)

	// What the platform and its admins made: a pull secret every pod gets
	// (defaults.imagePullSecrets) and a Secret named like x's certificate;
	// neither is labelled for MiniClusters.
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: regcred}, Type: corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{corev1.DockerConfigJsonKey: `{"auths":{}}`}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ownCert}, StringData: map[string]string{"curve.cert": "the admin's"}},
	} {
		if err := cp.Client.Create(ctx(t), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if _, err := cp.SetPolicyAndDefaults(context.Background(), cp.Options().Policy, nil); err != nil {
			t.Errorf("cannot restore the Composition's defaults: %v", err)
		}
	})
	if _, err := cp.SetPolicyAndDefaults(ctx(t), cp.Options().Policy, map[string]any{"imagePullSecrets": []string{regcred}}); err != nil {
		t.Fatal(err)
	}

	before := clusterState(t, cp, ns)
	// Not steps: each tells its own finding, whatever the others do.
	t.Run("every finding is refused with its key, field and fix, and nothing is composed", func(t *testing.T) {
		for _, name := range names {
			createTenantClaim(t, top, cp, tenant, tenantClaim(t, cp, ns, name, cases[name].spec))
		}
		for _, name := range names {
			tc := cases[name]
			t.Run(name, func(t *testing.T) {
				t.Parallel() // a refusal takes a few seconds; a failure waits two minutes
				if tc.allowed {
					waitComposed(t, cp, ns, name)
					job := getJob(t, cp, ns, name)
					if !hasPullSecret(job.Spec.Template.Spec.ImagePullSecrets, regcred) {
						t.Errorf("%s\nJob %s pulls with %v, want %s", tc.reason, name, job.Spec.Template.Spec.ImagePullSecrets, regcred)
					}
					return
				}
				waitFinding(t, cp, ns, name, tc)
				if err := nothingComposed(t, cp, ns, name, tc.adminMade...); err != nil {
					t.Errorf("%s\n%v", tc.reason, err)
				}
				for _, n := range tc.adminMade {
					s := &corev1.Secret{}
					if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: n}, s); err != nil {
						t.Errorf("the admin's Secret %s: %v", n, err)
					} else if len(s.OwnerReferences) > 0 {
						t.Errorf("%s\nthe admin's Secret %s was adopted: %v", tc.reason, n, s.OwnerReferences)
					}
				}
			})
		}
	})

	t.Run("nothing outside the namespace changed, and nothing was composed later", func(t *testing.T) {
		consistently(t, 5*time.Second, "no finding composes anything", func() error {
			var errs []string
			for _, name := range names {
				if cases[name].allowed {
					continue
				}
				if err := nothingComposed(t, cp, ns, name, cases[name].adminMade...); err != nil {
					errs = append(errs, err.Error())
				}
			}
			return errorsJoin(errs)
		})
		if err := before.unchangedOutside(clusterState(t, cp, ns)); err != nil {
			t.Error(err)
		}
	})

	t.Run("the services Pod has the Job's deadline and goes when the Job ends", func(t *testing.T) {
		createTenantClaim(t, top, cp, tenant, tenantClaim(t, cp, ns, services, `
size: 2
services:
  - name: web
    image: ubuntu:noble
    command: sleep infinity`))
		waitComposed(t, cp, ns, services)
		pod := &corev1.Pod{}
		eventually(t, time.Minute, "Pod "+services+"-services exists", func() error {
			return cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: services + "-services"}, pod)
		})
		job := getJob(t, cp, ns, services)
		if job.Spec.ActiveDeadlineSeconds == nil {
			t.Fatalf("Job %s has no activeDeadlineSeconds: the test needs one to compare with", services)
		}
		if got, want := pod.Spec.ActiveDeadlineSeconds, *job.Spec.ActiveDeadlineSeconds; got == nil || *got != want {
			t.Errorf("Pod %s activeDeadlineSeconds = %v, want the Job's %d: it would outlive policy.maxDeadlineSeconds", pod.Name, deref(got), want)
		}

		// Play the kubelet for the services Pod too, as on a node where it
		// runs: the Pod must go because the Job ended, not because it never
		// started.
		if err := cp.ReportPodRunning(ctx(t), pod); err != nil {
			t.Fatal(err)
		}
		runningCluster(t, cp, ns, services)
		terminatePod(t, cp, indexPod(t, cp, ns, services, 0), 0)
		waitJobCondition(t, cp, ns, services, batchv1.JobComplete)
		eventually(t, 2*time.Minute, "the services Pod is deleted once the Job has ended", func() error {
			p := &corev1.Pod{}
			err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: services + "-services"}, p)
			switch {
			case kerrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			case p.DeletionTimestamp != nil:
				return nil
			}
			return fmt.Errorf("Pod %s is still there (phase %s) after its Job ended", p.Name, p.Status.Phase)
		})
	})

	// The annotation allow-list is the platform's to extend: "*" allows
	// every key that no forbidden domain refuses. The mesh's stays
	// refused, istio.io/ being one of the default forbidden domains.
	t.Run(`the platform allows every annotation ("*"): the CNI's and the cloud identity's compose, the mesh's stays refused`, func(t *testing.T) {
		if cp.Options().Policy != nil {
			t.Skip("the control plane has a policy of its own; this step sets the shipped one plus the allow-list")
		}
		policy := map[string]any{"metadata": map[string]any{"allowedAnnotationPrefixes": []string{"*"}}}
		if _, err := cp.SetPolicyAndDefaults(ctx(t), policy, map[string]any{"imagePullSecrets": []string{regcred}}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"ann-iam", "ann-multus", "ann-istio"} {
			nudge(t, tenant, ns, name)
		}
		waitComposed(t, cp, ns, "ann-iam")
		waitComposed(t, cp, ns, "ann-multus")
		istio := cases["ann-istio"]
		istio.keys = []string{"policy.metadata.forbiddenPrefixes"}
		waitFinding(t, cp, ns, "ann-istio", istio)
		if err := nothingComposed(t, cp, ns, "ann-istio"); err != nil {
			t.Error(err)
		}
	})
}

// waitFinding waits until a MiniCluster is refused as tc says: Valid=False
// with its reason and a message that names each of its fields, and for the
// policy's refusals the key in parentheses, a fix, and that nothing was
// composed or changed. Valid=True fails at once: it was composed.
func waitFinding(t *testing.T, cp *harness.ControlPlane, ns, name string, tc policyFinding) {
	t.Helper()
	reason := tc.refusal
	if reason == "" {
		reason = v1alpha2.ReasonPolicy
	}
	msg := waitValidFalse(t, cp, ns, name, reason, func() string {
		if err := nothingComposed(t, cp, ns, name, tc.adminMade...); err != nil {
			return err.Error()
		}
		return "nothing composed yet"
	})
	var missing []string
	if len(tc.keys) > 0 {
		named := ""
		for _, k := range tc.keys {
			if strings.Contains(msg, "("+k+")") || strings.Contains(msg, "("+k+":") {
				named = k
				break
			}
		}
		switch {
		case named == "":
			missing = append(missing, "the policy key ("+strings.Join(tc.keys, ") or (")+")")
		case !refusalHasFix(msg, named):
			missing = append(missing, "a fix after the reason")
		}
	}
	for _, f := range tc.fields {
		if !strings.Contains(msg, f) {
			missing = append(missing, "the field "+f)
		}
	}
	if reason == v1alpha2.ReasonPolicy && !strings.Contains(msg, "nothing was composed or changed") {
		missing = append(missing, `that "nothing was composed or changed"`)
	}
	if len(missing) > 0 {
		t.Errorf("%s\nValid=False (%s) says %q; want it to name %s", tc.reason, reason, msg, strings.Join(missing, ", "))
	}
}

// refusalHasFix tells whether the refusal that names key goes on, after its
// reason, with a fix: "<field>: refused by the platform's policy (<key>):
// <why>; <fix>". What follows the reason is neither the closing "nothing
// was composed or changed" nor the next refusal.
func refusalHasFix(msg, key string) bool {
	i := strings.Index(msg, "("+key)
	if i < 0 {
		return false
	}
	parts := strings.Split(msg[i:], "; ")
	if len(parts) < 2 {
		return false
	}
	next := strings.TrimSpace(parts[1])
	return next != "" && !strings.HasPrefix(next, "nothing was composed") && !strings.Contains(next, "refused by")
}

func hasPullSecret(refs []corev1.LocalObjectReference, name string) bool {
	for _, r := range refs {
		if r.Name == name {
			return true
		}
	}
	return false
}
