package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestElastic scales a MiniCluster created with maxSize 6 between its size
// and its maximum, with kubectl's /scale subresource and with spec.size,
// and checks the API server refuses a size above maxSize.
func TestElastic(t *testing.T) { testElastic(t, controlPlane(t)) }

// TestElasticV2 is TestElastic in the Crossplane v2 shape, whose XRD
// carries the same /scale subresource.
func TestElasticV2(t *testing.T) { testElastic(t, controlPlaneV2(t)) }

func testElastic(t *testing.T, cp *harness.ControlPlane) {
	const ns, name = "tenant-elastic", "flux-elastic"
	createNamespace(t, cp, ns)
	claim := exampleClaim(t, cp, helloWorld, ns, name)
	if err := unstructured.SetNestedField(claim.Object, int64(2), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(claim.Object, int64(6), "spec", "maxSize"); err != nil {
		t.Fatal(err)
	}
	createClaim(t, cp, claim)

	var cm *corev1.ConfigMap
	var jobUID types.UID
	step(t, "starts at size 2 with hosts for 6", func(t *testing.T) {
		waitJobSize(t, cp, ns, name, 2)
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := wantStatus(c, map[string]any{"maximumSize": int64(6), "selector": "hpa-selector=" + name}); err != nil {
			t.Error(err)
		}
		objs, err := getComposed(t, cp, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		cm, jobUID = objs.ConfigMap, objs.Job.UID
		if h := cm.Data["hostlist"]; h != name+"-[0-5]" {
			t.Errorf("hostlist = %q, want %q (sized to maxSize)", h, name+"-[0-5]")
		}
		if !strings.Contains(cm.Data["broker.toml"], "'"+name+"-[0-5]'") {
			t.Errorf("broker.toml does not declare hosts %s-[0-5]:\n%s", name, cm.Data["broker.toml"])
		}
	})

	step(t, "kubectl scale to maxSize", func(t *testing.T) {
		scale(t, cp, ns, name, 6)
		waitJobSize(t, cp, ns, name, 6)
		checkSameCluster(t, cp, ns, name, jobUID, cm)
		eventually(t, time.Minute, "the job controller runs 6 pods", func() error {
			return wantPods(t, cp, ns, name, 6)
		})
	})

	step(t, "a size above maxSize is rejected by the API server", func(t *testing.T) {
		err := mergePatch(t, cp, ns, name, `{"spec":{"size":7}}`)
		if err == nil {
			t.Fatal("size 7 with maxSize 6 was accepted")
		}
		if !strings.Contains(err.Error(), "spec.maxSize must be at least spec.size") {
			t.Errorf("size 7 was rejected with %q, want the XRD rule's message", err)
		}
		t.Logf("rejected: %v", err)
		err = cp.Client.SubResource("scale").Patch(ctx(t), scaleTarget(ns, name), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":7}}`)))
		if err == nil || !strings.Contains(err.Error(), "spec.maxSize must be at least spec.size") {
			t.Errorf("kubectl scale --replicas=7: got %v, want the XRD rule's message", err)
		}
	})

	step(t, "scale down by spec.size", func(t *testing.T) {
		if err := mergePatch(t, cp, ns, name, `{"spec":{"size":2}}`); err != nil {
			t.Fatal(err)
		}
		waitJobSize(t, cp, ns, name, 2)
		checkSameCluster(t, cp, ns, name, jobUID, cm)
		eventually(t, time.Minute, "the job controller runs 2 pods", func() error {
			return wantPods(t, cp, ns, name, 2)
		})
	})
}

// scale sets a claim's replicas through its /scale subresource, as
// `kubectl scale minicluster/NAME --replicas=N` does.
func scale(t *testing.T, cp *harness.ControlPlane, ns, name string, replicas int) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if err := cp.Client.SubResource("scale").Patch(ctx(t), scaleTarget(ns, name), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("cannot scale %s/%s to %d: %v", ns, name, replicas, err)
	}
}

func scaleTarget(ns, name string) *unstructured.Unstructured { return newClaim(ns, name) }

// checkSameCluster checks that scaling changed the Job in place and left the
// broker configuration (hosts) alone. The ConfigMap itself may change: the
// brokers' start script carries the quorum, which is the size for a cluster
// created below its maxSize.
func checkSameCluster(t *testing.T, cp *harness.ControlPlane, ns, name string, jobUID types.UID, cm *corev1.ConfigMap) {
	t.Helper()
	objs, err := getComposed(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if objs.Job.UID != jobUID {
		t.Errorf("the Job was re-created (uid %s, was %s)", objs.Job.UID, jobUID)
	}
	if objs.ConfigMap.UID != cm.UID {
		t.Errorf("the ConfigMap was re-created (uid %s, was %s)", objs.ConfigMap.UID, cm.UID)
	}
	for _, k := range []string{"broker.toml", "hostlist"} {
		if objs.ConfigMap.Data[k] != cm.Data[k] {
			t.Errorf("%s changed on scaling:\n%s\nwas:\n%s", k, objs.ConfigMap.Data[k], cm.Data[k])
		}
	}
}

func wantPods(t *testing.T, cp *harness.ControlPlane, ns, job string, n int) error {
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
		return err
	}
	live := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live++
		}
	}
	if live != n {
		return fmt.Errorf("%d pods, want %d", live, n)
	}
	return nil
}
