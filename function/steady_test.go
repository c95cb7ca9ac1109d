package function_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// writtenBack is the request of the reconcile after rsp answered req,
// when nothing else changed: the observed composed resources stay as they
// are, and the composite carries what Crossplane wrote from rsp — the
// desired status, and rsp's conditions as status conditions (with a
// transition time), the ones targeted at the claim listed in
// claimConditionTypes.
func writtenBack(tb testing.TB, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionRequest {
	tb.Helper()
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	var conds, claimTypes []any
	for _, c := range rsp.GetConditions() {
		m := map[string]any{"type": c.GetType(), "reason": c.GetReason(), "lastTransitionTime": "2024-01-01T00:00:04Z"}
		switch c.GetStatus() {
		case fnv1.Status_STATUS_CONDITION_TRUE:
			m["status"] = "True"
		case fnv1.Status_STATUS_CONDITION_FALSE:
			m["status"] = "False"
		default:
			m["status"] = "Unknown"
		}
		if c.GetMessage() != "" {
			m["message"] = c.GetMessage()
		}
		conds = append(conds, m)
		if c.GetTarget() == fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
			claimTypes = append(claimTypes, c.GetType())
		}
	}
	for _, t := range []string{"Synced", "Ready"} {
		conds = append(conds, map[string]any{"type": t, "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:03Z"})
	}
	st["conditions"] = conds
	st["claimConditionTypes"] = claimTypes
	xr["status"] = st

	var observed []*unstructured.Unstructured
	for _, r := range req.GetObserved().GetResources() {
		observed = append(observed, &unstructured.Unstructured{Object: r.GetResource().AsMap()})
	}
	next, err := driver.Request(&unstructured.Unstructured{Object: xr}, observed, req.GetInput().AsMap())
	if err != nil {
		tb.Fatal(err)
	}
	next.Meta.Tag = req.GetMeta().GetTag()
	return next
}

// TestSteadyStateIsAFixedPoint: once a MiniCluster's objects exist as the
// API server returns them (defaulted fields, uid, owner, the Job's status)
// and its composite carries what the function returned, another reconcile
// of the unchanged MiniCluster returns exactly the same response — desired
// composed resources and their readiness, the composite's status,
// conditions, results and TTL — so that Crossplane has nothing to write.
// And the response does not ask to be run again soon: everything the
// function reads is watched by Crossplane (realtime compositions), so a
// short TTL only makes Crossplane re-apply every object of every
// MiniCluster that often.
func TestSteadyStateIsAFixedPoint(t *testing.T) {
	for _, ex := range exampleNames(t) {
		t.Run(ex, func(t *testing.T) {
			e := loadExample(t, ex)
			fn := function.New(function.WithRandom(fixedEntropy{}))
			run := func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
				t.Helper()
				rsp, err := driver.RunRequest(context.Background(), fn, req, e.cluster)
				if err != nil {
					t.Fatal(err)
				}
				if msg := fatalResult(rsp); msg != "" {
					t.Fatal(msg)
				}
				return rsp
			}
			first := run(e.requested(t))
			req := observe(t, e, first)
			second := run(req)
			third := run(writtenBack(t, req, second))
			fourth := run(writtenBack(t, req, third))
			if d := cmp.Diff(second, third, protocmp.Transform()); d != "" {
				t.Errorf("the response changed between two reconciles of an unchanged MiniCluster (-second +third):\n%s", d)
			}
			if !proto.Equal(third, fourth) {
				t.Errorf("the response changed between the third and the fourth reconcile: %s", cmp.Diff(third, fourth, protocmp.Transform()))
			}
			if ttl := second.GetMeta().GetTtl().AsDuration(); ttl < time.Hour {
				t.Errorf("TTL %s: Crossplane would re-run the composition, and re-apply every object, every %s; want at least an hour", ttl, ttl)
			}
		})
	}
}
