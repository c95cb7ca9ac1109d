package e2e_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestXRDValidation checks the XRD's schema and CEL rules in the real API
// server (the claim CRD Crossplane generated from it): what the server must
// refuse at apply time, with the rule's message, and which updates the
// transition rules allow. Everything but one claim runs as a dry run.
func TestXRDValidation(t *testing.T) { testXRDValidation(t, controlPlane(t)) }

// TestXRDValidationV2 is TestXRDValidation with the v2 shape's XRD, where
// Crossplane keeps its own fields under spec.crossplane: the same YAML is
// accepted and refused, and Crossplane's fields may change while ours may
// not.
func TestXRDValidationV2(t *testing.T) { testXRDValidation(t, controlPlaneV2(t)) }

func testXRDValidation(t *testing.T, cp *harness.ControlPlane) {
	const ns = "xrd-validation"
	createNamespace(t, cp, ns)

	runner := func(extra map[string]any) map[string]any {
		c := map[string]any{"image": "rockylinux:9", "command": "echo hello world"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	cases := map[string]struct {
		spec map[string]any // merged into hello-world's spec
		want string         // "" = accepted
	}{
		"hello-world as is": {},
		"maxSize below size": {
			spec: map[string]any{"size": int64(4), "maxSize": int64(2)},
			want: "spec.maxSize must be at least spec.size",
		},
		"minSize above size": {
			spec: map[string]any{"size": int64(2), "minSize": int64(3)},
			want: "spec.minSize must not exceed spec.size",
		},
		"size 0": {
			spec: map[string]any{"size": int64(0)},
			want: "spec.size: Invalid value",
		},
		"two runners": {
			spec: map[string]any{"containers": []any{
				runner(map[string]any{"name": "one", "runFlux": true}),
				runner(map[string]any{"name": "two", "runFlux": true}),
			}},
			want: "exactly one container with runFlux: true",
		},
		"no runner among two containers": {
			spec: map[string]any{"containers": []any{
				runner(map[string]any{"name": "one"}),
				runner(map[string]any{"name": "two"}),
			}},
			want: "exactly one container with runFlux: true",
		},
		"launcher and batch": {
			spec: map[string]any{"containers": []any{runner(map[string]any{"launcher": true, "batch": true})}},
			want: "a container may set launcher or batch, not both",
		},
		"command and commands.script": {
			spec: map[string]any{"containers": []any{runner(map[string]any{"commands": map[string]any{"script": "echo hi"}})}},
			want: "a container may set command or commands.script, not both",
		},
		"uppercase volume name": {
			spec: map[string]any{"containers": []any{runner(map[string]any{"volumes": map[string]any{"Data": map[string]any{"path": "/data", "emptyDir": true}}})}},
			want: "volume names must be lowercase DNS labels",
		},
		"hostlist and clusters": {
			spec: map[string]any{"flux": map[string]any{"bursting": map[string]any{
				"hostlist": "a-[0-3]", "clusters": []any{map[string]any{"name": "burst-0", "size": int64(2)}},
			}}},
			want: "set either hostlist or clusters, not both",
		},
	}
	for name, tc := range cases {
		t.Run("create "+name, func(t *testing.T) {
			c := exampleClaim(t, cp, helloWorld, ns, "dry-run")
			spec, _, _ := unstructured.NestedMap(c.Object, "spec")
			for k, v := range tc.spec {
				spec[k] = v
			}
			if err := unstructured.SetNestedMap(c.Object, spec, "spec"); err != nil {
				t.Fatal(err)
			}
			err := cp.Client.Create(ctx(t), c, client.DryRunAll)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want it rejected with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("rejected with %q, want a message containing %q", err, tc.want)
			case err != nil:
				t.Logf("rejected: %v", err)
			}
		})
	}

	// Transition rules need an existing object.
	const name = "immutable"
	createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, name))
	eventually(t, time.Minute, "the claim exists", func() error {
		_, err := getClaim(t, cp, ns, name)
		return err
	})
	// Crossplane's own fields: at the top of a claim's spec, under a v2
	// composite's spec.crossplane.
	crossplaneField, crossplanePatch := "spec.compositionRef (Crossplane)", `{"spec":{"compositionRef":{"name":"miniclusters.flux-framework.org"}}}`
	if cp.Shape() == driver.ShapeV2 {
		crossplaneField, crossplanePatch = "spec.crossplane (Crossplane)", `{"spec":{"crossplane":{"compositionRef":{"name":"miniclusters.flux-framework.org"},"compositionUpdatePolicy":"Manual"}}}`
	}
	updates := map[string]struct {
		patch string
		want  string // "" = accepted
	}{
		"spec.size":                       {patch: `{"spec":{"size":2}}`},
		"spec.flux.bursting.leadBroker":   {patch: `{"spec":{"flux":{"bursting":{"leadBroker":{"address":"10.1.2.3","name":"root","size":4}}}}}`},
		"spec.containers":                 {patch: `{"spec":{"containers":[{"image":"rockylinux:9","command":"echo goodbye"}]}}`, want: "spec.containers is immutable"},
		"spec.logging":                    {patch: `{"spec":{"logging":{"quiet":false}}}`, want: "spec.logging is immutable"},
		"spec.flux.connectTimeout":        {patch: `{"spec":{"flux":{"connectTimeout":"10s"}}}`, want: "spec.flux.connectTimeout is immutable"},
		"spec.flux.bursting.clusters":     {patch: `{"spec":{"flux":{"bursting":{"clusters":[{"name":"b","size":1}]}}}}`, want: "spec.flux.bursting.clusters is immutable"},
		"metadata.labels (not the spec)":  {patch: `{"metadata":{"labels":{"team":"hpc"}}}`},
		"spec.size to 0 (schema minimum)": {patch: `{"spec":{"size":0}}`, want: "spec.size"},
		"spec.size above maxSize":         {patch: `{"spec":{"size":5,"maxSize":4}}`, want: "spec.maxSize"},
		crossplaneField:                   {patch: crossplanePatch},
		// Fields the claim did not set at creation cannot be added later
		// either: spec.pod would change the Job's immutable pod template.
		"add spec.pod":                          {patch: `{"spec":{"pod":{"nodeSelector":{"pool":"hpc"}}}}`, want: "spec.pod is immutable"},
		"add spec.network":                      {patch: `{"spec":{"network":{"headlessName":"other"}}}`, want: "spec.network is immutable"},
		"add spec.maxSize":                      {patch: `{"spec":{"maxSize":8}}`, want: "spec.maxSize is immutable"},
		"add spec.interactive":                  {patch: `{"spec":{"interactive":true}}`, want: "spec.interactive is immutable"},
		"add spec.flux.submitCommand":           {patch: `{"spec":{"flux":{"submitCommand":"flux run"}}}`, want: "spec.flux.submitCommand is immutable"},
		"add spec.flux.bursting.clusters":       {patch: `{"spec":{"flux":{"bursting":{"clusters":[{"name":"b","size":1}]}}}}`, want: "spec.flux.bursting.clusters is immutable"},
		"remove spec.logging":                   {patch: `{"spec":{"logging":null}}`, want: "spec.logging is immutable"},
		"remove spec.flux (defaults come back)": {patch: `{"spec":{"flux":null}}`},
		"spec.cleanup (reported, not composed)": {patch: `{"spec":{"cleanup":true}}`},
	}
	for what, tc := range updates {
		t.Run("update "+what, func(t *testing.T) {
			err := cp.Client.Patch(ctx(t), newClaim(ns, name), client.RawPatch(types.MergePatchType, []byte(tc.patch)), client.DryRunAll)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want it rejected with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("rejected with %q, want a message containing %q", err, tc.want)
			case err != nil:
				t.Logf("rejected: %v", err)
			}
		})
	}
}
