package function

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
)

// xrUID is the uid of the composite in these tests.
const xrUID = "3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55"

// existingJob is a Job named like the hello-world MiniCluster's, controlled
// by owner (JSON of an ownerReference; "" for none).
func existingJob(owner string) *fnv1.Resource { return composedJob(owner, "") }

// composedJob is existingJob as Crossplane composed it for the composite
// named composite (its crossplane.io/composite label; none for "").
func composedJob(owner, composite string) *fnv1.Resource {
	return existing("batch/v1", "Job", "flux-sample", owner, composite, "")
}

// existing is an object in tenant-a controlled by owner (JSON of an
// ownerReference; "" for none), labelled as Crossplane labels what it
// composes for composite and claim ("" for no label).
func existing(apiVersion, kind, name, owner, composite, claim string) *fnv1.Resource {
	refs := ""
	if owner != "" {
		refs = `,"ownerReferences":[` + owner + `]`
	}
	var labels []string
	if composite != "" {
		labels = append(labels, `"crossplane.io/composite":"`+composite+`"`)
	}
	if claim != "" {
		labels = append(labels, `"crossplane.io/claim-name":"`+claim+`"`)
	}
	if len(labels) > 0 {
		refs += `,"labels":{` + strings.Join(labels, ",") + `}`
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","metadata":{"name":"` + name + `","namespace":"tenant-a"` + refs + `}}`)}
}

// otherXR is the controller reference of another MiniCluster's composite.
const otherXR = `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","name":"a-9x2kq","uid":"99999999-2222-4333-8444-555555555555","controller":true}`

func TestRunFunctionForeignObjects(t *testing.T) {
	sel := func(apiVersion, kind, name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: ptrTo("tenant-a")}
	}
	hello := map[string]*fnv1.ResourceSelector{
		requiredJob:           sel("batch/v1", "Job", "flux-sample"),
		"existing-service":    sel("v1", "Service", "flux-sample"),
		"existing-entrypoint": sel("v1", "ConfigMap", "flux-sample-entrypoint"),
		"existing-curve-cert": sel("v1", "Secret", "flux-sample-curve-cert"),
	}
	type want struct {
		requirements map[string]*fnv1.ResourceSelector
		composed     bool
		fatal        string // part of the Fatal result and the Valid=False message
		reason       string // of Valid=False
	}
	cases := map[string]struct {
		reason   string
		spec     string
		observed map[string]string
		required map[string]*fnv1.Resources // nil: Crossplane has not answered yet
		want     want
	}{
		"FirstCall": {
			reason: "Before Crossplane answers, the function asks for an object of each composed name and composes nothing: Crossplane calls again at once with the answers and uses only that response.",
			want:   want{requirements: hello, composed: false},
		},
		"NothingThere": {
			reason:   "Crossplane found none of them: compose.",
			required: map[string]*fnv1.Resources{requiredJob: {}, "existing-service": {}, "existing-entrypoint": {}, "existing-curve-cert": {}},
			want:     want{requirements: hello, composed: true},
		},
		"OurOwnJob": {
			reason:   "A Job this composite controls (its composite lost track of it) is no conflict.",
			required: map[string]*fnv1.Resources{requiredJob: {Items: []*fnv1.Resource{existingJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","name":"flux-sample-x7k2p","uid":"` + xrUID + `","controller":true}`)}}},
			want:     want{requirements: hello, composed: true},
		},
		"TheFluxOperatorsJob": {
			reason:   "The Flux Operator's Job of the same MiniCluster: say whose it is and what to do, compose nothing.",
			required: map[string]*fnv1.Resources{requiredJob: {Items: []*fnv1.Resource{existingJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"11111111-2222-4333-8444-555555555555","controller":true}`)}}},
			want:     want{requirements: hello, reason: admission.ReasonJobExists, fatal: "Job tenant-a/flux-sample already exists, made by the Flux Operator for its MiniCluster flux-sample (uid 11111111-2222-4333-8444-555555555555), not by this MiniCluster for Crossplane: the operator's Job keeps running untouched. Once the operator is gone, delete the MiniCluster (kubectl delete minicluster flux-sample -n tenant-a) and apply it again (docs/migration.md)"},
		},
		"TheFluxOperatorsObjects": {
			reason: "The operator's ConfigMap and Service too: the Job is named first.",
			required: map[string]*fnv1.Resources{
				"existing-entrypoint": {Items: []*fnv1.Resource{existing("v1", "ConfigMap", "flux-sample-entrypoint", `{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"11111111-2222-4333-8444-555555555555","controller":true}`, "", "")}},
				requiredJob:           {Items: []*fnv1.Resource{existingJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"11111111-2222-4333-8444-555555555555","controller":true}`)}},
			},
			want: want{requirements: hello, reason: admission.ReasonJobExists, fatal: "Job tenant-a/flux-sample already exists, made by the Flux Operator"},
		},
		"AnEarlierV2MiniClustersJob": {
			reason:   "In the v2 shape the composite is a MiniCluster of the Flux Operator's apiVersion and kind: a Job Crossplane composed for another one (an earlier MiniCluster of this name, being deleted) is not called the operator's.",
			required: map[string]*fnv1.Resources{requiredJob: {Items: []*fnv1.Resource{composedJob(`{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","uid":"66666666-7777-4888-9999-000000000000","controller":true}`, "flux-sample")}}},
			want:     want{requirements: hello, reason: admission.ReasonJobExists, fatal: "Job tenant-a/flux-sample already exists, composed by Crossplane for MiniCluster flux-sample (uid 66666666-7777-4888-9999-000000000000), not for this MiniCluster: typically an earlier MiniCluster of this name, still being deleted."},
		},
		"AJobWithoutController": {
			reason:   "A Job nothing controls is not ours either.",
			required: map[string]*fnv1.Resources{requiredJob: {Items: []*fnv1.Resource{existingJob("")}}},
			want:     want{requirements: hello, reason: admission.ReasonJobExists, fatal: "Job tenant-a/flux-sample already exists and no MiniCluster controls it: this MiniCluster cannot compose its own Job of that name (from metadata.name). Delete that Job, or delete this MiniCluster and create it again with another metadata.name; nothing was changed"},
		},
		"AnotherMiniClustersService": {
			reason:   "Another MiniCluster (a bursting `a`) composed Service flux-sample (its lead broker, say): this one's broker Service takes the name from metadata.name.",
			required: map[string]*fnv1.Resources{"existing-service": {Items: []*fnv1.Resource{existing("v1", "Service", "flux-sample", otherXR, "a-9x2kq", "a")}}},
			want:     want{requirements: hello, reason: admission.ReasonNameTaken, fatal: "Service tenant-a/flux-sample already exists and belongs to MiniCluster a: its name comes from this MiniCluster's metadata.name. Two MiniClusters in one namespace cannot compose objects of the same name: delete this MiniCluster and create it again with another metadata.name; nothing was changed, and the existing object is untouched"},
		},
		"HeadlessName": {
			reason:   "network.headlessName names the Service: the message names that field.",
			spec:     `{"size":2,"network":{"headlessName":"shared"},"containers":[{"image":"rockylinux:9","command":"echo hi"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			required: map[string]*fnv1.Resources{"existing-service": {Items: []*fnv1.Resource{existing("v1", "Service", "shared", otherXR, "a-9x2kq", "a")}}},
			want: want{
				requirements: map[string]*fnv1.ResourceSelector{requiredJob: hello[requiredJob], "existing-service": sel("v1", "Service", "shared"), "existing-entrypoint": hello["existing-entrypoint"], "existing-curve-cert": hello["existing-curve-cert"]},
				reason:       admission.ReasonNameTaken, fatal: "Service tenant-a/shared already exists and belongs to MiniCluster a: its name comes from this MiniCluster's spec.network.headlessName.",
			},
		},
		"ContainerService": {
			reason:   "A container with ports gets a Service of its name: the message names the container.",
			spec:     `{"size":2,"containers":[{"image":"rockylinux:9","command":"echo hi","runFlux":true},{"name":"db","image":"postgres","ports":[5432]}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`,
			required: map[string]*fnv1.Resources{"existing-service-db": {Items: []*fnv1.Resource{existing("v1", "Service", "db", `{"apiVersion":"apps/v1","kind":"Deployment","name":"db","uid":"12121212-2222-4333-8444-555555555555","controller":true}`, "", "")}}},
			want: want{
				reason: admission.ReasonNameTaken, fatal: "Service tenant-a/db already exists, controlled by Deployment db (apps/v1): this MiniCluster cannot compose its own Service of that name (from spec.containers[1].name (a container with ports gets a Service of its name)). Delete that Service, or change spec.containers[1].name",
			},
		},
		"JobObserved": {
			reason:   "Once the composite observes an object, nothing is asked for it: a running MiniCluster's reconciles cost nothing extra.",
			observed: composedBy(t, xr(helloSpec, ""), ""),
			want:     want{composed: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec == "" {
				spec = helloSpec
			}
			r := req(xr(spec, ""), tc.observed, "")
			rsp, err := New(WithRandom(entropy())).RunFunction(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.required != nil {
				rsp = answered(t, r, rsp, tc.required)
			}
			// Other concerns add requirements of their own.
			got := map[string]*fnv1.ResourceSelector{}
			for k, v := range rsp.GetRequirements().GetResources() {
				if strings.HasPrefix(k, requiredExisting) {
					got[k] = v
				}
			}
			if tc.want.requirements != nil {
				if diff := cmp.Diff(tc.want.requirements, got, protocmp.Transform()); diff != "" {
					t.Errorf("%s\nrequirements: -want, +got:\n%s", tc.reason, diff)
				}
			} else if tc.observed != nil && len(got) > 0 {
				t.Errorf("%s\nasked for %v", tc.reason, got)
			}
			if got := len(rsp.GetDesired().GetResources()) > 0; got != tc.want.composed {
				t.Errorf("%s\ncomposed %t, want %t", tc.reason, got, tc.want.composed)
			}
			fatal, valid, reason := "", "", ""
			for _, res := range rsp.GetResults() {
				if res.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = res.GetMessage()
				}
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionValid && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
					valid, reason = c.GetMessage(), c.GetReason()
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
			if reason != tc.want.reason {
				t.Errorf("%s\nValid=False reason %q, want %q", tc.reason, reason, tc.want.reason)
			}
		})
	}
}

func ptrTo(s string) *string { return &s }
