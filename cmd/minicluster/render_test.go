package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// TestRenderCluster covers minicluster render --cluster (and --input): a
// platform team tries its policy offline, with the objects of its cluster
// the policy reads. Without --cluster the namespace has no labels, so the
// default policy's Pod Security level applies.
func TestRenderCluster(t *testing.T) {
	const ex = "../../examples/"
	cases := map[string]struct {
		reason string
		args   []string
		// refused: the render fails, and stderr names every one of want;
		// otherwise stdout has every one of want.
		refused bool
		want    []string
	}{
		"VolumesWithoutCluster": {
			reason:  "A hostPath volume in a namespace without labels: the default policy's baseline refuses it, naming the policy key and the fix.",
			args:    []string{"-f", ex + "volumes/claim.yaml"},
			refused: true,
			want:    []string{"policy.podSecurity.defaultLevel", "hostPath volumes", "pod-security.kubernetes.io/enforce=privileged"},
		},
		"VolumesWithCluster": {
			reason: "The example's cluster.yaml labels the namespace privileged: the hostPath volume composes.",
			args:   []string{"-f", ex + "volumes/claim.yaml", "--cluster", ex + "volumes/cluster.yaml"},
			want:   []string{"hostPath:", "path: /data"},
		},
		"BurstRootOtherNamespaceLabels": {
			reason:  "A namespace labelled privileged is not labelled for NodePorts.",
			args:    []string{"-f", ex + "bursting-root/claim.yaml", "--cluster", ex + "volumes/cluster.yaml"},
			refused: true,
			want:    []string{"policy.nodePorts", "minicluster.flux-framework.org/node-ports=true"},
		},
		"Repeated": {
			reason: "--cluster is repeatable: the objects of every file count.",
			args: []string{"-f", ex + "existing-volumes/claim.yaml",
				"--cluster", ex + "volumes/cluster.yaml", "--cluster", ex + "existing-volumes/cluster.yaml"},
			want: []string{"secretName: flux-sample-credentials"},
		},
		"PodSettingsWithoutInput": {
			reason:  "Its cluster's labelled objects are not enough: the default policy allows neither the scheduler nor the token.",
			args:    []string{"-f", ex + "pod-settings/claim.yaml", "--cluster", ex + "pod-settings/cluster.yaml"},
			refused: true,
			want:    []string{"policy.schedulers", "policy.serviceAccounts.automountToken"},
		},
		"PodSettingsWithoutCluster": {
			reason:  "Its policy is not enough: the ServiceAccount and the Secrets must exist, labelled.",
			args:    []string{"-f", ex + "pod-settings/claim.yaml", "--input", ex + "pod-settings/input.yaml"},
			refused: true,
			want:    []string{"policy.serviceAccounts", `ServiceAccount "flux-runner" does not exist`, "policy.secrets"},
		},
		"PodSettings": {
			reason: "With both, it composes.",
			args: []string{"-f", ex + "pod-settings/claim.yaml",
				"--cluster", ex + "pod-settings/cluster.yaml", "--input", ex + "pod-settings/input.yaml"},
			want: []string{"schedulerName: fluence", "automountServiceAccountToken: true", "serviceAccountName: flux-runner"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var cli CLI
			parser, err := kong.New(&cli, kong.Name("minicluster"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parser.Parse(append([]string{"render"}, tc.args...)); err != nil {
				t.Fatalf("%s\nparse: %v", tc.reason, err)
			}
			var stdout, stderr bytes.Buffer
			err = cli.Render.render(&stdout, &stderr)
			got := stdout.String()
			if tc.refused {
				if err == nil {
					t.Fatalf("%s\nrendered, want a refusal:\n%s", tc.reason, stderr.String())
				}
				if stdout.Len() != 0 {
					t.Errorf("%s\nrefused, yet printed objects:\n%s", tc.reason, got)
				}
				got = stderr.String()
			} else if err != nil {
				t.Fatalf("%s\n%v\n%s", tc.reason, err, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s\nwant %q in:\n%s", tc.reason, w, got)
				}
			}
		})
	}
}

// TestClaimOnlyFields: fields valid on a claim alone (Crossplane keeps
// them off its composite) render offline as on a cluster, with
// minicluster render and through minicluster xr: the composite leaves them
// out and carries the spec.claimRef Crossplane sets, and composes what the
// claim does.
func TestClaimOnlyFields(t *testing.T) {
	const claimHead = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: flux-sample, namespace: tenant-a}\nspec:\n  size: 2\n  containers: [{image: rockylinux:9, command: echo hello world}]\n"
	cases := map[string]struct {
		reason string
		fields string
		gone   []string
	}{
		"WriteConnectionSecretToRef": {
			reason: "A claim's writeConnectionSecretToRef names a Secret in its own namespace, so it has no namespace, which the composite's would need.",
			fields: "  writeConnectionSecretToRef: {name: flux-sample-connection}\n",
			gone:   []string{"writeConnectionSecretToRef"},
		},
		"CompositeDeletePolicy": {
			reason: "compositeDeletePolicy is the claim's: how deleting it deletes the composite.",
			fields: "  compositeDeletePolicy: Foreground\n",
			gone:   []string{"compositeDeletePolicy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			claimFile := filepath.Join(dir, "claim.yaml")
			if err := os.WriteFile(claimFile, []byte(claimHead+tc.fields), 0o600); err != nil {
				t.Fatal(err)
			}
			render := func(file string) string {
				var cli CLI
				parser, err := kong.New(&cli, kong.Name("minicluster"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := parser.Parse([]string{"render", "-f", file}); err != nil {
					t.Fatalf("parse: %v", err)
				}
				var stdout, stderr bytes.Buffer
				if err := cli.Render.render(&stdout, &stderr); err != nil {
					t.Fatalf("%s\nminicluster render -f %s: %v\n%s", tc.reason, filepath.Base(file), err, stderr.String())
				}
				return stdout.String()
			}
			if got := render(claimFile); !strings.Contains(got, "kind: Job") {
				t.Errorf("%s\nminicluster render -f claim.yaml composed no Job:\n%s", tc.reason, got)
			}

			b, err := os.ReadFile(claimFile)
			if err != nil {
				t.Fatal(err)
			}
			xr, err := compositeYAML(b)
			if err != nil {
				t.Fatalf("%s\nminicluster xr: %v", tc.reason, err)
			}
			objs, err := driver.ParseObjects(xr)
			if err != nil || len(objs) != 1 {
				t.Fatalf("minicluster xr printed no one object (%v):\n%s", err, xr)
			}
			spec, _ := objs[0].Object["spec"].(map[string]any)
			for _, f := range tc.gone {
				if _, ok := spec[f]; ok {
					t.Errorf("%s\nminicluster xr: spec.%s is the claim's, yet on the composite:\n%s", tc.reason, f, xr)
				}
			}
			wantRef := map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "name": "flux-sample", "namespace": "tenant-a"}
			if diff := cmp.Diff(wantRef, spec["claimRef"]); diff != "" {
				t.Errorf("%s\nminicluster xr: spec.claimRef: -want, +got:\n%s", tc.reason, diff)
			}
			xrFile := filepath.Join(dir, "xr.yaml")
			if err := os.WriteFile(xrFile, xr, 0o600); err != nil {
				t.Fatal(err)
			}
			render(xrFile)

			// The same objects and results from the claim and from its
			// composite, with the same CURVE key.
			run := func(b []byte) *driver.Output {
				out, err := driver.Run(context.Background(), function.New(function.WithRandom(fixedEntropy{})), driver.Options{Claim: b})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			fromClaim, fromXR := run(b), run(xr)
			if diff := cmp.Diff(fromClaim.Results, fromXR.Results); diff != "" {
				t.Errorf("%s\nresults: -claim.yaml, +its xr.yaml:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(string(fromClaim.YAML), string(fromXR.YAML)); diff != "" {
				t.Errorf("%s\nobjects: -claim.yaml, +its xr.yaml:\n%s", tc.reason, diff)
			}
		})
	}
}
