package schema

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
