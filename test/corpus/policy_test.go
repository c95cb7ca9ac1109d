package corpus

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// permissiveInput is the function input docs/migration.md gives for the
// Flux Operator's behaviour, exactly as the page shows it; it must be
// v1beta1.PermissivePolicy.
func permissiveInput(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../../docs/migration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## The policy for moving first")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/migration.md has no yaml block under \"The policy for moving first\"")
	}
	in := "apiVersion: " + v1beta1.SchemeGroupVersion.String() + "\nkind: Input\n" + block
	var got v1beta1.Input
	if err := yaml.UnmarshalStrict([]byte(in), &got); err != nil {
		t.Fatalf("docs/migration.md's policy: %v", err)
	}
	if diff := cmp.Diff(v1beta1.PermissivePolicy(), got.Policy); diff != "" {
		t.Errorf("docs/migration.md's policy is not PermissivePolicy: -want, +got:\n%s", diff)
	}
	return []byte(in)
}

// TestPolicyOnCorpus runs the examples, the Flux Operator's Python SDK body
// and a generated corpus of claims under the permissive policy and under
// the default one, in a namespace without labels and with no labelled
// Secrets or ServiceAccounts, as a tenant who can only create MiniClusters
// finds it. The default policy only ever refuses more, and every claim it
// refuses that the permissive policy accepts is refused by a policy key,
// named in the message, with the field.
func TestPolicyOnCorpus(t *testing.T) {
	claims := examples(t)
	sdk, err := os.ReadFile("../node/testdata/python-sdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(sdk, &obj); err != nil {
		t.Fatal(err)
	}
	claims = append(claims, &Claim{ID: "python-sdk", Object: Normalize(obj).(map[string]any)})
	claims = append(claims, Generate(examples(t), Options{Seed: 26, N: 400})...)

	permissive := permissiveInput(t)
	fn := function.New()
	var byDefault, refusedByPolicy int
	for _, c := range claims {
		b, err := c.YAML()
		if err != nil {
			t.Fatal(err)
		}
		run := func(input []byte) (*driver.Output, error) {
			return driver.Run(context.Background(), fn, driver.Options{Claim: b, Input: input})
		}
		open, err := run(permissive)
		if err != nil {
			continue // not a claim the driver reads at all (a mutation may break it)
		}
		def, err := run(nil)
		if err != nil {
			t.Fatalf("%s: the default policy errs where the permissive one did not: %v", c.Describe(), err)
		}
		if open.Fatal && !def.Fatal {
			t.Errorf("%s: accepted under the default policy but refused under the permissive one: %v", c.Describe(), open.Results)
		}
		if !def.Fatal {
			byDefault++
			continue
		}
		if open.Fatal {
			continue
		}
		refusedByPolicy++
		msg := strings.Join(def.Results, "\n")
		if !strings.Contains(msg, "refused by the platform's policy (policy.") {
			t.Errorf("%s: refused under the default policy without naming a policy key:\n%s", c.Describe(), msg)
		}
		if !strings.Contains(msg, "spec.") {
			t.Errorf("%s: the refusal names no field:\n%s", c.Describe(), msg)
		}
	}
	t.Logf("%d claims: %d composed under the default policy, %d more only under the permissive one", len(claims), byDefault, refusedByPolicy)
	if byDefault < 50 || refusedByPolicy < 10 {
		t.Errorf("the corpus does not exercise both policies: %d composed by default, %d refused by the policy", byDefault, refusedByPolicy)
	}
}
