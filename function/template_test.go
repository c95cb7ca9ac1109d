package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

func TestKeepRunningTemplate(t *testing.T) {
	rendered := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "env": []any{map[string]any{"name": "NEW", "value": "1"}}}}}}
	hash, err := templateHash(rendered)
	if err != nil {
		t.Fatal(err)
	}
	// What the API server keeps of a template an older function rendered:
	// other contents, and fields it defaulted.
	running := map[string]any{"metadata": map[string]any{"labels": map[string]any{"job-name": "flux-sample"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "terminationMessagePath": "/dev/termination-log"}}, "restartPolicy": "OnFailure"}}
	// The same template as rendered, as the API server returns it.
	defaulted := map[string]any{"metadata": map[string]any{"labels": map[string]any{"job-name": "flux-sample"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "env": []any{map[string]any{"name": "NEW", "value": "1"}}, "terminationMessagePath": "/dev/termination-log"}}}}
	job := func(tmpl map[string]any, annotations map[string]any) map[string]any {
		md := map[string]any{"name": "flux-sample"}
		if annotations != nil {
			md["annotations"] = annotations
		}
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": map[string]any{"template": tmpl}}
	}
	cases := map[string]struct {
		reason   string
		observed map[string]any // nil: no Job yet
		want     map[string]any
	}{
		"NewJob": {
			reason: "A Job that does not exist yet gets the rendered template and its hash.",
			want:   job(rendered, map[string]any{AnnotationTemplateHash: hash}),
		},
		"SameTemplate": {
			reason:   "A running Job of the same rendered template: the rendered template, applied unchanged (a no-op).",
			observed: job(defaulted, map[string]any{AnnotationTemplateHash: hash}),
			want:     job(rendered, map[string]any{AnnotationTemplateHash: hash}),
		},
		"UpgradedFunction": {
			reason:   "A running Job whose template an older function rendered differently: it keeps its template and hash (a Job's template is immutable).",
			observed: job(running, map[string]any{AnnotationTemplateHash: "0123456789abcdef"}),
			want:     job(running, map[string]any{AnnotationTemplateHash: "0123456789abcdef"}),
		},
		"BeforeHashes": {
			reason:   "A Job composed before the function kept hashes: it keeps its template, and gets no hash it never had.",
			observed: job(running, nil),
			want:     job(running, nil),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			desired := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: job(rendered, nil)}}
			var observed resource.ObservedComposed
			if tc.observed != nil {
				observed.Resource = &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: tc.observed}}
			}
			if err := keepRunningTemplate(desired, observed); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, desired.Object); diff != "" {
				t.Errorf("%s\ndesired Job: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
