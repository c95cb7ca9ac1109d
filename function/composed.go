package function

import (
	"time"

	xpapiextv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// TTL is how long Crossplane may wait before it runs the composition of an
// unchanged MiniCluster again. With realtime compositions (on by default
// since Crossplane 1.17, and in v2) Crossplane re-runs it as soon as the
// composite or any composed object changes, and between changes it
// re-runs it after the TTL of the response (the SDK's default is one
// minute), each time applying every composed object and the composite's
// status again: for 100 MiniClusters, 600 no-op writes a minute. The
// function reads nothing Crossplane does not watch, so nothing is gained
// by running sooner: a day, the cap Crossplane puts on cached function
// responses (--xfn-cache-max-ttl). Crossplane's --sync-interval (default
// one hour) still re-reconciles everything as a safety net. Without
// realtime compositions the TTL is ignored and --poll-interval applies.
const TTL = 24 * time.Hour

// WatchesDroppedTTL is the TTL while Crossplane's circuit breaker drops the
// composite's watch events (its Responsive condition is False). Crossplane
// opens it when a composite gets a burst of events — as when its status
// flaps under informer lag (crossplane/crossplane#7062) — and for its
// cooldown (5 minutes by default) drops every event, a change of the
// MiniCluster's spec included; with TTL alone such a change would wait for
// the next resync, hours away. A run every 30 seconds while the breaker is
// open picks it up instead: the requeue is not a watch event, so the
// breaker does not drop it.
const WatchesDroppedTTL = 30 * time.Second

// ttlFor is the TTL of a response for the observed composite xr.
func ttlFor(xr map[string]any) time.Duration {
	if c := observedCondition(xr, string(xpapiextv1.TypeResponsive)); c["status"] == string(corev1.ConditionFalse) {
		return WatchesDroppedTTL
	}
	return TTL
}

// toComposed converts a typed object into a desired composed resource with
// the API machinery's converter. Fields the API server owns — an empty
// status, a null creationTimestamp (in the object and in a pod template) —
// are dropped, so that server-side apply never claims them and the desired
// state equals what the server keeps.
func toComposed(o runtime.Object) (*composed.Unstructured, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	dropNullTimestamp(u)
	if spec, ok := u["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			dropNullTimestamp(tmpl)
		}
	}
	if st, ok := u["status"].(map[string]any); ok && len(st) == 0 {
		delete(u, "status")
	}
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: u}}, nil
}

// dropNullTimestamp deletes a null metadata.creationTimestamp, then the
// metadata if nothing is left.
func dropNullTimestamp(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	if v, ok := md["creationTimestamp"]; ok && v == nil {
		delete(md, "creationTimestamp")
	}
	if len(md) == 0 {
		delete(obj, "metadata")
	}
}
