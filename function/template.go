package function

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// AnnotationTemplateHash names, on the composed Job, a hash of the pod
// template the function rendered for it.
const AnnotationTemplateHash = "minicluster.flux-framework.org/template-hash"

// keepRunningTemplate makes the desired Job keep the pod template of the
// Job that runs, when the function would now render another one: a Job's
// template is immutable, so after an upgrade of the function that renders
// pods differently, applying the new template would fail on every
// running MiniCluster (Synced=False, and its status would stop following
// the Job until it is re-created). The running pods stay as they were
// created; a new MiniCluster gets the new template.
//
// The hash of the rendered template, kept on the Job, tells the two
// apart without comparing with what the API server defaulted: while it is
// the same, the rendered template is applied unchanged (a no-op), so this
// costs a running MiniCluster nothing.
func keepRunningTemplate(desired *composed.Unstructured, observed resource.ObservedComposed) error {
	tmpl, found := nestedMap(desired.Object, "spec", "template")
	if !found {
		return nil
	}
	hash, err := templateHash(tmpl)
	if err != nil {
		return err
	}
	if observed.Resource == nil {
		setAnnotation(desired, AnnotationTemplateHash, hash)
		return nil
	}
	running, found := nestedMap(observed.Resource.Object, "spec", "template")
	if !found {
		setAnnotation(desired, AnnotationTemplateHash, hash)
		return nil
	}
	was := observed.Resource.GetAnnotations()[AnnotationTemplateHash]
	if was == hash {
		setAnnotation(desired, AnnotationTemplateHash, hash)
		return nil
	}
	spec, _ := desired.Object["spec"].(map[string]any)
	spec["template"] = runtime.DeepCopyJSONValue(running)
	if was != "" {
		setAnnotation(desired, AnnotationTemplateHash, was)
	}
	return nil
}

// templateHash is a stable hash of a rendered pod template (JSON encodes
// map keys sorted).
func templateHash(tmpl map[string]any) (string, error) {
	b, err := json.Marshal(tmpl)
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
