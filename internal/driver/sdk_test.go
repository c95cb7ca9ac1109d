package driver

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/function"
)

// TestPythonSDKBody renders the body the Flux Operator's Python SDK sends
// (every field with its model's default, unset strings as ""; the real
// node runs it in test/node/sdk_test.go): accepted, and "" is unset as in
// the operator.
func TestPythonSDKBody(t *testing.T) {
	b, err := os.ReadFile("../../test/node/testdata/python-sdk.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), function.New(), Options{Claim: b})
	if err != nil {
		t.Fatal(err)
	}
	if out.Fatal {
		t.Fatalf("refused: %v", out.Results)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, o := range out.Objects {
		objs[o.GetKind()] = o
	}
	field := func(kind string, path ...string) any {
		if objs[kind] == nil {
			t.Fatalf("no %s composed", kind)
		}
		v, _, _ := unstructured.NestedFieldNoCopy(objs[kind].Object, path...)
		return v
	}
	pod := []string{"spec", "template", "spec"}
	cases := map[string]struct {
		reason string
		got    func() any
		want   any
	}{
		"RunnerName": {
			reason: `containers[0].name: "" is unset: the runner is named after the MiniCluster.`,
			got: func() any {
				cs, _ := field("Job", append(pod, "containers")...).([]any)
				return cs[0].(map[string]any)["name"]
			},
			want: "sdk",
		},
		"NoPullSecret": {
			reason: `imagePullSecret: "" names no secret.`,
			got:    func() any { return field("Job", append(pod, "imagePullSecrets")...) },
			want:   nil,
		},
		"HeadlessName": {
			reason: "network.headlessName: flux-service names the headless Service.",
			got:    func() any { return field("Job", append(pod, "subdomain")...) },
			want:   "flux-service",
		},
		"QueuePolicy": {
			reason: `flux.scheduler.queuePolicy: "" is unset: fluxion's default, fcfs.`,
			got: func() any {
				toml, _ := field("ConfigMap", "data", "broker.toml").(string)
				return strings.Contains(toml, "queue-policy = 'fcfs'")
			},
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEmptyStringIsUnset covers the other fields whose "" the operator's
// CRD takes: each is unset here too, not refused.
func TestEmptyStringIsUnset(t *testing.T) {
	claim := `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: empty, namespace: default}
spec:
  size: 2
  network: {headlessName: ""}
  pod:
    dnsPolicy: ""
    restartPolicy: ""
    tolerations: [{key: a, operator: "", effect: "", value: b}]
  flux:
    bursting:
      clusters: [{name: "", size: 2}]
  containers:
  - image: ubuntu:noble
    imagePullPolicy: ""
    command: hostname
`
	// The claim is the root of a burst: bursting-root's platform (its
	// namespace labelled for NodePorts) lets it open one.
	cluster, _, err := ExampleFixtures("../../examples/bursting-root")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), function.New(), Options{Claim: []byte(claim), Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	if out.Fatal {
		t.Fatalf("refused: %v", out.Results)
	}
	y := string(out.YAML)
	cases := map[string]struct {
		reason string
		want   string // a line of the composed objects
	}{
		"HeadlessName":    {`network.headlessName: "" is the MiniCluster's name.`, "      subdomain: empty\n"},
		"RestartPolicy":   {`pod.restartPolicy: "" is unset: the broker pods are Never.`, "      restartPolicy: Never\n"},
		"ImagePullPolicy": {`imagePullPolicy: "" is unset: IfNotPresent.`, "        imagePullPolicy: IfNotPresent\n"},
		"BurstName":       {`flux.bursting.clusters[].name: "" is burst-<position>.`, "  hostlist: empty-[0-1],burst-0-[0-1]\n"},
		"Toleration":      {`a toleration's operator and effect "" are Kubernetes' defaults, passed on unset.`, "      - key: a\n        value: b\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(y, tc.want) {
				t.Errorf("%s\nwant %q in the composed objects:\n%s", tc.reason, tc.want, y)
			}
		})
	}
}
