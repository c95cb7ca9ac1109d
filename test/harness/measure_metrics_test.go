package harness

import (
	"os"
	"testing"
	"time"
)

func TestProcessUsage(t *testing.T) {
	// Burn some CPU so the test process has used at least a tick.
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	u, err := ProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.RSS <= 0 || u.PeakRSS < u.RSS {
		t.Errorf("ProcessUsage(self) = %+v, want CPU > 0 and 0 < RSS <= PeakRSS", u)
	}
	if _, err := ProcessUsage(-1); err == nil {
		t.Error("ProcessUsage(-1) did not fail")
	}
}

func TestLabels(t *testing.T) {
	got := labels(`apiserver_request_total{code="200",component="apiserver",group="flux-framework.org",resource="miniclusters",scope="resource",subresource="status",verb="PUT",version="v1alpha2"}`)
	if got["resource"] != "miniclusters" || got["subresource"] != "status" || got["verb"] != "PUT" || got["group"] != "flux-framework.org" || got["code"] != "200" {
		t.Errorf("labels = %v", got)
	}
	if got := labels(`apiserver_request_total{group="",resource="pods",verb="POST"}`); got["group"] != "" || got["resource"] != "pods" {
		t.Errorf("labels = %v", got)
	}
}
