package function

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// TestVersionStamp: a build with a Version stamps it on every composed
// object's metadata and nowhere in the Job's pod template (immutable); a
// build without one stamps nothing.
func TestVersionStamp(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	for _, v := range []string{"", "v0.2.0"} {
		Version = v
		rsp := run(t, req(xr(helloSpec, ""), nil, ""))
		for name, r := range rsp.GetDesired().GetResources() {
			meta, _ := r.GetResource().AsMap()["metadata"].(map[string]any)
			ann, _ := meta["annotations"].(map[string]any)
			got, ok := ann[AnnotationFunctionVersion]
			if v == "" && ok {
				t.Errorf("Version unset: %s has %s=%v, want none", name, AnnotationFunctionVersion, got)
			}
			if v != "" && got != v {
				t.Errorf("Version %s: %s has %s=%v, want %s", v, name, AnnotationFunctionVersion, got, v)
			}
		}
		job := desired(t, rsp, "job", &batchv1.Job{})
		if _, ok := job.Spec.Template.Annotations[AnnotationFunctionVersion]; ok {
			t.Errorf("Version %q: the Job's pod template carries %s; a Job's template is immutable", v, AnnotationFunctionVersion)
		}
	}
}
