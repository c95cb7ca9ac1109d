package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
)

// TestRenderGang: a gang adds the Workload and the PodGroup before the
// Job, whose pods name the PodGroup; without one nothing of it is
// rendered.
func TestRenderGang(t *testing.T) {
	cases := map[string]struct {
		reason   string
		gang     *plan.Gang
		wantKeys []string
		wantJoin []Field
	}{
		"NoGang": {
			reason:   "Without a gang the Job is the last object, with no field beyond its type.",
			wantKeys: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyJob},
		},
		"Gang": {
			reason:   "The Workload and the PodGroup come before the Job, so Crossplane creates the gang with or before its pods.",
			gang:     &plan.Gang{PodGroup: "flux-sample", MinCount: 3},
			wantKeys: []string{KeyEntrypoint, KeyCurveCert, KeyService, KeyWorkload, KeyPodGroup, KeyJob},
			wantJoin: []Field{{Path: []string{"spec", "template", "spec", "schedulingGroup"}, Value: map[string]any{"podGroupName": "flux-sample"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			p.Gang = tc.gang
			objs := Render(Input{Plan: p, CurveCert: []byte("cert")})
			var keys []string
			var join []Field
			for _, o := range objs {
				keys = append(keys, o.Name)
				if o.Name == KeyJob {
					join = o.Beyond
				}
			}
			if diff := cmp.Diff(tc.wantKeys, keys); diff != "" {
				t.Errorf("%s\nkeys -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantJoin, join); diff != "" {
				t.Errorf("%s\nJob fields -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestGangObjects: the Workload and the PodGroup as the API server reads
// them.
func TestGangObjects(t *testing.T) {
	p := plantest.HelloPlan(t)
	p.Gang = &plan.Gang{PodGroup: "flux-sample", MinCount: 3}
	in := Input{Plan: p}
	meta := map[string]any{"name": "flux-sample", "namespace": "tenant-a", "labels": map[string]any{"app.kubernetes.io/name": "flux-sample"}}
	policy := map[string]any{"gang": map[string]any{"minCount": int64(3)}}
	cases := map[string]struct {
		reason string
		got    *unstructured.Unstructured
		want   map[string]any
	}{
		"Workload": {
			reason: "One pod group template, the brokers, as a gang; its controller is the MiniCluster.",
			got:    Workload(in),
			want: map[string]any{
				"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta,
				"spec": map[string]any{
					"controllerRef":     map[string]any{"apiGroup": "flux-framework.org", "kind": "MiniCluster", "name": "flux-sample"},
					"podGroupTemplates": []any{map[string]any{"name": "brokers", "schedulingPolicy": policy}},
				},
			},
		},
		"PodGroup": {
			reason: "The gang the scheduler reads, an instance of the Workload's template.",
			got:    PodGroup(in),
			want: map[string]any{
				"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta,
				"spec": map[string]any{
					"workloadRef":      map[string]any{"workloadName": "flux-sample", "templateName": "brokers"},
					"schedulingPolicy": policy,
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got.Object); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
