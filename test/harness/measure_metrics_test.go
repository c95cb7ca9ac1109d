package harness

import "testing"

func TestLabels(t *testing.T) {
	got := labels(`apiserver_request_total{code="200",component="apiserver",group="flux-framework.org",resource="miniclusters",scope="resource",subresource="status",verb="PUT",version="v1alpha2"}`)
	if got["resource"] != "miniclusters" || got["subresource"] != "status" || got["verb"] != "PUT" || got["group"] != "flux-framework.org" || got["code"] != "200" {
		t.Errorf("labels = %v", got)
	}
	if got := labels(`apiserver_request_total{group="",resource="pods",verb="POST"}`); got["group"] != "" || got["resource"] != "pods" {
		t.Errorf("labels = %v", got)
	}
}
