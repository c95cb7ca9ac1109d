package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func TestKeepRunningJobSpec(t *testing.T) {
	failJob := func(codes ...any) map[string]any {
		return map[string]any{"rules": []any{map[string]any{"action": "FailJob", "onExitCodes": map[string]any{"containerName": "flux-sample", "operator": "In", "values": codes}}}}
	}
	rendered := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "env": []any{map[string]any{"name": "NEW", "value": "1"}}}}}}
	renderedSpec := func(tmpl map[string]any) map[string]any {
		return map[string]any{"parallelism": int64(4), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42), int64(47)), "template": tmpl}
	}
	hash, err := immutableHash(renderedSpec(rendered))
	if err != nil {
		t.Fatal(err)
	}
	// What the API server keeps of a Job an older function rendered: other
	// pod contents and failure rules, fields it defaulted, no successPolicy.
	running := map[string]any{"metadata": map[string]any{"labels": map[string]any{"job-name": "flux-sample"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "terminationMessagePath": "/dev/termination-log"}}}}
	runningSpec := map[string]any{"parallelism": int64(2), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42)), "template": running}
	// The rendered spec as the API server returns it.
	defaulted := map[string]any{"parallelism": int64(2), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42), int64(47)), "template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"job-name": "flux-sample"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "flux-sample", "image": "ubuntu:noble", "env": []any{map[string]any{"name": "NEW", "value": "1"}}, "terminationMessagePath": "/dev/termination-log"}}}}}
	job := func(spec map[string]any, annotations map[string]any) map[string]any {
		md := map[string]any{"name": "flux-sample"}
		if annotations != nil {
			md["annotations"] = annotations
		}
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": spec}
	}
	withSuccessPolicy := renderedSpec(rendered)
	withSuccessPolicy["successPolicy"] = map[string]any{"rules": []any{map[string]any{"succeededIndexes": "0"}}}
	cases := map[string]struct {
		reason   string
		desired  map[string]any // rendered spec; renderedSpec(rendered) if nil
		observed map[string]any // nil: no Job yet
		want     map[string]any
	}{
		"NewJob": {
			reason: "A Job that does not exist yet gets the rendered spec and its hash.",
			want:   job(renderedSpec(rendered), map[string]any{AnnotationJobSpecHash: hash}),
		},
		"SameSpec": {
			reason:   "A running Job of the same rendered spec: the rendered spec, applied unchanged (a no-op).",
			observed: job(defaulted, map[string]any{AnnotationJobSpecHash: hash}),
			want:     job(renderedSpec(rendered), map[string]any{AnnotationJobSpecHash: hash}),
		},
		"UpgradedFunction": {
			reason:   "A running Job whose template and failure rules an older function rendered differently keeps them and its hash; the mutable parallelism is the new one.",
			observed: job(runningSpec, map[string]any{AnnotationJobSpecHash: "0123456789abcdef"}),
			want:     job(map[string]any{"parallelism": int64(4), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42)), "template": running}, map[string]any{AnnotationJobSpecHash: "0123456789abcdef"}),
		},
		"FieldTheRunningJobLacks": {
			reason:   "An immutable field the running Job never had is not added.",
			desired:  withSuccessPolicy,
			observed: job(runningSpec, map[string]any{AnnotationJobSpecHash: "0123456789abcdef"}),
			want:     job(map[string]any{"parallelism": int64(4), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42)), "template": running}, map[string]any{AnnotationJobSpecHash: "0123456789abcdef"}),
		},
		"BeforeHashes": {
			reason:   "A Job composed before the function kept hashes keeps its immutable spec, and gets no hash it never had.",
			observed: job(runningSpec, nil),
			want:     job(map[string]any{"parallelism": int64(4), "completionMode": "Indexed", "podFailurePolicy": failJob(int64(42)), "template": running}, nil),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.desired
			if spec == nil {
				spec = renderedSpec(rendered)
			}
			desired := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: job(spec, nil)}}
			var observed *unstructured.Unstructured
			if tc.observed != nil {
				observed = &unstructured.Unstructured{Object: tc.observed}
			}
			if _, err := keepRunningJobSpec(desired, observed); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, desired.Object); diff != "" {
				t.Errorf("%s\ndesired Job: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestKeepRunningDeadline(t *testing.T) {
	pod := func(deadline any) map[string]any {
		spec := map[string]any{"containers": []any{}}
		if deadline != nil {
			spec["activeDeadlineSeconds"] = deadline
		}
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}
	}
	cases := map[string]struct {
		reason            string
		desired, observed map[string]any
		want              map[string]any
	}{
		"New": {
			reason:  "A services Pod composed new gets the rendered deadline.",
			desired: pod(int64(600)),
			want:    pod(int64(600)),
		},
		"Longer": {
			reason:   "The platform raised the maximum deadline: the running Pod keeps its own (the API server lets a pod's only shrink).",
			desired:  pod(int64(900)),
			observed: pod(int64(600)),
			want:     pod(int64(600)),
		},
		"Shorter": {
			reason:   "The platform lowered the maximum deadline: what runs keeps its own, or the lower one would end it (a policy change never tears down what runs).",
			desired:  pod(int64(300)),
			observed: pod(int64(600)),
			want:     pod(int64(600)),
		},
		"RunningWithout": {
			reason:   "A Pod composed before it had a deadline gets one: setting it is allowed.",
			desired:  pod(int64(600)),
			observed: pod(nil),
			want:     pod(int64(600)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			desired := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: tc.desired}}
			var observed *unstructured.Unstructured
			if tc.observed != nil {
				observed = &unstructured.Unstructured{Object: tc.observed}
			}
			keepRunningDeadline(desired, observed)
			if diff := cmp.Diff(tc.want, desired.Object); diff != "" {
				t.Errorf("%s\ndesired Pod: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
