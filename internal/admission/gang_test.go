package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

func TestGangScheduling(t *testing.T) {
	apiService := func(status string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{{Object: map[string]any{
			"metadata": map[string]any{"name": WorkloadAPIService},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": status}}},
		}}}
	}
	job := func(podGroup string) *unstructured.Unstructured {
		spec := map[string]any{}
		if podGroup != "" {
			spec["schedulingGroup"] = map[string]any{"podGroupName": podGroup}
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}}}
	}
	pg := func(minCount any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": minCount}}}}}
	}
	lookup := []Lookup{{Name: LookupWorkloadAPI, APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Object: WorkloadAPIService}}
	type want struct {
		on       bool
		minCount int32
		lookups  []Lookup
		waiting  bool
		refused  string
	}
	cases := map[string]struct {
		reason string
		mode   v1beta1.GangMode
		own    map[string]*unstructured.Unstructured
		answer []*unstructured.Unstructured
		// unanswered: Crossplane has not answered yet.
		unanswered bool
		want       want
	}{
		"AutoWaits": {
			reason: "Nothing is decided before Crossplane answers: the first run asks.",
			mode:   v1beta1.GangAuto, unanswered: true,
			want: want{lookups: lookup, waiting: true},
		},
		"AutoServed": {
			reason: "Auto starts a gang where the API is Available.",
			mode:   v1beta1.GangAuto, answer: apiService("True"),
			want: want{on: true, lookups: lookup},
		},
		"AutoNotServed": {
			reason: "Auto changes nothing where the cluster has no such APIService.",
			mode:   v1beta1.GangAuto,
			want:   want{lookups: lookup},
		},
		"AutoUnavailable": {
			reason: "An APIService that is not Available does not serve the kinds.",
			mode:   v1beta1.GangAuto, answer: apiService("False"),
			want: want{lookups: lookup},
		},
		"RequiredNotServed": {
			reason: "Required refuses where the API is not served.",
			mode:   v1beta1.GangRequired, answer: apiService("False"),
			want: want{lookups: lookup, refused: ReasonGangUnavailable},
		},
		"Disabled": {
			reason: "Disabled asks nothing and composes no gang.",
			mode:   v1beta1.GangDisabled, answer: apiService("True"),
			want: want{},
		},
		"JobInGang": {
			reason: "A Job whose pods name a PodGroup keeps it, with the size it started with, whatever the mode: nothing is asked.",
			mode:   v1beta1.GangDisabled,
			own:    map[string]*unstructured.Unstructured{render.KeyJob: job("mc"), render.KeyPodGroup: pg(float64(3))},
			want:   want{on: true, minCount: 3},
		},
		"JobInGangIntMinCount": {
			reason: "The PodGroup's size reads as an integer too.",
			mode:   v1beta1.GangAuto,
			own:    map[string]*unstructured.Unstructured{render.KeyJob: job("mc"), render.KeyPodGroup: pg(int64(5))},
			want:   want{on: true, minCount: 5},
		},
		"JobWithoutGang": {
			reason: "A Job that started without a gang never gets one: its pod template cannot change, even under Required.",
			mode:   v1beta1.GangRequired,
			own:    map[string]*unstructured.Unstructured{render.KeyJob: job("")},
			want:   want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			answer := func(string) ([]*unstructured.Unstructured, bool) { return tc.answer, !tc.unanswered }
			g := GangScheduling(tc.mode, Trust{Own: tc.own}, answer)
			got := want{on: g.On, minCount: g.MinCount, lookups: g.Lookups, waiting: g.Waiting}
			if g.Refused != nil {
				got.refused = g.Refused.Reason
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
