// Package plantest holds the plan the tests of render, observe and the
// function start from: hello-world's.
package plantest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// HelloPlan plans the hello-world MiniCluster flux-sample in tenant-a (4
// brokers, all of which the cluster waits for, one container), changed by
// opts before defaulting.
func HelloPlan(t *testing.T, opts ...func(*v1alpha2.MiniCluster)) *plan.Plan {
	t.Helper()
	mc := &v1alpha2.MiniCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample", Namespace: "tenant-a"},
		Spec: v1alpha2.MiniClusterSpec{
			Size:       ptr.To[int32](4),
			Containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9", Command: "echo hello world"}},
		},
	}
	for _, o := range opts {
		o(mc)
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	p, errs := plan.New(mc, plan.Facts{Namespace: "tenant-a"})
	if len(errs) > 0 {
		t.Fatalf("cannot plan hello-world: %v", errs)
	}
	return p
}
