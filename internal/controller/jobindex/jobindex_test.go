package jobindex

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// broker is the labels of broker pod i of MiniCluster flux-sample, as the
// function and the Job controller set them.
func broker(i string) map[string]string {
	return map[string]string{
		"app": "flux-operator", "app.kubernetes.io/name": "flux-sample", "hpa-selector": "flux-sample",
		"job-name": "flux-sample", "batch.kubernetes.io/job-completion-index": i,
		"flux-framework.org/job-index": "true",
	}
}

func with(l map[string]string, k, v string) map[string]string {
	l[k] = v
	return l
}

func without(l map[string]string, k string) map[string]string {
	delete(l, k)
	return l
}

func TestReconcile(t *testing.T) {
	cases := map[string]struct {
		reason string
		labels map[string]string // nil: no pod
		want   map[string]string
	}{
		"Lead": {
			reason: "The lead gets job-index=0, so upstream's Service selecting job-index: \"0\" reaches it.",
			labels: broker("0"),
			want:   with(broker("0"), "job-index", "0"),
		},
		"Worker": {
			reason: "Every broker gets its own index.",
			labels: broker("3"),
			want:   with(broker("3"), "job-index", "3"),
		},
		"Wrong": {
			reason: "A job-index that is not the pod's index (a user's pod label, the same on every pod) is corrected.",
			labels: with(broker("2"), "job-index", "0"),
			want:   with(broker("2"), "job-index", "2"),
		},
		"OtherIndexedJob": {
			reason: "An Indexed Job's pod that is not a MiniCluster's is left alone.",
			labels: without(broker("1"), "app"),
			want:   without(broker("1"), "app"),
		},
		"NoSelectorLabel": {
			reason: "app=flux-operator alone (e.g. the operator's own) is not ours.",
			labels: without(broker("1"), "hpa-selector"),
			want:   without(broker("1"), "hpa-selector"),
		},
		"NotOptedIn": {
			reason: "A broker pod of a MiniCluster that did not ask for job-index (no flux-framework.org/job-index: \"true\" in spec.pod.labels) is left alone.",
			labels: without(broker("0"), "flux-framework.org/job-index"),
			want:   without(broker("0"), "flux-framework.org/job-index"),
		},
		"OptInNotTrue": {
			reason: "Only the value \"true\" opts in.",
			labels: with(broker("0"), "flux-framework.org/job-index", "false"),
			want:   with(broker("0"), "flux-framework.org/job-index", "false"),
		},
		"ServicesPod": {
			reason: "The services pod has no completion index: it gets no job-index.",
			labels: without(broker("0"), "batch.kubernetes.io/job-completion-index"),
			want:   without(broker("0"), "batch.kubernetes.io/job-completion-index"),
		},
		"Gone": {
			reason: "A pod deleted before its reconcile is no error.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme)
			if tc.labels != nil {
				b = b.WithObjects(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: tc.labels}})
			}
			c := b.Build()
			r := &Reconciler{Reader: c, Client: c, Log: logging.NewNopLogger()}
			key := types.NamespacedName{Namespace: "ns", Name: "p"}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			pod := &corev1.Pod{}
			err := c.Get(context.Background(), key, pod)
			if tc.labels == nil {
				if client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pod.Labels); diff != "" {
				t.Errorf("%s\nlabels: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPodCache checks that the pod cache holds only pods that opted in.
func TestPodCache(t *testing.T) {
	sel := PodCache().Label
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{broker("0"), true},
		{without(broker("0"), "flux-framework.org/job-index"), false},
		{map[string]string{"app": "nginx"}, false},
	} {
		if got := sel.Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("pod cache selector %q matches %v: %t, want %t", sel, tc.labels, got, tc.want)
		}
	}
}
