package function

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// AnnotationJobSpecHash names, on the composed Job, a hash of the
// immutable part of the Job spec the function rendered for it.
const AnnotationJobSpecHash = v1alpha2.AnnotationJobSpecHash

// immutableJobFields are the Job spec fields the API server refuses to
// change once the Job exists (k8s.io/kubernetes
// pkg/apis/batch/validation ValidateJobSpecUpdate; the selector is the
// server's own).
var immutableJobFields = []string{"template", "podFailurePolicy", "successPolicy", "completionMode", "backoffLimitPerIndex", "managedBy"}

// keepRunningJobSpec makes the desired Job keep the immutable part of the
// spec of the Job that runs, when the function would now render another
// one: after an upgrade of the function that renders pods or the Job's
// failure rules differently, applying them would fail on every running
// MiniCluster (Synced=False, and its status would stop following the Job
// until it is re-created). The running pods stay as they were created; a
// new MiniCluster gets the new spec.
//
// The hash of the rendered fields, kept on the Job, tells the two apart
// without comparing with what the API server defaulted: while it is the
// same, the rendered spec is applied unchanged (a no-op), so this costs a
// running MiniCluster nothing. It returns the hash of what was rendered,
// which the admission room compares with the running Job's. running is
// the MiniCluster's own Job, nil when there is none.
func keepRunningJobSpec(desired *composed.Unstructured, running *unstructured.Unstructured) (string, error) {
	spec, found := nestedMap(desired.Object, "spec")
	if !found {
		return "", nil
	}
	hash, err := immutableHash(spec)
	if err != nil {
		return "", err
	}
	var runningSpec map[string]any
	if running != nil {
		runningSpec, found = nestedMap(running.Object, "spec")
	}
	if running == nil || !found {
		setAnnotation(desired, AnnotationJobSpecHash, hash)
		return hash, nil
	}
	was := running.GetAnnotations()[AnnotationJobSpecHash]
	if was == hash {
		setAnnotation(desired, AnnotationJobSpecHash, hash)
		return hash, nil
	}
	for _, f := range immutableJobFields {
		if v, ok := runningSpec[f]; ok {
			spec[f] = runtime.DeepCopyJSONValue(v)
		} else {
			delete(spec, f) // the running Job never had it: adding it would be a change
		}
	}
	if was != "" {
		setAnnotation(desired, AnnotationJobSpecHash, was)
	}
	return hash, nil
}

// immutableHash is a stable hash of the immutable fields of a rendered Job
// spec (JSON encodes map keys sorted).
func immutableHash(spec map[string]any) (string, error) {
	fields := map[string]any{}
	for _, f := range immutableJobFields {
		if v, ok := spec[f]; ok {
			fields[f] = v
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// nestedMap is the map at fields of obj, not copied.
func nestedMap(obj map[string]any, fields ...string) (map[string]any, bool) {
	cur := obj
	for _, f := range fields {
		next, ok := cur[f].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func setAnnotation(u *composed.Unstructured, key, value string) {
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	u.SetAnnotations(ann)
}

// keepRunningDeadline makes the desired Job or services Pod keep the
// activeDeadlineSeconds of the one that runs. A MiniCluster's own
// spec.deadlineSeconds cannot change; a MiniCluster without one takes
// policy.maxDeadlineSeconds, so only a policy change moves it, and a
// policy change never tears down what runs: a lower maximum applied to a
// running Job would end it with DeadlineExceeded once it has run that
// long, and the API server refuses a longer deadline on a pod (it may only
// shrink). running is the MiniCluster's own object, nil when there is
// none; a running object without a deadline gets the rendered one.
func keepRunningDeadline(desired *composed.Unstructured, running *unstructured.Unstructured) {
	if running == nil {
		return
	}
	if was, ok, _ := unstructured.NestedInt64(running.Object, "spec", "activeDeadlineSeconds"); ok {
		_ = unstructured.SetNestedField(desired.Object, was, "spec", "activeDeadlineSeconds")
	}
}
