package schema

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const helloWorld = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
  namespace: default
spec:
  size: 4
  logging:
    quiet: true
  containers:
    - image: rockylinux:9
      command: echo hello world
`

// withSpec is hello-world with its spec replaced.
func withSpec(spec string) string {
	return helloWorld[:strings.Index(helloWorld, "spec:\n")] + "spec:\n" + spec
}

// blocked is the error the API server adds when CEL rules were skipped.
const blockedErr = "<nil>: Invalid value: null: " + blockedMessage

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestLoad(t *testing.T) {
	if err := Claims.Load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MiniCluster", "XMiniCluster"}, Claims.Kinds()); diff != "" {
		t.Errorf("Kinds: -want, +got:\n%s", diff)
	}
	if got := Claims.APIVersion(); got != "flux-framework.org/v1alpha2" {
		t.Errorf("Claims.APIVersion() = %q", got)
	}
}

func TestLoadV2(t *testing.T) {
	if err := V2.Load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MiniCluster"}, V2.Kinds()); diff != "" {
		t.Errorf("V2.Kinds: -want, +got:\n%s", diff)
	}
	if got := V2.APIVersion(); got != Claims.APIVersion() {
		t.Errorf("V2.APIVersion() = %q, want the claim shape's %q", got, Claims.APIVersion())
	}
}

// TestShapes checks a MiniCluster against each shape's schema: Crossplane
// v2 keeps its fields under spec.crossplane of the namespaced composite,
// the claim at the top of spec.
func TestShapes(t *testing.T) {
	type want struct {
		unknown []string
		errs    []string
	}
	cases := map[string]struct {
		reason string
		spec   string
		claims want
		v2     want
	}{
		"CrossplaneBlock": {
			reason: "A user-written spec.crossplane (a pinned Composition, manual updates) is part of the v2 composite's schema; a claim has no such field.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    compositionUpdatePolicy: Manual\n",
			claims: want{unknown: []string{"spec.crossplane"}},
		},
		"CrossplaneUnknownField": {
			reason: "spec.crossplane has a schema of its own: a field Crossplane does not define is unknown.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionRef: {name: miniclusters.flux-framework.org}\n    bogus: 1\n",
			claims: want{unknown: []string{"spec.crossplane"}},
			v2:     want{unknown: []string{"spec.crossplane.bogus"}},
		},
		"CrossplaneBadPolicy": {
			reason: "spec.crossplane is validated, enums included.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  crossplane:\n    compositionUpdatePolicy: Sometimes\n",
			claims: want{unknown: []string{"spec.crossplane"}},
			v2: want{errs: []string{
				`spec.crossplane.compositionUpdatePolicy: Unsupported value: "Sometimes": supported values: "Automatic", "Manual"`,
				blockedErr,
			}},
		},
		"ClaimFieldsAtTopOfSpec": {
			reason: "The claim's spec.compositionRef is not a field of the v2 composite, whose is spec.crossplane.compositionRef.",
			spec:   "  size: 2\n  containers: [{image: rockylinux:9}]\n  compositionRef: {name: miniclusters.flux-framework.org}\n",
			v2:     want{unknown: []string{"spec.compositionRef"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for shape, s := range map[string]struct {
				schema *Schema
				want   want
			}{"Claims": {Claims, tc.claims}, "V2": {V2, tc.v2}} {
				obj := decode(t, withSpec(tc.spec))
				got := want{unknown: s.schema.Unknown(obj)}
				if len(got.unknown) == 0 {
					s.schema.Default(obj)
					got.errs = messages(s.schema.Validate(context.Background(), obj))
				}
				if diff := cmp.Diff(s.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("%s\n%s: -want, +got:\n%s", tc.reason, shape, diff)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"HelloWorld": {
			reason: "The hello-world claim is valid.",
			obj:    helloWorld,
		},
		"SizeZero": {
			reason: "size has minimum 1.",
			obj:    withSpec("  size: 0\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"},
		},
		"MaxSizeBelowSize": {
			reason: "The CEL rule on spec names the field it is about (fieldPath).",
			obj:    withSpec("  size: 4\n  maxSize: 2\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{"spec.maxSize: Invalid value: spec.maxSize must be at least spec.size: lower spec.size, or give a new MiniCluster a larger spec.maxSize (it cannot change once the MiniCluster exists: delete and re-create it to grow beyond it)"},
		},
		"FluxResources": {
			reason: "flux.resources is pod or node.",
			obj:    withSpec("  flux: {resources: gpus}\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{`spec.flux.resources: Unsupported value: "gpus": supported values: "pod", "node", ""`, blockedErr},
		},
		"MinSizeAboveSize": {
			reason: "minSize may not exceed size.",
			obj:    withSpec("  size: 2\n  minSize: 3\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{"spec.minSize: Invalid value: spec.minSize must not exceed spec.size: it is the number of brokers Flux waits for before starting"},
		},
		"TwoRunners": {
			reason: "Exactly one container runs Flux.",
			obj:    withSpec("  containers:\n  - {name: one, image: rockylinux:9, runFlux: true}\n  - {name: two, image: rockylinux:9, runFlux: true}\n"),
			want:   []string{"spec.containers: Invalid value: spec.containers must have exactly one container with runFlux: true (the Flux broker runner)"},
		},
		"NoRunnerOfTwo": {
			reason: "Two containers, none of them the runner.",
			obj:    withSpec("  containers:\n  - {name: one, image: rockylinux:9}\n  - {name: two, image: rockylinux:9}\n"),
			want:   []string{"spec.containers: Invalid value: spec.containers must have exactly one container with runFlux: true (the Flux broker runner)"},
		},
		"LauncherAndBatch": {
			reason: "The container rule names the field it is about.",
			obj:    withSpec("  containers: [{image: rockylinux:9, launcher: true, batch: true}]\n"),
			want:   []string{"spec.containers[0].batch: Invalid value: a container may set launcher or batch, not both"},
		},
		"CommandAndScript": {
			reason: "command and commands.script exclude each other.",
			obj:    withSpec("  containers: [{image: rockylinux:9, command: hostname, commands: {script: 'echo hi'}}]\n"),
			want:   []string{"spec.containers[0].commands.script: Invalid value: a container may set command or commands.script, not both"},
		},
		"UppercaseVolume": {
			reason: "Volume names are DNS labels.",
			obj:    withSpec("  containers: [{image: rockylinux:9, volumes: {Data: {emptyDir: true}}}]\n"),
			want:   []string{"spec.containers[0].volumes: Invalid value: volume names must be lowercase DNS labels (a-z, 0-9, '-'; at most 63 characters)"},
		},
		"HostlistAndClusters": {
			reason: "Bursting takes a hostlist or clusters.",
			obj:    withSpec("  flux: {bursting: {hostlist: 'a-[0-3]', clusters: [{name: b, size: 1}]}}\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{"spec.flux.bursting.hostlist: Invalid value: spec.flux.bursting: set either hostlist or clusters, not both"},
		},
		"WrongType": {
			reason: "A string where an integer belongs names the field and the type; CEL rules are then skipped, as on the server; the scale subresource reads spec.size too.",
			obj:    withSpec("  size: \"4\"\n  containers: [{image: rockylinux:9}]\n"),
			want: []string{
				`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
				`.spec.size: Invalid value: 0: .spec.size accessor error: 4 is of the type string, expected int64`,
				blockedErr,
			},
		},
		"EnumAndPattern": {
			reason: "Enum and pattern errors name the field and the value.",
			obj:    withSpec("  containers: [{image: rockylinux:9}, {name: Side, image: nginx, imagePullPolicy: Sometimes}]\n"),
			want: []string{
				`spec.containers[1].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never", ""`,
				`spec.containers[1].name: Invalid value: "Side": spec.containers[1].name in body should match '^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$'`,
				blockedErr,
			},
		},
		"NoContainers": {
			reason: "containers is required.",
			obj:    withSpec("  size: 2\n"),
			want:   []string{"spec.containers: Required value", blockedErr},
		},
		"NoSpec": {
			reason: "spec is required.",
			obj:    "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: x}\n",
			want:   []string{"spec: Required value", blockedErr},
		},
		"LongName": {
			reason: "Crossplane limits claim names to 63 characters (they become label values).",
			obj:    strings.Replace(helloWorld, "name: flux-sample", "name: "+strings.Repeat("a", 64), 1),
			want:   []string{"metadata.name: Too long: may not be more than 63 bytes", blockedErr},
		},
		"CurveCertWrongType": {
			reason: "A type error names the type, never the value.",
			obj:    withSpec("  flux: {curveCert: {secret-key: 'abcde'}}\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{`spec.flux.curveCert: Invalid value: "object": spec.flux.curveCert in body must be of type string: "object"`, blockedErr},
		},
		"CurveCertTooLong": {
			reason: "A length error does not quote the value.",
			obj:    withSpec("  flux: {curveCert: '" + strings.Repeat("x", 4097) + "'}\n  containers: [{image: rockylinux:9}]\n"),
			want:   []string{"spec.flux.curveCert: Too long: may not be more than 4096 bytes", blockedErr},
		},
		"StatusIgnored": {
			reason: "The API server drops status on create, so it is not validated.",
			obj:    helloWorld + "status:\n  size: many\n",
		},
		"ClaimWithCrossplaneFields": {
			reason: "Crossplane's claim fields are part of the claim CRD.",
			obj: helloWorld + `  compositionRef: {name: miniclusters.flux-framework.org}
  compositionSelector: {matchLabels: {a: b}}
  compositionRevisionRef: {name: r}
  compositionRevisionSelector: {matchLabels: {a: b}}
  compositionUpdatePolicy: Automatic
  compositeDeletePolicy: Background
  resourceRef: {apiVersion: flux-framework.org/v1alpha2, kind: XMiniCluster, name: flux-sample-x}
  writeConnectionSecretToRef: {name: s}
`,
		},
		"ClaimBadCrossplaneField": {
			reason: "Crossplane's fields are validated too.",
			obj:    helloWorld + "  compositionUpdatePolicy: Sometimes\n",
			want:   []string{`spec.compositionUpdatePolicy: Unsupported value: "Sometimes": supported values: "Automatic", "Manual"`, blockedErr},
		},
		"Composite": {
			reason: "A composite resource read from a cluster, with Crossplane's fields, is valid.",
			obj: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata:
  name: flux-sample-x7k2p
  labels: {crossplane.io/claim-name: flux-sample, crossplane.io/claim-namespace: default}
spec:
  size: 4
  containers: [{image: rockylinux:9, command: echo hello world}]
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, namespace: default, name: flux-sample}
  compositionRef: {name: miniclusters.flux-framework.org}
  compositionRevisionRef: {name: miniclusters.flux-framework.org-abc}
  compositionUpdatePolicy: Automatic
  resourceRefs:
  - {apiVersion: batch/v1, kind: Job, name: flux-sample, namespace: default}
  writeConnectionSecretToRef: {name: s, namespace: default}
status:
  size: 4
  conditions:
  - {type: Ready, status: "True", reason: Available, lastTransitionTime: "2026-01-01T00:00:00Z"}
`,
		},
		"CompositeClaimRefIncomplete": {
			reason: "The composite's claimRef needs all four fields.",
			obj:    "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x}\nspec:\n  containers: [{image: a}]\n  claimRef: {name: x}\n",
			want: []string{
				"spec.claimRef.apiVersion: Required value",
				"spec.claimRef.kind: Required value",
				"spec.claimRef.namespace: Required value",
				blockedErr,
			},
		},
		"UnknownKind": {
			reason: "Other kinds are not this package's.",
			obj:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			want:   []string{`kind: Unsupported value: "ConfigMap": supported values: "MiniCluster", "XMiniCluster"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.obj)
			Claims.Default(obj)
			got := messages(Claims.Validate(context.Background(), obj))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidate: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	old := withSpec(`  size: 4
  logging: {quiet: true}
  flux:
    bursting:
      leadBroker: {address: 10.0.0.1, name: root, size: 4}
  containers: [{image: rockylinux:9, command: echo hello world}]
`)
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"Unchanged": {
			reason: "An update that changes nothing is valid.",
			obj:    old,
		},
		"Size": {
			reason: "size may change.",
			obj:    strings.Replace(old, "size: 4\n  logging", "size: 2\n  logging", 1),
		},
		"LeadBroker": {
			reason: "The burst controller may move the lead broker.",
			obj:    strings.Replace(old, "10.0.0.1", "10.0.0.2", 1),
		},
		"Containers": {
			reason: "The Job's pod template cannot change.",
			obj:    strings.Replace(old, "echo hello world", "echo goodbye", 1),
			want:   []string{"spec.containers: Invalid value: spec.containers is immutable once the MiniCluster exists (the Job's pod template cannot change): delete and re-create the MiniCluster to change it"},
		},
		"LoggingChanged": {
			reason: "A field's immutability rule names the field.",
			obj:    strings.Replace(old, "quiet: true", "quiet: false", 1),
			want:   []string{"spec.logging: Invalid value: spec.logging is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"},
		},
		"LoggingRemoved": {
			reason: "Removing an optional field is refused by the rule on spec.",
			obj:    strings.Replace(old, "  logging: {quiet: true}\n", "", 1),
			want:   []string{"spec: Invalid value: spec.logging is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"MaxSizeAdded": {
			reason: "maxSize cannot be added later.",
			obj:    old + "  maxSize: 8\n",
			want:   []string{"spec: Invalid value: spec.maxSize is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"ConnectTimeoutAdded": {
			reason: "connectTimeout has no schema default (the platform's may apply), so the rule on spec.flux keeps it from being added later.",
			obj:    strings.Replace(old, "    bursting:\n", "    connectTimeout: 10s\n    bursting:\n", 1),
			want:   []string{"spec.flux: Invalid value: spec.flux.connectTimeout is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"ResourcesAdded": {
			reason: "flux.resources cannot be added later: the brokers already run with their resource sets.",
			obj:    strings.Replace(old, "    bursting:\n", "    resources: node\n    bursting:\n", 1),
			want:   []string{"spec.flux: Invalid value: spec.flux.resources is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"CrossplaneField": {
			reason: "Crossplane's own fields carry no immutability rule.",
			obj:    old + "  compositionRef: {name: other}\n",
		},
		"SizeZero": {
			reason: "A changed field is validated.",
			obj:    strings.Replace(old, "size: 4\n  logging", "size: 0\n  logging", 1),
			want:   []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"},
		},
		"StatusKept": {
			reason: "Status cannot change through the main resource: the old one is validated.",
			obj:    old + "status:\n  size: many\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := decode(t, old)
			Claims.Default(o)
			obj := decode(t, tc.obj)
			Claims.Default(obj)
			got := messages(Claims.ValidateUpdate(context.Background(), obj, o))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidateUpdate: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestValidateUpdateRatchets checks validation ratcheting (GA since
// Kubernetes 1.33): an error in a field the update leaves alone does not
// block the update.
func TestValidateUpdateRatchets(t *testing.T) {
	old := decode(t, withSpec("  size: 4\n  containers: [{image: rockylinux:9, name: Bad}]\n"))
	obj := decode(t, withSpec("  size: 2\n  containers: [{image: rockylinux:9, name: Bad}]\n"))
	if errs := Claims.Validate(context.Background(), obj); len(errs) == 0 {
		t.Fatal("the name is invalid on create")
	}
	if errs := Claims.ValidateUpdate(context.Background(), obj, old); len(errs) != 0 {
		t.Errorf("an unchanged invalid field blocks an update: %v", errs)
	}
}

func TestUnknown(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"HelloWorld": {
			reason: "hello-world has no unknown fields.",
			obj:    helloWorld,
		},
		//nolint:misspell // "nmae" is one of the typos under test
		"Typos": {
			reason: "Unknown fields are named by path, metadata's too, sorted.",
			obj: `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: x, lables: {a: b}, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: u, nmae: x}]}
spec:
  sise: 4
  contaners: []
  containers: [{image: a, comand: x}]
  flux: {curveCerts: x}
status: {phse: Running}
`,
			want: []string{"metadata.lables", "metadata.ownerReferences[0].nmae", "spec.containers[0].comand", "spec.contaners", "spec.flux.curveCerts", "spec.sise", "status.phse"},
		},
		"CrossplaneClaimFields": {
			reason: "Fields Crossplane adds to claims are known.",
			obj: helloWorld + `  compositionRef: {name: c}
  compositionSelector: {matchLabels: {a: b}}
  compositionRevisionRef: {name: r}
  compositionRevisionSelector: {matchLabels: {a: b}}
  compositionUpdatePolicy: Manual
  compositeDeletePolicy: Foreground
  resourceRef: {apiVersion: flux-framework.org/v1alpha2, kind: XMiniCluster, name: x}
  writeConnectionSecretToRef: {name: s}
status:
  conditions: [{type: Ready, status: "True", reason: Available, lastTransitionTime: "2026-01-01T00:00:00Z", message: m, observedGeneration: 1}]
  connectionDetails: {lastPublishedTime: "2026-01-01T00:00:00Z"}
  claimConditionTypes: [Ready]
  phase: Running
`,
		},
		"CrossplaneCompositeFields": {
			reason: "Fields Crossplane adds to composite resources are known.",
			obj: `apiVersion: flux-framework.org/v1alpha2
kind: XMiniCluster
metadata: {name: x}
spec:
  containers: [{image: a}]
  claimRef: {apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, namespace: default, name: x}
  compositionRef: {name: c}
  compositionSelector: {matchLabels: {a: b}}
  compositionRevisionRef: {name: r}
  compositionRevisionSelector: {matchLabels: {a: b}}
  compositionUpdatePolicy: Manual
  resourceRefs: [{apiVersion: v1, kind: Service, name: x, namespace: default}]
  writeConnectionSecretToRef: {name: s, namespace: default}
status:
  conditions: [{type: Synced, status: "True", reason: ReconcileSuccess, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  connectionDetails: {lastPublishedTime: "2026-01-01T00:00:00Z"}
  claimConditionTypes: [Ready]
`,
		},
		"ClaimOnlyFieldOnComposite": {
			reason: "A claim's field is unknown on the composite and the other way round.",
			obj:    "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x}\nspec:\n  containers: [{image: a}]\n  resourceRef: {name: x}\n",
			want:   []string{"spec.resourceRef"},
		},
		"OtherKind": {
			reason: "Other kinds are not this package's.",
			obj:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.obj)
			before := decode(t, tc.obj)
			got := Claims.Unknown(obj)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUnknown: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, obj); diff != "" {
				t.Errorf("Unknown changed its argument:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, Claims.Prune(obj)); diff != "" {
				t.Errorf("%s\nPrune: -want, +got:\n%s", tc.reason, diff)
			}
			if got := Claims.Unknown(obj); len(got) != 0 {
				t.Errorf("after Prune, Unknown = %v", got)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   string
	}{
		"HelloWorld": {
			reason: "The schema's defaults, as the API server sets them.",
			obj:    helloWorld,
			want: withSpec(`  size: 4
  tasks: 1
  deadlineSeconds: 31500000
  logging: {quiet: true}
  flux: {bursting: {}, logLevel: 6}
  containers:
    - image: rockylinux:9
      command: echo hello world
`),
		},
		"Nulls": {
			reason: "A null with a default gets the default; one without is dropped.",
			obj:    withSpec("  size: null\n  maxSize: null\n  containers: [{command: x}]\n"),
			want: withSpec(`  size: 1
  tasks: 1
  deadlineSeconds: 31500000
  flux: {bursting: {}, logLevel: 6}
  containers: [{command: x, image: ghcr.io/rse-ops/accounting:app-latest}]
`),
		},
		"OtherKind": {
			reason: "Other kinds are left alone.",
			obj:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: null}\n",
			want:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: null}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.obj)
			Claims.Default(obj)
			if diff := cmp.Diff(decode(t, tc.want), obj); diff != "" {
				t.Errorf("%s\nDefault: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestExamplesValidate checks that every example claim and composite
// resource, and every MiniCluster in the docs, is valid as it stands.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	files = append(files, docs...)
	fence := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		if strings.HasSuffix(f, ".md") {
			for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
				texts = append(texts, m[1])
			}
		} else {
			texts = []string{string(b)}
		}
		for _, text := range texts {
			for _, doc := range strings.Split(text, "\n---") {
				if !regexp.MustCompile(`(?m)^kind: X?MiniCluster$`).MatchString(doc) {
					continue
				}
				obj := decode(t, doc)
				name, _, _ := strings.Cut(f, ".yaml")
				name = strings.TrimPrefix(name, "../../") + "/" + obj["metadata"].(map[string]any)["name"].(string)
				n++
				t.Run(name, func(t *testing.T) {
					if u := Claims.Unknown(obj); len(u) > 0 {
						t.Errorf("unknown fields: %v", u)
					}
					Claims.Default(obj)
					if errs := Claims.Validate(context.Background(), obj); len(errs) > 0 {
						t.Errorf("invalid:\n%s", strings.Join(messages(errs), "\n"))
					}
				})
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d MiniClusters found in the examples and docs", n)
	}
}

// TestConcurrent runs the validators from many goroutines (go test -race).
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				obj := decode(t, withSpec("  size: 4\n  maxSize: 2\n  containers: [{image: rockylinux:9}]\n"))
				Claims.Default(obj)
				if got := len(Claims.Validate(context.Background(), obj)); got != 1 {
					t.Errorf("got %d errors", got)
				}
				_ = Claims.ValidateUpdate(context.Background(), obj, obj)
				_ = Claims.Unknown(obj)
			}
		}()
	}
	wg.Wait()
}

func TestInt64s(t *testing.T) {
	got := Int64s(map[string]any{"a": 4.0, "b": 4.5, "c": []any{map[string]any{"d": 1.0}}, "e": "1", "f": int64(2)})
	want := map[string]any{"a": int64(4), "b": 4.5, "c": []any{map[string]any{"d": int64(1)}}, "e": "1", "f": int64(2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Int64s: -want, +got:\n%s", diff)
	}
}

// TestV2Definition checks a Crossplane v2 XRD (namespaced composite, no
// claim): Crossplane's fields live under spec.crossplane.
func TestV2Definition(t *testing.T) {
	def := string(must(os.ReadFile("../../compositions/definition.yaml")))
	def = strings.Replace(def, "apiVersion: apiextensions.crossplane.io/v1", "apiVersion: apiextensions.crossplane.io/v2", 1)
	def = regexp.MustCompile(`(?s)  claimNames:.*?  defaultCompositionRef:`).ReplaceAllString(def, "  defaultCompositionRef:")
	def = strings.Replace(def, "scope: LegacyCluster", "scope: Namespaced", 1)
	c, err := build([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"XMiniCluster"}, c.kinds); diff != "" {
		t.Errorf("kinds: -want, +got:\n%s", diff)
	}
	obj := decode(t, "apiVersion: flux-framework.org/v1alpha2\nkind: XMiniCluster\nmetadata: {name: x, namespace: ns}\nspec:\n  containers: [{image: a}]\n  crossplane: {compositionRef: {name: c}, resourceRefs: [{apiVersion: v1, kind: Service, name: x}]}\n  compositionRef: {name: c}\n")
	x := c.byKind["XMiniCluster"]
	if diff := cmp.Diff([]string{"spec.compositionRef"}, prune(obj, x)); diff != "" {
		t.Errorf("unknown: -want, +got:\n%s", diff)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
