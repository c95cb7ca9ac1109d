package function

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// workloadAPI is the APIService of scheduling.k8s.io/v1beta1 as the API
// server registers it, Available or not.
func workloadAPI(available string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": admission.WorkloadAPIService},
		"spec":     map[string]any{"group": "scheduling.k8s.io", "version": "v1beta1"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": available}}},
	}}
}

// gangJob is hello-world's Job as observed: with its pods in the PodGroup
// flux-sample, or in none.
func gangJob(inGang bool) string {
	tmpl := `{"metadata":{"labels":{"app":"flux-operator"}},"spec":{"containers":[{"name":"flux-sample","image":"rockylinux:9"}]}}`
	if inGang {
		tmpl = `{"metadata":{"labels":{"app":"flux-operator"}},"spec":{"schedulingGroup":{"podGroupName":"flux-sample"},"containers":[{"name":"flux-sample","image":"rockylinux:9"}]}}`
	}
	return `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a"},"spec":{"parallelism":4,"completions":4,"template":` + tmpl + `},"status":{"active":4}}`
}

func podGroup(minCount int) string {
	return `{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"flux-sample","namespace":"tenant-a"},"spec":{"schedulingPolicy":{"gang":{"minCount":` + strconv.Itoa(minCount) + `}}}}`
}

func TestRunFunctionGang(t *testing.T) {
	type want struct {
		// minCount of the composed Workload and PodGroup, 0 for none
		// composed; podGroupName of the Job's pods.
		minCount     int64
		podGroupName string
		// lookup: the function asked for the APIService.
		lookup bool
		// valid is Valid's reason when the function refuses.
		refused string
	}
	cases := map[string]struct {
		reason   string
		spec     string
		input    string
		observed map[string]string
		cluster  []*unstructured.Unstructured
		want     want
	}{
		"Served": {
			reason:  "Where the cluster serves the Workload API, the brokers start as a gang of spec.size.",
			spec:    helloSpec,
			cluster: []*unstructured.Unstructured{workloadAPI("True")},
			want:    want{minCount: 4, podGroupName: "flux-sample", lookup: true},
		},
		"MinSize": {
			reason:  "The gang is the quorum the MiniCluster starts with: minSize when set.",
			spec:    `{"size":4,"minSize":2,"containers":[{"image":"rockylinux:9","command":"echo hello world"}]}`,
			cluster: []*unstructured.Unstructured{workloadAPI("True")},
			want:    want{minCount: 2, podGroupName: "flux-sample", lookup: true},
		},
		"NotServed": {
			reason: "Where the cluster does not serve it, nothing changes: no Workload, no PodGroup, no field the API server would drop.",
			spec:   helloSpec,
			want:   want{lookup: true},
		},
		"NotAvailable": {
			reason:  "An APIService that is not Available is not served.",
			spec:    helloSpec,
			cluster: []*unstructured.Unstructured{workloadAPI("False")},
			want:    want{lookup: true},
		},
		"Disabled": {
			reason:  "scheduling.gang: Disabled never composes a gang, and asks nothing.",
			spec:    helloSpec,
			input:   `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","scheduling":{"gang":"Disabled"}}`,
			cluster: []*unstructured.Unstructured{workloadAPI("True")},
			want:    want{},
		},
		"Required": {
			reason: "scheduling.gang: Required refuses a MiniCluster where the API is not served: its brokers would start one by one.",
			spec:   helloSpec,
			input:  `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","scheduling":{"gang":"Required"}}`,
			want:   want{lookup: true, refused: admission.ReasonGangUnavailable},
		},
		"PodGroupTaken": {
			reason:  "A PodGroup of the MiniCluster's name that is not its own (a tenant's, made to weaken the gang) refuses it, as every name taken does.",
			spec:    helloSpec,
			cluster: []*unstructured.Unstructured{workloadAPI("True"), {Object: resource.MustStructJSON(podGroup(1)).AsMap()}},
			want:    want{lookup: true, refused: admission.ReasonNameTaken},
		},
		"RunningWithoutGang": {
			reason:   "A Job that started without a gang keeps running without one when the API appears: its pod template cannot change.",
			spec:     helloSpec,
			observed: observedWithJob(gangJob(false)),
			cluster:  []*unstructured.Unstructured{workloadAPI("True")},
			want:     want{},
		},
		"RunningInGang": {
			reason:   "A Job whose pods are in the gang keeps its PodGroup even when the API is gone or the mode changes.",
			spec:     helloSpec,
			input:    `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","scheduling":{"gang":"Disabled"}}`,
			observed: withObserved(observedWithJob(gangJob(true)), "podgroup", podGroup(4)),
			want:     want{minCount: 4, podGroupName: "flux-sample"},
		},
		"ScaledUp": {
			reason:   "A larger size keeps the gang size the MiniCluster started with: brokers that join are placed as they fit.",
			spec:     `{"size":6,"maxSize":8,"containers":[{"image":"rockylinux:9","command":"echo hello world"}]}`,
			observed: withObserved(observedWithJob(gangJob(true)), "podgroup", podGroup(4)),
			want:     want{minCount: 4, podGroupName: "flux-sample"},
		},
		"ScaledDown": {
			reason:   "A smaller size lowers the gang size to it: a broker that replaces one never waits for brokers that no longer come.",
			spec:     `{"size":2,"maxSize":8,"containers":[{"image":"rockylinux:9","command":"echo hello world"}]}`,
			observed: withObserved(observedWithJob(gangJob(true)), "podgroup", podGroup(4)),
			want:     want{minCount: 2, podGroupName: "flux-sample"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := req(xr(tc.spec, ""), tc.observed, tc.input)
			rsp, err := driver.RunRequest(context.Background(), New(WithRandom(entropy())), r, tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			got := want{refused: refusal(rsp)}
			_, got.lookup = rsp.GetRequirements().GetResources()[admission.LookupWorkloadAPI]
			res := rsp.GetDesired().GetResources()
			if pg, ok := res["podgroup"]; ok {
				n, _, _ := unstructured.NestedFieldNoCopy(pg.GetResource().AsMap(), "spec", "schedulingPolicy", "gang", "minCount")
				f, _ := n.(float64) // protobuf numbers
				got.minCount = int64(f)
				if _, ok := res["workload"]; !ok {
					t.Errorf("%s\na PodGroup without its Workload", tc.reason)
				}
			}
			if job, ok := res["job"]; ok {
				got.podGroupName, _, _ = unstructured.NestedString(job.GetResource().AsMap(), "spec", "template", "spec", "schedulingGroup", "podGroupName")
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// withObserved is observed with one more object.
func withObserved(observed map[string]string, name, obj string) map[string]string {
	observed[name] = obj
	return observed
}

// refusal is the reason of Valid=False, "" when the function did not
// refuse.
func refusal(rsp *fnv1.RunFunctionResponse) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == ConditionValid && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
			return c.GetReason()
		}
	}
	return ""
}
