package driver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

func TestRequest(t *testing.T) {
	xr := func() *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "XMiniCluster", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"size": int64(2)}})
	}
	desired := &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"a"}}`)}}
	// A composite that never met an API server gets the uid crossplane
	// composition render gives it, so that what it composes is its own
	// when fed back.
	uid := CompositeUID(xr())
	if uid == "" || uid != CompositeUID(xr()) {
		t.Fatalf("CompositeUID is %q, and not the same twice", uid)
	}
	type args struct {
		observed []*unstructured.Unstructured
		input    map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *fnv1.RunFunctionRequest
	}{
		"FirstReconcile": {
			reason: "Nothing observed but the composite; the desired composite only names it, as Crossplane starts a pipeline.",
			want: &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "minicluster-driver"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"a","uid":"` + uid + `"},"spec":{"size":2}}`)}, Resources: map[string]*fnv1.Resource{}},
				Desired:  desired,
			},
		},
		"ObservedByResourceName": {
			reason: "An object carrying Crossplane's composition-resource-name annotation is that composed resource; others are not Crossplane's and are left out.",
			args: args{observed: []*unstructured.Unstructured{
				obj(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a", "annotations": map[string]any{AnnotationResourceName: "service"}}}),
				obj(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "unrelated"}}),
			}},
			want: &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "minicluster-driver"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"a","uid":"` + uid + `"},"spec":{"size":2}}`)}, Resources: map[string]*fnv1.Resource{"service": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","annotations":{"crossplane.io/composition-resource-name":"service"}}}`)}}},
				Desired:  desired,
			},
		},
		"StatusOfTheObservedMiniCluster": {
			reason: "The observed claim or composite of the same name lends its status (the maximum size the function wrote before), as on a live cluster.",
			args: args{observed: []*unstructured.Unstructured{
				obj(map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "metadata": map[string]any{"name": "a"}, "status": map[string]any{"maximumSize": int64(4)}}),
				obj(map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "metadata": map[string]any{"name": "b"}, "status": map[string]any{"maximumSize": int64(9)}}),
			}},
			want: &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "minicluster-driver"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"a","uid":"` + uid + `"},"spec":{"size":2},"status":{"maximumSize":4}}`)}, Resources: map[string]*fnv1.Resource{}},
				Desired:  desired,
			},
		},
		"Input": {
			reason: "The Composition's input reaches the function.",
			args:   args{input: map[string]any{"kind": "Input", "defaults": map[string]any{}}},
			want: &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "minicluster-driver"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"a","uid":"` + uid + `"},"spec":{"size":2}}`)}, Resources: map[string]*fnv1.Resource{}},
				Desired:  desired,
				Input:    resource.MustStructJSON(`{"kind":"Input","defaults":{}}`),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := xr()
			got, err := Request(in, tc.args.observed, tc.args.input)
			if err != nil {
				t.Fatalf("%s\nRequest: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRequest: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(xr(), in); diff != "" {
				t.Errorf("%s\nRequest modified the composite: -before, +after:\n%s", tc.reason, diff)
			}
		})
	}
}
