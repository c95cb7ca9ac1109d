package driver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/function"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// withSpec is the hello-world claim with its spec replaced.
func withSpec(spec string) string {
	return helloWorldClaim[:strings.Index(helloWorldClaim, "spec:\n")] + "spec:\n" + spec
}

// TestRenderRefusesInput covers what Run refuses before any schema
// check: objects it does not read, other API versions, no name.
func TestRenderRefusesInput(t *testing.T) {
	cases := map[string]struct {
		reason string
		claim  string
		want   string // the whole error
	}{
		"V1alpha1": {
			reason: "A Flux Operator v1alpha1 MiniCluster is to be converted.",
			claim:  strings.Replace(helloWorldClaim, "v1alpha2", "v1alpha1", 1),
			want: `flux-framework.org/v1alpha1 MiniCluster "flux-sample": this is a v1alpha1 MiniCluster of the Flux Operator, and only flux-framework.org/v1alpha2 is served: ` +
				"convert it with `minicluster convert -f <file> > claim.yaml` (it maps every v1alpha1 field with a v1alpha2 meaning and prints a line for each one it cannot map: " +
				"users, fluxRestful, cores, diagnostics, fluxUser, runFluxAsRoot, preCommand, top-level volumes, ...), then render the result",
		},
		"OtherVersion": {
			reason: "Only v1alpha2 is served.",
			claim:  strings.Replace(helloWorldClaim, "v1alpha2", "v1beta1", 1),
			want:   `flux-framework.org/v1beta1 MiniCluster "flux-sample": version "v1beta1" of the MiniCluster API is not served: only v1alpha2 is (apiVersion: flux-framework.org/v1alpha2)`,
		},
		"OtherGroup": {
			reason: "A MiniCluster of another group is not ours.",
			claim:  strings.Replace(helloWorldClaim, "flux-framework.org/v1alpha2", "example.com/v1", 1),
			want: `example.com/v1 MiniCluster "flux-sample": apiVersion must be flux-framework.org/v1alpha2: this command reads ` +
				`a MiniCluster (flux-framework.org/v1alpha2, kind MiniCluster: a claim or an upstream Flux Operator MiniCluster) or its composite resource (kind XMiniCluster)`,
		},
		"OtherKinds": {
			reason: "A file without a MiniCluster says what it found and what it reads.",
			claim:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
			want: `no MiniCluster in the file (found v1 ConfigMap "x", apps/v1 Deployment "d"): this command reads ` +
				`a MiniCluster (flux-framework.org/v1alpha2, kind MiniCluster: a claim or an upstream Flux Operator MiniCluster) or its composite resource (kind XMiniCluster)`,
		},
		"Empty": {
			reason: "An empty file.",
			claim:  "# nothing\n",
			want: `no object in the file: this command reads ` +
				`a MiniCluster (flux-framework.org/v1alpha2, kind MiniCluster: a claim or an upstream Flux Operator MiniCluster) or its composite resource (kind XMiniCluster)`,
		},
		"NoName": {
			reason: "A claim needs a name.",
			claim:  strings.Replace(helloWorldClaim, "  name: flux-sample\n", "  namespace: default\n", 1),
			want:   "a MiniCluster needs metadata.name: it names the composite resource and every object composed for it (the Job, its pods, Services, ConfigMaps and the Secret)",
		},
		"NoMetadata": {
			reason: "A claim needs a name.",
			claim:  "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nspec: {containers: [{image: a}]}\n",
			want:   "a XMiniCluster needs metadata.name: it names the composite resource and every object composed for it (the Job, its pods, Services, ConfigMaps and the Secret)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Run(context.Background(), function.New(), Options{Claim: []byte(tc.claim)})
			if err == nil {
				t.Fatalf("%s\nRender accepted the input", tc.reason)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("%s\nRender: -want, +got error:\n%s", tc.reason, diff)
			}
			_, err = CheckedComposite(context.Background(), []byte(tc.claim))
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s\nCheckedComposite: got error %v, want the same as Run", tc.reason, err)
			}
		})
	}
}

// TestRenderInvalid covers claims the API server would refuse: Run
// composes nothing and reports every problem, in the API server's words, in
// one FATAL result; CheckedComposite returns the same as an error.
func TestRenderInvalid(t *testing.T) {
	cases := map[string]struct {
		reason string
		claim  string
		want   string // the InvalidError's message
	}{
		"UnknownFields": {
			reason: "Unknown fields are refused by path, as kubectl --validate=strict does, before anything else.",
			claim:  withSpec("  size: 0\n  contaners: []\n  containers: [{image: rockylinux:9, comand: x}]\n"),
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.containers[0].comand", unknown field "spec.contaners"`,
		},
		"UnknownMetadataField": {
			reason: "metadata is decoded strictly too.",
			claim:  strings.Replace(helloWorldClaim, "metadata:\n", "metadata:\n  lables: {a: b}\n", 1),
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "metadata.lables"`,
		},
		"UnknownFieldWithoutName": {
			reason: "The API server decodes strictly before it checks the name: a nameless claim's unknown field is reported, not only the missing name.",
			claim:  "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {namespace: default}\nspec:\n  contaners: []\n  containers: [{image: rockylinux:9}]\n",
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.contaners"`,
		},
		"WrongType": {
			reason: "A wrong type names the field in the claim's terms, not Go's.",
			claim:  withSpec("  size: \"4\"\n  containers: [{image: rockylinux:9}]\n"),
			want: `The MiniCluster "flux-sample" is invalid: ` + "\n" +
				`* spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"` + "\n" +
				`* .spec.size: Invalid value: 0: .spec.size accessor error: 4 is of the type string, expected int64` + "\n" +
				`* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
		"EveryError": {
			reason: "Every error is reported, not the first one.",
			claim:  withSpec("  size: 0\n  containers:\n  - {image: rockylinux:9, launcher: true, batch: true, volumes: {Data: {emptyDir: true}}}\n"),
			want: `The MiniCluster "flux-sample" is invalid: ` + "\n" +
				`* spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1` + "\n" +
				`* spec.containers[0].batch: Invalid value: a container may set launcher or batch, not both` + "\n" +
				`* spec.containers[0].volumes: Invalid value: volume names must be lowercase DNS labels (a-z, 0-9, '-'; at most 63 characters)`,
		},
		"Metadata": {
			reason: "metadata is validated as the API server does.",
			claim:  strings.Replace(helloWorldClaim, "name: flux-sample", "name: Flux_Sample", 1),
			want:   `The MiniCluster "Flux_Sample" is invalid: metadata.name: Invalid value: "Flux_Sample": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
		"Composite": {
			reason: "A composite resource is checked against its own CRD.",
			claim:  "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x}\nspec:\n  containers: [{image: a}]\n  resourceRef: {name: x}\n",
			want:   `XMiniCluster in version "v1alpha2" cannot be handled as a XMiniCluster: strict decoding error: unknown field "spec.resourceRef"`,
		},
		"CurveCertObject": {
			reason: "A certificate given as an object: its keys are unknown fields, and are not shown (one may be a key).",
			claim:  withSpec("  flux:\n    curveCert: {'Ab.cD-eF1234xyZ=abcdefghijklmnopqrstuvwx': 1, b: 2}\n  containers: [{image: rockylinux:9}]\n"),
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.flux.curveCert.<redacted>"`,
		},
		"CurveCertWrongType": {
			reason: "A certificate of the wrong type: the type is named, never the value.",
			claim:  withSpec("  flux:\n    curveCert: ['Ab.cD-eF1234xyZ=abcdefghijklmnopqrstuvwx']\n  containers: [{image: rockylinux:9}]\n"),
			want: `The MiniCluster "flux-sample" is invalid: ` + "\n" +
				`* spec.flux.curveCert: Invalid value: "array": spec.flux.curveCert in body must be of type string: "array"` + "\n" +
				`* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
		"CurveCertTooLong": {
			reason: "A certificate too long: its length, never its value.",
			claim:  withSpec("  flux:\n    curveCert: '" + strings.Repeat("Ab.cD-eF1234xyZ=", 300) + "'\n  containers: [{image: rockylinux:9}]\n"),
			want: `The MiniCluster "flux-sample" is invalid: ` + "\n" +
				`* spec.flux.curveCert: Too long: may not be more than 4096 bytes` + "\n" +
				`* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := run(t, tc.claim, nil)
			if out.Invalid == nil || !out.Fatal {
				t.Fatalf("%s\nthe claim was not refused: %v", tc.reason, out.Results)
			}
			if diff := cmp.Diff(tc.want, out.Invalid.Error()); diff != "" {
				t.Errorf("%s\nInvalid: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff([]string{"FATAL: " + tc.want}, out.Results); diff != "" {
				t.Errorf("%s\nResults: -want, +got:\n%s", tc.reason, diff)
			}
			if len(out.Objects) != 0 || len(out.YAML) != 0 {
				t.Errorf("%s\nan invalid claim must compose nothing", tc.reason)
			}
			for _, bad := range []string{"int32", "json:", "unmarshal", "Ab.cD-eF"} {
				if strings.Contains(out.Invalid.Error(), bad) {
					t.Errorf("%s\nthe message says %q: %s", tc.reason, bad, out.Invalid)
				}
			}
			_, err := CheckedComposite(context.Background(), []byte(tc.claim))
			var inv *InvalidError
			if !errors.As(err, &inv) || err.Error() != tc.want {
				t.Errorf("%s\nCheckedComposite: got error %v, want the same as Run", tc.reason, err)
			}
		})
	}
}

func TestCheckDefaults(t *testing.T) {
	objs, err := ParseObjects([]byte(helloWorldClaim))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(context.Background(), objs[0], ShapeClaims); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"size": int64(4), "tasks": int64(1), "deadlineSeconds": int64(31500000),
		"flux":       map[string]any{"bursting": map[string]any{}, "logLevel": int64(6)},
		"containers": []any{map[string]any{"image": "rockylinux:9", "command": "echo hello world", "runFlux": true}},
	}
	if diff := cmp.Diff(want, objs[0].Object["spec"]); diff != "" {
		t.Errorf("Check did not apply the schema's defaults: -want, +got:\n%s", diff)
	}
}

// A certificate whose secret key holds an '=': a line missing its `key =`
// makes the parser read part of the key as a key name.
const leakySecret = "Ab.cD-eF1234xyZ=abcdefghijklmnopqrstuvwx" //nolint:gosec // G101: a made-up key for a parser test

func TestRenderNeverQuotesTheCertificate(t *testing.T) {
	certs := map[string]string{
		"KeyLineWithoutKey": "metadata\n    name = \"flux-sample\"\ncurve\n    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n    " + leakySecret + "\"\n",
		"KeyWithoutEquals":  "metadata\n    name = \"flux-sample\"\ncurve\n    secret-key \"" + leakySecret + "\"\n",
		"BareKey":           leakySecret[:16] + "\n",
		"KeyAsSection":      "curve\n" + leakySecret + "\n",
	}
	for name, cert := range certs {
		t.Run(name, func(t *testing.T) {
			claim := withSpec("  flux:\n    curveCert: |\n" + indent(cert, "      ") + "  containers: [{image: rockylinux:9}]\n")
			out := run(t, claim, nil)
			if !out.Fatal {
				t.Fatalf("the certificate was accepted")
			}
			all := strings.Join(out.Results, "\n")
			if !strings.Contains(all, "spec.flux.curveCert") {
				t.Errorf("the results do not name spec.flux.curveCert:\n%s", all)
			}
			for i := 0; i+8 <= len(leakySecret); i++ {
				if p := leakySecret[i : i+8]; strings.Contains(all, p) {
					t.Errorf("the results quote %q of the secret key:\n%s", p, all)
					break
				}
			}
		})
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func TestRedactCertMessage(t *testing.T) {
	cert := "curve\n    secret-key = \"" + leakySecret + "\"\nmetdata\n"
	cases := map[string]struct {
		reason string
		msg    string
		want   string
	}{
		"KeyPiece": {
			reason: "A quoted piece of the certificate goes.",
			msg:    `spec.flux.curveCert is not a CURVE certificate: line 2: unknown key "Ab.cD-eF1234xyZ" in the curve section`,
			want:   `spec.flux.curveCert is not a CURVE certificate: line 2: unknown key "<redacted>" in the curve section`,
		},
		"Words": {
			reason: "Section and key names, and short quotes, stay.",
			msg:    `spec.flux.curveCert: line 3: unknown section "metdata"; Flux accepts only "metadata" and "curve" (duplicate "secret-key")`,
			want:   `spec.flux.curveCert: line 3: unknown section "metdata"; Flux accepts only "metadata" and "curve" (duplicate "secret-key")`,
		},
		"OtherMessage": {
			reason: "Messages about other fields are left alone.",
			msg:    `spec.containers[0].command: "Ab.cD-eF1234xyZ"`,
			want:   `spec.containers[0].command: "Ab.cD-eF1234xyZ"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, redactCertMessage(tc.msg, cert)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// examples returns every example claim and composite resource file.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	claims, err := filepath.Glob("../../examples/*/claim*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	xrs, err := filepath.Glob("../../examples/*/xr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) < 20 || len(xrs) < 20 {
		t.Fatalf("found %d claims and %d composites", len(claims), len(xrs))
	}
	return append(claims, xrs...)
}

// TestExamplesRenderAsBefore renders every example claim and composite as
// the CLI did before it checked and defaulted claims (the composite as
// written, straight to the function) and as it does now: the objects and
// results are the same. Both read back the same observed state, so the
// CURVE certificate is the same.
func TestExamplesRenderAsBefore(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(strings.TrimPrefix(f, "../../examples/"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cluster, input, err := ExampleFixtures(filepath.Dir(f))
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Claim: b, Cluster: cluster, Input: input}
			first, err := Run(context.Background(), function.New(), o)
			if err != nil {
				t.Fatal(err)
			}
			if first.Fatal {
				t.Fatalf("refused: %v", first.Results)
			}
			o.Observed = first.Objects
			now, err := Run(context.Background(), function.New(), o)
			if err != nil {
				t.Fatal(err)
			}

			objs, err := ParseObjects(b)
			if err != nil {
				t.Fatal(err)
			}
			var mc *unstructured.Unstructured
			for _, o := range objs {
				if k := o.GetKind(); k == "MiniCluster" || k == "XMiniCluster" {
					mc = o
					break
				}
			}
			xr, err := Composite(mc)
			if err != nil {
				t.Fatal(err)
			}
			before, err := RunComposite(context.Background(), function.New(), xr, Options{Observed: first.Objects, Cluster: cluster, Input: input})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before.Results, now.Results); diff != "" {
				t.Errorf("results: -before, +now:\n%s", diff)
			}
			if diff := cmp.Diff(string(before.YAML), string(now.YAML)); diff != "" {
				t.Errorf("objects: -before, +now:\n%s", diff)
			}
		})
	}
}

func TestParseObjectsNumbers(t *testing.T) {
	objs, err := ParseObjects([]byte("a: 4\nb: 4.5\nc: 4.0\n---\n{\"d\": 7}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"a": int64(4), "b": 4.5, "c": int64(4)}, {"d": int64(7)}}
	var got []map[string]any
	for _, o := range objs {
		got = append(got, o.Object)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseObjects: -want, +got:\n%s", diff)
	}
}

// TestCheckShapes covers `minicluster render --shape`: each shape's
// MiniCluster is checked against the CRD the API server serves it with. In
// the v2 shape the MiniCluster is the namespaced composite, whose
// spec.crossplane (Crossplane's fields: a pinned Composition, its update
// policy) a user may write; a claim has no such field.
func TestCheckShapes(t *testing.T) {
	crossplane := func(block string) string {
		return withSpec("  size: 2\n  containers: [{image: rockylinux:9}]\n" + block)
	}
	cases := map[string]struct {
		reason string
		claim  string
		shape  Shape
		want   string // the InvalidError's message; "" when it composes
	}{
		"V2CrossplaneBlock": {
			reason: "The v2 composite's schema has spec.crossplane: the MiniCluster composes (with compositionUpdatePolicy Automatic: the function refuses Manual).",
			claim:  crossplane("  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    compositionUpdatePolicy: Automatic\n"),
			shape:  ShapeV2,
		},
		"ClaimsCrossplaneBlock": {
			reason: "A claim has no spec.crossplane: the API server refuses it as an unknown field.",
			claim:  crossplane("  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n"),
			shape:  ShapeClaims,
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.crossplane"`,
		},
		"V2CrossplaneUnknownField": {
			reason: "spec.crossplane is decoded strictly too.",
			claim:  crossplane("  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    compositonUpdatePolicy: Manual\n"),
			shape:  ShapeV2,
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.crossplane.compositonUpdatePolicy"`,
		},
		"V2CrossplaneInvalid": {
			reason: "spec.crossplane is validated against Crossplane's schema.",
			claim:  crossplane("  crossplane:\n    compositionUpdatePolicy: Sometimes\n"),
			shape:  ShapeV2,
			want: `The MiniCluster "flux-sample" is invalid: ` + "\n" +
				`* spec.crossplane.compositionUpdatePolicy: Unsupported value: "Sometimes": supported values: "Automatic", "Manual"` + "\n" +
				`* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		},
		"V2ClaimFieldAtTopOfSpec": {
			reason: "The claim's spec.compositionRef is spec.crossplane.compositionRef on the v2 composite.",
			claim:  crossplane("  compositionRef: {name: miniclusters.flux-framework.org}\n"),
			shape:  ShapeV2,
			want:   `MiniCluster in version "v1alpha2" cannot be handled as a MiniCluster: strict decoding error: unknown field "spec.compositionRef"`,
		},
		"ClaimsClaimFieldAtTopOfSpec": {
			reason: "A claim has spec.compositionRef.",
			claim:  crossplane("  compositionRef: {name: miniclusters.flux-framework.org}\n"),
			shape:  ShapeClaims,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Run(context.Background(), function.New(), Options{Claim: []byte(tc.claim), Shape: tc.shape})
			if err != nil {
				t.Fatalf("%s\nRun: %v", tc.reason, err)
			}
			got := ""
			if out.Invalid != nil {
				got = out.Invalid.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nInvalid: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want == "" && (out.Fatal || len(out.Objects) == 0) {
				t.Errorf("%s\nthe MiniCluster did not compose: %v", tc.reason, out.Results)
			}
		})
	}
}
