package driver

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/function"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func run(t *testing.T, claim string, observed []*unstructured.Unstructured) *Output {
	t.Helper()
	out, err := Run(context.Background(), function.New(), Options{Claim: []byte(claim), Observed: observed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out
}

func find(out *Output, name string) *unstructured.Unstructured {
	for _, o := range out.Objects {
		if o.GetAnnotations()[AnnotationResourceName] == name {
			return o
		}
	}
	return nil
}

func helloWorld(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/hello-world/claim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRenderHelloWorld(t *testing.T) {
	out := run(t, helloWorld(t), nil)
	if out.Fatal {
		t.Fatalf("hello-world was refused: %v", out.Results)
	}
	var names []string
	for _, o := range out.Objects {
		names = append(names, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{"Secret/default/flux-sample-curve-cert", "ConfigMap/default/flux-sample-entrypoint", "Job/default/flux-sample", "Service/default/flux-sample"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("objects: -want, +got:\n%s", diff)
	}
	job := find(out, "job")
	for _, f := range [][]string{{"spec", "parallelism"}, {"spec", "completions"}} {
		if v, _, _ := unstructured.NestedFieldNoCopy(job.Object, f...); v != float64(4) {
			t.Errorf("job %v = %v, want 4", f, v)
		}
	}
	script, _, _ := unstructured.NestedString(find(out, "entrypoint").Object, "data", "wait-0.sh")
	lead := `flux start "${wrap[@]}" --config-path="${cfg}" "${brokerOptions[@]}" "${prefix[@]}" "${timedJob[@]}" flux submit -n1 --quiet --watch "${command[@]}"`
	if !strings.Contains(script, lead) || !strings.Contains(script, "command=(echo hello world)") {
		t.Errorf("the lead broker does not submit echo hello world with -n1:\n%s", script)
	}
	if !strings.HasPrefix(string(out.YAML), "---\n") {
		t.Errorf("output is not a YAML stream")
	}
}

// TestRenderReadsBackCertificate feeds a render's output back as observed
// state, as Crossplane does on every reconcile: the certificate must not
// change, and nothing else either.
func TestRenderReadsBackCertificate(t *testing.T) {
	first := run(t, helloWorld(t), nil)
	observed, err := ParseObjects(first.YAML)
	if err != nil {
		t.Fatal(err)
	}
	second := run(t, helloWorld(t), observed)
	if diff := cmp.Diff(string(first.YAML), string(second.YAML)); diff != "" {
		t.Errorf("re-rendering with the first output as observed state changed it:\n%s", diff)
	}
	third := run(t, helloWorld(t), nil)
	a, _, _ := unstructured.NestedString(find(first, "curve-cert").Object, "data", "curve.cert")
	c, _, _ := unstructured.NestedString(find(third, "curve-cert").Object, "data", "curve.cert")
	if a == c {
		t.Errorf("two renders without observed state produced the same key: keys must be random")
	}
}

func TestRenderRefusesBadClaims(t *testing.T) {
	cases := map[string]struct {
		reason string
		claim  string
		want   []string
	}{
		"SizeZero": {
			reason: "size 0 names spec.size, with the API server's message.",
			claim:  strings.Replace(helloWorldClaim, "size: 4", "size: 0", 1),
			want:   []string{`The MiniCluster "flux-sample" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`},
		},
		"TwoRunners": {
			reason: "Two flux runners name spec.containers.",
			claim:  helloWorldClaim + "    - name: second\n      image: rockylinux:9\n      runFlux: true\n  # two runners\n",
			want:   []string{"spec.containers: Invalid value: spec.containers must have exactly one container with runFlux: true"},
		},
		"MaxSizeBelowSize": {
			reason: "maxSize < size names spec.maxSize.",
			claim:  strings.Replace(helloWorldClaim, "size: 4", "size: 4\n  maxSize: 2", 1),
			want:   []string{"spec.maxSize: Invalid value: spec.maxSize must be at least spec.size"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := run(t, tc.claim, nil)
			if !out.Fatal || out.Invalid == nil {
				t.Fatalf("%s\nthe claim was accepted", tc.reason)
			}
			all := strings.Join(out.Results, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("%s\nresults do not mention %q:\n%s", tc.reason, w, all)
				}
			}
			if len(out.Objects) != 0 {
				t.Errorf("%s\na refused claim must compose nothing", tc.reason)
			}
		})
	}
}

const helloWorldClaim = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
  size: 4
  containers:
    - image: rockylinux:9
      command: echo hello world
      runFlux: true
`

func TestCheckedComposite(t *testing.T) {
	got, err := CheckedComposite(context.Background(), []byte(helloWorldClaim))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"crossplane.io/claim-name": "flux-sample", "crossplane.io/claim-namespace": "default"}
	if diff := cmp.Diff(want, got.GetLabels()); diff != "" || got.GetKind() != "XMiniCluster" || got.GetName() != "flux-sample" {
		t.Errorf("composite %s %q, labels -want, +got:\n%s", got.GetKind(), got.GetName(), diff)
	}
	if _, err := CheckedComposite(context.Background(), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")); err == nil {
		t.Errorf("a file without a MiniCluster must be an error")
	}
}
