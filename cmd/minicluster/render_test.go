package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
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
