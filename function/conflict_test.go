package function

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// xrUID is the uid of the composite in these tests.
const xrUID = "3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55"

// existingJob is a Job named like the hello-world MiniCluster's, controlled
// by owner (JSON of an ownerReference; "" for none).
func existingJob(owner string) *fnv1.Resource { return composedJob(owner, "") }

// composedJob is existingJob as Crossplane composed it for the composite
// named composite (its crossplane.io/composite label; none for "").
func composedJob(owner, composite string) *fnv1.Resource {
	refs := ""
	if owner != "" {
		refs = `,"ownerReferences":[` + owner + `]`
	}
	if composite != "" {
		refs += `,"labels":{"crossplane.io/composite":"` + composite + `"}`
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a"` + refs + `}}`)}
}

func TestRunFunctionForeignJob(t *testing.T) {
	wantRequirement := &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{requiredJob: {
		ApiVersion: "batch/v1", Kind: "Job", Match: &fnv1.ResourceSelector_MatchName{MatchName: "flux-sample"}, Namespace: ptrTo("tenant-a"),
	}}}
	type want struct {
		requirement *fnv1.Requirements
		composed    bool
		fatal       string // part of the Fatal result and the Valid=False message
	}
	cases := map[string]struct {
		reason   string
		observed map[string]string
		required *fnv1.Resources // nil: Crossplane has not answered yet
		want     want
	}{
		"FirstCall": {
			reason: "Before Crossplane answers, the function asks for a Job of its name and composes as usual.",
			want:   want{requirement: wantRequirement, composed: true},
		},
		"NoSuchJob": {
			reason:   "Crossplane found no Job of that name: compose.",
			required: &fnv1.Resources{},
			want:     want{requirement: wantRequirement, composed: true},
		},
		"OurOwnJob": {
			reason:   "A Job this composite controls (its composite lost track of it) is no conflict.",
			required: &fnv1.Resources{Items: []*fnv1.Resource{existingJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","name":"flux-sample-x7k2p","uid":"` + xrUID + `","controller":true}`)}},
			want:     want{requirement: wantRequirement, composed: true},
		},
		"TheFluxOperatorsJob": {
			reason:   "The Flux Operator's Job of the same MiniCluster: say whose it is and what to do, compose nothing.",
			required: &fnv1.Resources{Items: []*fnv1.Resource{existingJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"11111111-2222-4333-8444-555555555555","controller":true}`)}},
			want:     want{requirement: wantRequirement, fatal: "Job tenant-a/flux-sample already exists, made by the Flux Operator for its MiniCluster flux-sample (uid 11111111-2222-4333-8444-555555555555), not by this MiniCluster for Crossplane: the operator's Job keeps running untouched. Once the operator is gone, delete the MiniCluster (kubectl delete minicluster flux-sample -n tenant-a) and apply it again (docs/migration.md)"},
		},
		"AnEarlierV2MiniClustersJob": {
			reason:   "In the v2 shape the composite is a MiniCluster of the Flux Operator's apiVersion and kind: a Job Crossplane composed for another one (an earlier MiniCluster of this name, being deleted) is not called the operator's.",
			required: &fnv1.Resources{Items: []*fnv1.Resource{composedJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"66666666-7777-4888-9999-000000000000","controller":true}`, "flux-sample")}},
			want:     want{requirement: wantRequirement, fatal: "Job tenant-a/flux-sample already exists, composed by Crossplane for MiniCluster flux-sample (uid 66666666-7777-4888-9999-000000000000), not for this MiniCluster: typically an earlier MiniCluster of this name, still being deleted."},
		},
		"AJobWithoutController": {
			reason:   "A Job nothing controls is not ours either.",
			required: &fnv1.Resources{Items: []*fnv1.Resource{existingJob("")}},
			want:     want{requirement: wantRequirement, fatal: "Job tenant-a/flux-sample already exists and no MiniCluster controls it"},
		},
		"JobObserved": {
			reason:   "Once the composite observes its Job, nothing is asked: a running MiniCluster's reconciles cost nothing extra.",
			observed: map[string]string{"job": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"flux-sample","namespace":"tenant-a"}}`},
			want:     want{composed: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := req(xr(helloSpec, ""), tc.observed, "")
			r.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue().GetFields()["uid"] = resource.MustStructJSON(`{"v":"` + xrUID + `"}`).GetFields()["v"]
			if tc.required != nil {
				r.RequiredResources = map[string]*fnv1.Resources{requiredJob: tc.required}
			}
			rsp := run(t, r)
			if diff := cmp.Diff(tc.want.requirement, rsp.GetRequirements(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nrequirements: -want, +got:\n%s", tc.reason, diff)
			}
			if got := len(rsp.GetDesired().GetResources()) > 0; got != tc.want.composed {
				t.Errorf("%s\ncomposed %t, want %t", tc.reason, got, tc.want.composed)
			}
			fatal, valid := "", ""
			for _, res := range rsp.GetResults() {
				if res.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = res.GetMessage()
				}
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionValid && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
					valid = c.GetMessage()
				}
			}
			if tc.want.fatal == "" {
				if fatal != "" || valid != "" {
					t.Errorf("%s\nrefused: %q / %q", tc.reason, fatal, valid)
				}
				return
			}
			if !strings.HasPrefix(fatal, tc.want.fatal) || !strings.HasPrefix(valid, tc.want.fatal) {
				t.Errorf("%s\nFatal %q and Valid=False %q, want both to start with %q", tc.reason, fatal, valid, tc.want.fatal)
			}
		})
	}
}

func ptrTo(s string) *string { return &s }
