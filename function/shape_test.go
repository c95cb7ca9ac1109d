package function_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// shapeUID is the uid of the composites of these tests.
const shapeUID = "3b0d4b61-6a3e-4f3c-9b8e-0f4c2a1d7e55"

// claimXR is a hello-world composite of the claim shape: claim flux-sample
// in namespace tenant-a, with Crossplane's labels.
const claimXR = `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster",
"metadata":{"name":"flux-sample-x7k2p","labels":{"crossplane.io/claim-name":"flux-sample","crossplane.io/claim-namespace":"tenant-a"}},
"spec":{"size":4,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hello world"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}}`

// v2XR is a hello-world MiniCluster of the Crossplane v2 shape as the
// function receives it: the namespaced composite itself, with Crossplane's
// fields under spec.crossplane; extra metadata fields (JSON, without braces)
// are added.
func v2XR(metadata string) string {
	if metadata != "" {
		metadata = "," + metadata
	}
	return `{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster",
"metadata":{"name":"flux-sample","namespace":"tenant-a","uid":"` + shapeUID + `","labels":{"crossplane.io/composite":"flux-sample"}` + metadata + `},
"spec":{"size":4,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hello world"}],
"crossplane":{"compositionRef":{"name":"miniclusters.flux-framework.org"},"compositionRevisionRef":{"name":"miniclusters.flux-framework.org-5d2c9a1"},"compositionUpdatePolicy":"Automatic"}}}`
}

func TestDecode(t *testing.T) {
	type want struct {
		name, namespace string
		size            int32
		err             string // part of the error; "" for none
	}
	cases := map[string]struct {
		reason string
		xr     string
		want   want
	}{
		"ClaimLabels": {
			reason: "Claims: the composite has a generated name; the name and namespace are the claim's, from Crossplane's labels.",
			xr:     claimXR,
			want:   want{name: "flux-sample", namespace: "tenant-a", size: 4},
		},
		"ClaimRef": {
			reason: "Claims: without the labels, spec.claimRef names the claim.",
			xr:     `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"flux-sample-x7k2p"},"spec":{"size":2,"claimRef":{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","name":"flux-sample","namespace":"tenant-b"}}}`,
			want:   want{name: "flux-sample", namespace: "tenant-b", size: 2},
		},
		"NamespacedComposite": {
			reason: "v2: the MiniCluster is the composite; its own name and namespace, Crossplane's spec.crossplane ignored.",
			xr:     v2XR(""),
			want:   want{name: "flux-sample", namespace: "tenant-a", size: 4},
		},
		"NamespacedCompositeWithForgedClaimLabels": {
			reason: "v2: a tenant writes the labels of its own MiniCluster, so claim labels naming another namespace do not move its objects there.",
			xr:     strings.Replace(v2XR(""), `"crossplane.io/composite":"flux-sample"`, `"crossplane.io/composite":"flux-sample","crossplane.io/claim-name":"victim","crossplane.io/claim-namespace":"kube-system"`, 1),
			want:   want{name: "flux-sample", namespace: "tenant-a", size: 4},
		},
		"NamespacedCompositeWithForgedClaimRef": {
			reason: "v2: nor does a claimRef in its spec (a field the v2 schema does not even have).",
			xr:     strings.Replace(v2XR(""), `"crossplane":{`, `"claimRef":{"name":"victim","namespace":"kube-system"},"crossplane":{`, 1),
			want:   want{name: "flux-sample", namespace: "tenant-a", size: 4},
		},
		"NamespacedCompositeWithoutName": {
			reason: "v2: a composite without a name names nothing.",
			xr:     `{"apiVersion":"flux-framework.org/v1alpha2","kind":"MiniCluster","metadata":{"namespace":"tenant-a"},"spec":{"size":1}}`,
			want:   want{err: `composite resource in namespace "tenant-a" has no metadata.name`},
		},
		"ClusterScopedWithoutClaim": {
			reason: "A cluster-scoped composite without a claim has no namespace to compose into.",
			xr:     `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"lonely"},"spec":{"size":1}}`,
			want:   want{err: `composite resource "lonely" has no claim and no namespace`},
		},
		"PartialClaimLabels": {
			reason: "Claims: a claim name without its namespace is no claim.",
			xr:     `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"x","labels":{"crossplane.io/claim-name":"a"}},"spec":{"size":1}}`,
			want:   want{err: "has no claim"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc, ns, err := function.Decode(resource.MustStructJSON(tc.xr).AsMap())
			var got want
			if err != nil {
				got.err = err.Error()
				if !strings.Contains(got.err, tc.want.err) || tc.want.err == "" {
					t.Errorf("%s\nerror %q, want one containing %q", tc.reason, got.err, tc.want.err)
				}
				if mc != nil || ns != "" {
					t.Errorf("%s\nan error with a result: %v, %q", tc.reason, mc, ns)
				}
				return
			}
			got = want{name: mc.Name, namespace: ns, size: *mc.Spec.Size}
			if mc.Namespace != ns {
				t.Errorf("%s\nMiniCluster namespace %q, returned namespace %q", tc.reason, mc.Namespace, ns)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// createdV2 is a MiniCluster of the v2 shape as the function receives it
// once Crossplane has reconciled it: what the API server and Crossplane
// add to the tenant's object (the counterpart of created).
func createdV2(tb testing.TB, mc *unstructured.Unstructured) map[string]any {
	tb.Helper()
	xr, err := driver.CompositeV2(mc)
	if err != nil {
		tb.Fatal(err)
	}
	// The uid renders give it: an example's cluster.yaml can name it (the
	// burst controller's certificate copy records it).
	xr.SetUID(types.UID(driver.CompositeUID(xr)))
	xr.SetResourceVersion("48213")
	xr.SetGeneration(1)
	xr.SetCreationTimestamp(metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	xr.SetFinalizers([]string{"composite.apiextensions.crossplane.io"})
	labels := xr.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["crossplane.io/composite"] = xr.GetName()
	xr.SetLabels(labels)
	spec, _ := xr.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["crossplane"] = map[string]any{
		"compositionRef":          map[string]any{"name": "miniclusters.flux-framework.org"},
		"compositionRevisionRef":  map[string]any{"name": "miniclusters.flux-framework.org-5d2c9a1"},
		"compositionUpdatePolicy": "Automatic",
	}
	xr.Object["spec"] = spec
	return mustStruct(tb, xr.Object).AsMap()
}

// TestRunFunctionShapes runs every example as a claim's composite and as
// the v2 shape's namespaced composite, both as Crossplane stores them
// (generated name and spec.claimRef, or spec.crossplane), on the first
// reconcile and once everything exists, and wants the same response: the
// same objects in the same namespace, status, conditions, results and
// requirements. Only the desired composite's identity differs.
func TestRunFunctionShapes(t *testing.T) {
	for _, ex := range exampleNames(t) {
		t.Run(ex, func(t *testing.T) {
			e := loadExample(t, ex)
			claims := e.xr
			b, err := os.ReadFile(filepath.Join("..", "examples", ex, "claim.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			mc, err := driver.ReadMiniCluster(b)
			if err != nil {
				t.Fatal(err)
			}
			v2 := createdV2(t, mc)
			if ns := v2["metadata"].(map[string]any)["namespace"]; ns != claims["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/claim-namespace"] {
				t.Fatalf("the shapes disagree on the namespace before the function runs: %v", ns)
			}
			var observed []*unstructured.Unstructured
			for _, reconcile := range []string{"first", "steady"} {
				rsps := map[string]*fnv1.RunFunctionResponse{}
				for shape, xr := range map[string]map[string]any{"claims": claims, "v2": v2} {
					composite := &unstructured.Unstructured{Object: xr}
					req, err := driver.Request(composite, driver.ComposedFor(observed, composite), e.input)
					if err != nil {
						t.Fatal(err)
					}
					rsp, err := driver.RunRequest(context.Background(), function.New(function.WithRandom(fixedEntropy{})), req, e.cluster)
					if err != nil {
						t.Fatal(err)
					}
					rsps[shape] = rsp
				}
				claimsRsp, v2rsp := rsps["claims"], rsps["v2"]
				for _, rsp := range []*fnv1.RunFunctionResponse{claimsRsp, v2rsp} {
					for _, r := range rsp.GetResults() {
						if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
							t.Fatalf("%s reconcile refused: %s", reconcile, r.GetMessage())
						}
					}
				}
				// The desired composites name different objects; their
				// status is the function's.
				if diff := cmp.Diff(claimsRsp.GetDesired().GetComposite().GetResource().GetFields()["status"], v2rsp.GetDesired().GetComposite().GetResource().GetFields()["status"], protocmp.Transform()); diff != "" {
					t.Errorf("%s reconcile: status differs (-claims, +v2):\n%s", reconcile, diff)
				}
				if got := v2rsp.GetDesired().GetComposite().GetResource().AsMap()["metadata"]; !cmp.Equal(got, map[string]any{"name": mc.GetName(), "namespace": v2["metadata"].(map[string]any)["namespace"]}) {
					t.Errorf("%s reconcile: desired v2 composite is %v, want the MiniCluster itself", reconcile, got)
				}
				claimsRsp.Desired.Composite, v2rsp.Desired.Composite = nil, nil
				// Only a claim-shape composite looks its claim up: in v2
				// the MiniCluster is the composite.
				delete(claimsRsp.GetRequirements().GetResources(), "claim")
				if diff := cmp.Diff(claimsRsp, v2rsp, protocmp.Transform()); diff != "" {
					t.Errorf("%s reconcile: responses differ (-claims, +v2):\n%s", reconcile, diff)
				}
				// The next reconcile observes what this one composed.
				out, err := driver.ReadResponse(claimsRsp, "")
				if err != nil {
					t.Fatal(err)
				}
				observed = out.Objects
			}
		})
	}
}
