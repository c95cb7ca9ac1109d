package e2e_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Issue 33, "one admission room that trusts nothing it observes": a tenant
// who may create MiniClusters and nothing else got root on a node by
// handing Crossplane objects to observe that the MiniCluster did not make.
// These tests run the attacks of the issue as that tenant, on the real
// control plane, and want each refused before anything is composed.

// compositionResourceName is the annotation by which Crossplane maps an
// object it observes to one of the function's composed resources.
const compositionResourceName = "crossplane.io/composition-resource-name"

// TestTenantGraftV2 is the orphan graft (issue 33, steps 1-3), in the v2
// shape, where the tenant's MiniCluster is the composite and its
// spec.crossplane.resourceRefs are the tenant's to write:
//
//  1. a harmless MiniCluster orph composes;
//  2. the tenant deletes it with propagationPolicy Orphan: the garbage
//     collector strips the owner references and the Job, ConfigMap, Secret
//     and Service stay, still annotated with their composition resource
//     names;
//  3. the tenant creates orph again, its resourceRefs naming those four
//     objects, with a services Pod that is privileged, adds every
//     capability, mounts the node's / and reads an unlabelled Secret.
//
// Crossplane observes uncontrolled objects a composite references (it skips
// only those another composite controls) and would adopt them on its next
// apply. The Job observed, the function used to skip every check but the
// size, and composed the privileged Pod. Now the observed objects are not
// this MiniCluster's (no controller reference to its UID), so it is refused
// (Valid=False, ForeignObject) naming them and the field, no services Pod is
// ever created, and nothing is adopted.
func TestTenantGraftV2(t *testing.T) {
	cp := controlPlaneV2(t)
	const (
		ns   = "tenant-graft"
		user = "mallory"
		name = "orph"
		loot = "graft-loot" // an unlabelled Secret of the namespace
	)
	top := t
	createNamespace(t, cp, ns)
	tenant, err := cp.AsTenant(ctx(t), ns, user)
	if err != nil {
		t.Fatal(err)
	}
	// Made by an admin: the tenant cannot create Secrets, only MiniClusters.
	if err := cp.Client.Create(ctx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: loot},
		StringData: map[string]string{"password": "not-for-tenants"},
	}); err != nil {
		t.Fatal(err)
	}
	// The orphans outlive both MiniClusters: remove them (and the Job's
	// pods) when the test ends, so that nothing of this test lingers.
	t.Cleanup(func() {
		for _, o := range graftObjects(ns, name) {
			_ = cp.Client.Delete(context.Background(), o, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
	})

	step(t, "a harmless MiniCluster composes", func(t *testing.T) {
		createTenantClaim(t, top, cp, tenant, exampleWith(t, cp, "examples/interactive/claim.yaml", ns, name, graftHarmless))
		waitComposed(t, cp, ns, name)
	})

	var orphaned map[string]graftState
	step(t, "deleted with propagationPolicy Orphan, its objects stay without an owner", func(t *testing.T) {
		if err := tenant.Delete(ctx(t), newClaim(ns, name), client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
			t.Fatalf("the tenant cannot delete MiniCluster %s/%s with propagationPolicy Orphan: %v", ns, name, err)
		}
		eventually(t, 2*time.Minute, "the MiniCluster is gone and its Job, ConfigMap, Secret and Service have no owner references", func() error {
			if _, err := getClaim(t, cp, ns, name); !kerrors.IsNotFound(err) {
				return fmt.Errorf("MiniCluster %s/%s is still there (%v)", ns, name, err)
			}
			s, err := graftStates(t, cp, ns, name)
			if err != nil {
				return err
			}
			for key, o := range s {
				if len(o.owners) > 0 {
					return fmt.Errorf("%s still has owner references %v", key, o.owners)
				}
			}
			orphaned = s
			return nil
		})
		// What makes the graft an attack: Crossplane maps an observed
		// object by this annotation. Without it Crossplane refuses to
		// observe the object at all, and the step below would test nothing.
		for key, o := range orphaned {
			if o.annotations[compositionResourceName] == "" {
				t.Fatalf("%s lost its %s annotation: Crossplane would not observe it, so the graft would not be tried", key, compositionResourceName)
			}
		}
	})

	before := clusterState(t, cp, ns)
	seen := watchPod(t, cp, ns, name+"-services")
	step(t, "grafted back with a privileged services Pod, it is refused (ForeignObject) and nothing is adopted", func(t *testing.T) {
		createTenantClaim(t, top, cp, tenant, exampleWith(t, cp, "examples/interactive/claim.yaml", ns, name, harness.GraftHostileSpec(name, loot)))
		msg := waitValidFalse(t, cp, ns, name, v1alpha2.ReasonForeignObject, func() string { return graftEvidence(t, cp, ns, name) })
		for _, want := range []string{
			"Job " + ns + "/" + name, // the object, by kind and name
			"spec.crossplane.resourceRefs",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("Valid=False (ForeignObject) says %q; want it to name %q", msg, want)
			}
		}
		if !strings.Contains(msg, "no controller") && !strings.Contains(msg, "not this MiniCluster") {
			t.Errorf("Valid=False (ForeignObject) says %q; want it to say what the objects belong to (no controller, not this MiniCluster's)", msg)
		}
		if !endsNothingComposed(msg) {
			t.Errorf("Valid=False (ForeignObject) says %q; want it to end with %q", msg, "nothing was composed or changed")
		}
	})

	step(t, "no services Pod, ever; nothing adopted; nothing outside the namespace changed", func(t *testing.T) {
		consistently(t, 20*time.Second, "no Pod "+name+"-services, and the orphans unchanged and unowned", func() error {
			err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-services"}, &corev1.Pod{})
			if err == nil {
				return fmt.Errorf("Pod %s/%s-services exists: the graft composed it (%s)", ns, name, graftEvidence(t, cp, ns, name))
			}
			if !kerrors.IsNotFound(err) {
				return err
			}
			now, err := graftStates(t, cp, ns, name)
			if err != nil {
				return err
			}
			return orphansUnchanged(orphaned, now)
		})
		events, ended := seen()
		if len(events) > 0 {
			t.Errorf("the watch on Pod %s/%s-services saw %s: want no such Pod, ever", ns, name, strings.Join(events, "; "))
		}
		if ended != "" {
			t.Errorf("the watch on Pod %s/%s-services ended early (%s): cannot tell that no such Pod was ever created", ns, name, ended)
		}
		if err := before.unchangedOutside(clusterState(t, cp, ns)); err != nil {
			t.Error(err)
		}
	})

	// The same orphans under another name: Crossplane maps what it
	// observes by the composition resource name, not by the object's name,
	// so a MiniCluster of any name may reference them.
	const other = "graft2"
	step(t, "deleting the refused MiniCluster leaves the orphans; another name grafting them is refused too", func(t *testing.T) {
		if err := tenant.Delete(ctx(t), newClaim(ns, name)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the refused MiniCluster is gone", func() error {
			if _, err := getClaim(t, cp, ns, name); !kerrors.IsNotFound(err) {
				return fmt.Errorf("MiniCluster %s/%s is still there (%v)", ns, name, err)
			}
			return nil
		})
		seen := watchPod(t, cp, ns, other+"-services")
		createTenantClaim(t, top, cp, tenant, exampleWith(t, cp, "examples/interactive/claim.yaml", ns, other, harness.GraftHostileSpec(name, loot)))
		msg := waitValidFalse(t, cp, ns, other, v1alpha2.ReasonForeignObject, func() string { return graftEvidence(t, cp, ns, name) })
		if !strings.Contains(msg, "Job "+ns+"/"+name) {
			t.Errorf("Valid=False (ForeignObject) says %q; want it to name Job %s/%s", msg, ns, name)
		}
		consistently(t, 10*time.Second, "no Pod "+other+"-services, no Job "+other+", and the orphans unchanged and unowned", func() error {
			if err := nothingComposed(t, cp, ns, other); err != nil {
				return err
			}
			now, err := graftStates(t, cp, ns, name)
			if err != nil {
				return err
			}
			return orphansUnchanged(orphaned, now)
		})
		if events, ended := seen(); len(events) > 0 || ended != "" {
			t.Errorf("the watch on Pod %s/%s-services saw %v (ended early: %q): want no such Pod, ever, seen by a watch that covers the whole time", ns, other, events, ended)
		}
	})
}

// graftHarmless is what the interactive example gets for the first orph:
// two brokers, nothing the default policy refuses.
const graftHarmless = `size: 2`

// exampleWith is an example's claim named name in ns with spec (YAML)
// merged into its spec (maps merge, the rest is replaced).
func exampleWith(t *testing.T, cp *harness.ControlPlane, example, ns, name, spec string) *unstructured.Unstructured {
	t.Helper()
	c := exampleClaim(t, cp, example, ns, name)
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

// graftObjects are the four objects a MiniCluster composes that outlive it
// when it is deleted with propagationPolicy Orphan, by kind and name.
func graftObjects(ns, name string) map[string]client.Object {
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: n} }
	return map[string]client.Object{
		"Job " + ns + "/" + name:                       &batchv1.Job{ObjectMeta: meta(name)},
		"ConfigMap " + ns + "/" + name + "-entrypoint": &corev1.ConfigMap{ObjectMeta: meta(name + "-entrypoint")},
		"Secret " + ns + "/" + name + "-curve-cert":    &corev1.Secret{ObjectMeta: meta(name + "-curve-cert")},
		"Service " + ns + "/" + name:                   &corev1.Service{ObjectMeta: meta(name)},
	}
}

// graftState is what tells that an orphan was adopted or changed: its uid,
// owners, labels and annotations, and its resourceVersion (for the Job,
// whose status the job controller may write, its generation).
type graftState struct {
	uid, version string
	owners       []metav1.OwnerReference
	labels       map[string]string
	annotations  map[string]string
}

func graftStates(t *testing.T, cp *harness.ControlPlane, ns, name string) (map[string]graftState, error) {
	out := map[string]graftState{}
	for key, o := range graftObjects(ns, name) {
		if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(o), o); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		version := o.GetResourceVersion()
		if _, isJob := o.(*batchv1.Job); isJob {
			version = fmt.Sprintf("generation %d", o.GetGeneration())
		}
		out[key] = graftState{uid: string(o.GetUID()), version: version, owners: o.GetOwnerReferences(), labels: o.GetLabels(), annotations: o.GetAnnotations()}
	}
	return out, nil
}

// orphansUnchanged says which orphan was adopted (owner references) or
// changed since was.
func orphansUnchanged(was, now map[string]graftState) error {
	var errs []string
	for key, w := range was {
		n, ok := now[key]
		switch {
		case !ok:
			errs = append(errs, key+" is gone")
		case len(n.owners) > 0:
			errs = append(errs, fmt.Sprintf("%s was adopted: owner references %v", key, n.owners))
		case n.uid != w.uid:
			errs = append(errs, fmt.Sprintf("%s was re-created (uid %s, was %s)", key, n.uid, w.uid))
		case n.version != w.version:
			errs = append(errs, fmt.Sprintf("%s changed (%s, was %s)", key, n.version, w.version))
		case !reflect.DeepEqual(n.labels, w.labels) || !reflect.DeepEqual(n.annotations, w.annotations):
			errs = append(errs, fmt.Sprintf("%s has new metadata (labels %v, annotations %v)", key, n.labels, n.annotations))
		}
	}
	sort.Strings(errs)
	return errorsJoin(errs)
}

// graftEvidence says what the graft got, for a failure message: who owns
// the orphans now, and whether the services Pod exists and is privileged.
func graftEvidence(t *testing.T, cp *harness.ControlPlane, ns, name string) string {
	var out []string
	if s, err := graftStates(t, cp, ns, name); err == nil {
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			owner := "no owner"
			for _, r := range s[k].owners {
				owner = fmt.Sprintf("owned by %s %s (%s)", r.Kind, r.Name, r.UID)
			}
			out = append(out, k+" "+owner)
		}
	}
	p := &corev1.Pod{}
	if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name + "-services"}, p); err == nil {
		out = append(out, fmt.Sprintf("Pod %s exists (privileged %v, hostPath volumes %v)", p.Name, privileged(p), hostPaths(p)))
	} else {
		out = append(out, fmt.Sprintf("Pod %s-services: %v", name, err))
	}
	return strings.Join(out, "; ")
}

func privileged(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			return true
		}
	}
	return false
}

func hostPaths(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			out = append(out, v.HostPath.Path)
		}
	}
	return out
}

// watchPod watches Pod ns/name from now on, so that a Pod created and
// deleted between two looks is seen too: a list for the resourceVersion,
// then a watch from it that is re-established where it left off when the
// API server ends it (a RetryWatcher; a plain watch may end with an error
// event at any time). The returned func gives every Pod event seen so far
// and, once the watch no longer covers everything since the list (its
// resourceVersion too old to resume from), why. The watch stops when the
// test ends.
func watchPod(t *testing.T, cp *harness.ControlPlane, ns, name string) func() (events []string, ended string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	pods, err := cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("cannot list Pod %s/%s: %v", ns, name, err)
	}
	var (
		mu     sync.Mutex
		events []string
		ended  string
	)
	for i := range pods.Items {
		p := &pods.Items[i]
		events = append(events, fmt.Sprintf("EXISTS Pod %s (privileged %v, hostPath volumes %v)", p.Name, privileged(p), hostPaths(p)))
	}
	wctx, cancel := context.WithCancel(context.Background())
	rw, err := watchtools.NewRetryWatcherWithContext(wctx, pods.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		cancel()
		t.Fatalf("cannot watch Pod %s/%s: %v", ns, name, err)
	}
	go func() {
		for ev := range rw.ResultChan() {
			mu.Lock()
			switch o := ev.Object.(type) {
			case *corev1.Pod:
				events = append(events, fmt.Sprintf("%s Pod %s (privileged %v, hostPath volumes %v)", ev.Type, o.Name, privileged(o), hostPaths(o)))
			case *metav1.Status:
				// The RetryWatcher passes on what it cannot resume from
				// (410 Gone) and stops: events may have been missed.
				ended = o.Message
			}
			mu.Unlock()
		}
		mu.Lock()
		if ended == "" {
			ended = "the watch was closed"
		}
		mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		rw.Stop()
	})
	return func() ([]string, string) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), events...), ended
	}
}

// waitValidFalse waits until MiniCluster ns/name is Valid=False with
// reason, and returns the message. Valid=True fails at once, with
// evidence(): the function composed it, and no refusal comes after that.
func waitValidFalse(t *testing.T, cp *harness.ControlPlane, ns, name string, reason v1alpha2.ConditionReason, evidence func() string) string {
	t.Helper()
	var msg string
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		c, err := getClaim(t, cp, ns, name)
		if err == nil {
			st, m := condition(c, v1alpha2.ConditionValid)
			if st == "True" {
				ev := ""
				if evidence != nil {
					ev = "; " + evidence()
				}
				t.Fatalf("MiniCluster %s/%s is Valid=True (%s): it was composed, want Valid=False with reason %s%s", ns, name, m, reason, ev)
			}
			if err = wantConditionReason(c, v1alpha2.ConditionValid, "False", reason); err == nil {
				msg = m
				t.Logf("Valid=False (%s) after %s: %s", reason, time.Since(start).Round(100*time.Millisecond), msg)
				return msg
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 2m waiting until MiniCluster %s/%s is Valid=False with reason %s: %v", ns, name, reason, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// endsNothingComposed tells whether a refusal ends by saying that nothing
// was composed or changed (a full stop after it allowed).
func endsNothingComposed(msg string) bool {
	return strings.HasSuffix(strings.TrimRight(msg, ". "), "nothing was composed or changed")
}

// TestTenantGraftClaims is issue 33's claim binding, in the claims shape,
// where the composite is cluster-scoped and only admins create it:
//
//   - an XMiniCluster an admin made by hand, with the claim labels
//     (crossplane.io/claim-name, crossplane.io/claim-namespace) but no
//     spec.claimRef, is bindable: Crossplane binds an unbound composite to
//     any claim whose spec.resourceRef names it and syncs the claim into
//     it. It used to compose in the labels' namespace; now it is refused
//     (Valid=False, Unclaimed) naming spec.claimRef and the fix, and
//     nothing is composed;
//   - with spec.claimRef set, as the docs tell admins, it composes; a
//     tenant's claim in another namespace whose spec.resourceRef names it
//     (its immutable fields repeated, size 1) is not bound: the admin's Job
//     keeps its size, nothing is composed in the tenant's namespace, and
//     deleting the tenant's claim leaves the admin's MiniCluster.
func TestTenantGraftClaims(t *testing.T) {
	cp := controlPlane(t)
	const (
		adminNS   = "hpc-prod"
		tenantNS  = "team-a"
		user      = "mallory"
		unclaimed = "hpc-unclaimed"
		main      = "hpc-main"
		grab      = "grab"
	)
	top := t
	createNamespace(t, cp, adminNS)
	createNamespace(t, cp, tenantNS)
	tenant, err := cp.AsTenant(ctx(t), tenantNS, user)
	if err != nil {
		t.Fatal(err)
	}

	// Not a step: the claimed composite below does not depend on it.
	t.Run("an admin's XMiniCluster without spec.claimRef is refused (Unclaimed), nothing composed", func(t *testing.T) {
		xr := adminComposite(t, cp, adminNS, unclaimed, false)
		createAdminComposite(t, top, cp, xr)
		msg := waitCompositeValidFalse(t, cp, unclaimed, v1alpha2.ReasonUnclaimed, func() string {
			if err := nothingComposed(t, cp, adminNS, unclaimed); err != nil {
				return err.Error()
			}
			return "nothing composed"
		})
		if !strings.Contains(msg, "spec.claimRef") {
			t.Errorf("Valid=False (Unclaimed) says %q; want it to name spec.claimRef", msg)
		}
		if !namesAFix(msg) {
			t.Errorf("Valid=False (Unclaimed) says %q; want it to say what the admin does (set spec.claimRef)", msg)
		}
		consistently(t, 5*time.Second, "nothing is composed in "+adminNS+" for "+unclaimed, func() error {
			return nothingComposed(t, cp, adminNS, unclaimed)
		})
	})

	var running *cluster
	var xrGeneration int64
	step(t, "an admin's XMiniCluster with spec.claimRef composes in its namespace", func(t *testing.T) {
		createAdminComposite(t, top, cp, adminComposite(t, cp, adminNS, main, true))
		eventually(t, 2*time.Minute, "XMiniCluster "+main+" is Valid and its Job runs 2 pods in "+adminNS, func() error {
			xr, err := getComposite(t, cp, main)
			if err != nil {
				return err
			}
			if err := wantCondition(xr, v1alpha2.ConditionValid, "True"); err != nil {
				return err
			}
			objs, err := getComposed(t, cp, adminNS, main)
			if err != nil {
				return err
			}
			for _, o := range objs.objects() {
				if err := ownedBy(o, xr); err != nil {
					return err
				}
			}
			if p := deref(objs.Job.Spec.Parallelism); p != 2 {
				return fmt.Errorf("Job %s/%s parallelism %d, want 2", adminNS, main, p)
			}
			// Its pods too, before the state below is taken: a pod the
			// job controller makes later would count as a change.
			pods := &corev1.PodList{}
			if err := cp.Client.List(ctx(t), pods, client.InNamespace(adminNS), client.MatchingLabels{batchv1.JobNameLabel: main}); err != nil {
				return err
			}
			if len(pods.Items) != 2 {
				return fmt.Errorf("Job %s/%s has %d pods, want 2", adminNS, main, len(pods.Items))
			}
			xrGeneration = xr.GetGeneration()
			return nil
		})
		running = snapshot(t, cp, adminNS, main)
	})

	before := clusterState(t, cp, tenantNS)
	step(t, "a tenant's claim naming it is not bound, and changes nothing", func(t *testing.T) {
		c := exampleWith(t, cp, helloWorld, tenantNS, grab, fmt.Sprintf(`
size: 1
resourceRef: {apiVersion: %s, kind: %s, name: %s}`, compositeGVK.GroupVersion(), compositeGVK.Kind, main))
		createTenantClaim(t, top, cp, tenant, c)
		eventually(t, time.Minute, "Crossplane refuses to bind the claim (Synced=False)", func() error {
			got, err := getClaim(t, cp, tenantNS, grab)
			if err != nil {
				return err
			}
			return wantCondition(got, "Synced", "False")
		})
		consistently(t, 20*time.Second, "the admin's MiniCluster keeps its claim and its size; nothing is composed in "+tenantNS, func() error {
			xr, err := getComposite(t, cp, main)
			if err != nil {
				return err
			}
			if ns, _, _ := unstructured.NestedString(xr.Object, "spec", "claimRef", "namespace"); ns != adminNS {
				return fmt.Errorf("XMiniCluster %s is bound to a claim in %q now, want %q", main, ns, adminNS)
			}
			if size, _, _ := unstructured.NestedInt64(xr.Object, "spec", "size"); size != 2 {
				return fmt.Errorf("XMiniCluster %s has spec.size %d, want 2: the tenant's claim was synced into it", main, size)
			}
			if g := xr.GetGeneration(); g != xrGeneration {
				return fmt.Errorf("XMiniCluster %s's spec changed (generation %d, was %d)", main, g, xrGeneration)
			}
			if job := getJob(t, cp, adminNS, main); deref(job.Spec.Parallelism) != 2 {
				return fmt.Errorf("Job %s/%s parallelism %d, want 2", adminNS, main, deref(job.Spec.Parallelism))
			}
			if err := running.unchanged(t, cp, true); err != nil {
				return err
			}
			return nothingComposed(t, cp, tenantNS, grab)
		})
		got, err := getClaim(t, cp, tenantNS, grab)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"size", "phase", "job"} {
			if v, found, _ := unstructured.NestedFieldNoCopy(got.Object, "status", k); found {
				t.Errorf("the tenant's claim shows the admin's status.%s (%v): want none", k, v)
			}
		}
		if err := before.unchangedOutside(clusterState(t, cp, tenantNS)); err != nil {
			t.Error(err)
		}
	})

	step(t, "deleting the tenant's claim leaves the admin's MiniCluster", func(t *testing.T) {
		if err := tenant.Delete(ctx(t), newClaim(tenantNS, grab)); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the tenant's claim is gone", func() error {
			if _, err := getClaim(t, cp, tenantNS, grab); !kerrors.IsNotFound(err) {
				return fmt.Errorf("claim %s/%s: %v", tenantNS, grab, err)
			}
			return nil
		})
		consistently(t, 10*time.Second, "the admin's XMiniCluster and its objects stay", func() error {
			xr, err := getComposite(t, cp, main)
			if err != nil {
				return err
			}
			if xr.GetDeletionTimestamp() != nil {
				return fmt.Errorf("XMiniCluster %s is being deleted", main)
			}
			return running.unchanged(t, cp, false)
		})
	})
}

// adminComposite is hello-world (size 2) as an XMiniCluster an admin makes
// by hand for namespace ns: the claim labels, and spec.claimRef when
// claimed (a claim of that name in ns, which need not exist: it is what
// keeps Crossplane from binding the composite to anyone else).
func adminComposite(t *testing.T, cp *harness.ControlPlane, ns, name string, claimed bool) *unstructured.Unstructured {
	t.Helper()
	claim := exampleWith(t, cp, helloWorld, ns, name, `size: 2`)
	spec, _, _ := unstructured.NestedMap(claim.Object, "spec")
	if claimed {
		spec["claimRef"] = map[string]any{
			"apiVersion": claimGVK.GroupVersion().String(), "kind": claimGVK.Kind, "name": name, "namespace": ns,
		}
	}
	xr := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	xr.SetGroupVersionKind(compositeGVK)
	xr.SetName(name)
	xr.SetLabels(map[string]string{v1alpha2.LabelClaimName: name, v1alpha2.LabelClaimNamespace: ns})
	return xr
}

// createAdminComposite creates an XMiniCluster as admin and deletes it
// when top ends.
func createAdminComposite(t, top *testing.T, cp *harness.ControlPlane, xr *unstructured.Unstructured) {
	t.Helper()
	if err := cp.Client.Create(ctx(t), xr.DeepCopy()); err != nil {
		t.Fatalf("cannot create XMiniCluster %s: %v", xr.GetName(), err)
	}
	top.Cleanup(func() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(compositeGVK)
		u.SetName(xr.GetName())
		_ = cp.Client.Delete(context.Background(), u)
	})
}

func getComposite(t *testing.T, cp *harness.ControlPlane, name string) (*unstructured.Unstructured, error) {
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(compositeGVK)
	err := cp.Client.Get(ctx(t), client.ObjectKey{Name: name}, xr)
	return xr, err
}

// waitCompositeValidFalse is waitValidFalse for a cluster-scoped
// XMiniCluster.
func waitCompositeValidFalse(t *testing.T, cp *harness.ControlPlane, name string, reason v1alpha2.ConditionReason, evidence func() string) string {
	t.Helper()
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		xr, err := getComposite(t, cp, name)
		if err == nil {
			st, m := condition(xr, v1alpha2.ConditionValid)
			if st == "True" {
				t.Fatalf("XMiniCluster %s is Valid=True (%s): it was composed, want Valid=False with reason %s; %s", name, m, reason, evidence())
			}
			if err = wantConditionReason(xr, v1alpha2.ConditionValid, "False", reason); err == nil {
				t.Logf("Valid=False (%s) after %s: %s", reason, time.Since(start).Round(100*time.Millisecond), m)
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 2m waiting until XMiniCluster %s is Valid=False with reason %s: %v", name, reason, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// fixVerbs are the verbs a refusal's fix starts with.
var fixVerbs = regexp.MustCompile(`\b(remove|drop|ask|use|set|add|label|rename|delete|choose|give)\b`)

// namesAFix tells whether a refusal tells the reader what to do: the
// function's refusals end each finding with an instruction (remove it, use
// another, ask the platform team, set or label something).
func namesAFix(msg string) bool {
	return fixVerbs.MatchString(strings.ToLower(msg))
}
