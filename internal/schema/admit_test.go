package schema

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/flux-framework/minicluster-crossplane/compositions"
	"github.com/flux-framework/minicluster-crossplane/internal/schema/derive"
)

// TestCRDsAdmitted: the API server admits the claim and composite CRDs
// Crossplane derives from the generated XRD, and would refuse them with a
// CEL rule that does not compile or costs more than its limit.
func TestCRDsAdmitted(t *testing.T) {
	// Every path's element of every volume of every container and service,
	// compared with every other: far beyond the API server's cost limit.
	const costly = `rule: self.all(k, self.all(j, self[k].path.split('/').all(e, self[j].path.split('/').exists(f, e == f))))`
	cases := map[string]struct {
		reason string
		from   string
		to     string
		want   string
	}{
		"AsGenerated": {
			reason: "The generated XRD's CRDs pass.",
		},
		"RuleDoesNotCompile": {
			reason: "The API server refuses a CRD with a rule that does not compile.",
			from:   "rule: self.all(k, k.matches(",
			to:     "rule: self.nope(k, k.matches(",
			want:   "compilation failed",
		},
		"RuleTooCostly": {
			reason: "The API server refuses a CRD whose rule's estimated cost is over its limit.",
			from:   "rule: self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')\n",
			to:     costly + " || self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')\n",
			want:   "cost",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			def := compositions.Definition
			if tc.from != "" {
				if !bytes.Contains(def, []byte(tc.from)) {
					t.Fatalf("the XRD has no %q to change", tc.from)
				}
				def = bytes.Replace(def, []byte(tc.from), []byte(tc.to), 1)
			}
			defs, err := derive.CRDs(def)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range defs {
				if err = admit(d); err != nil {
					break
				}
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s\nbuild: %v", tc.reason, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s\nbuild: %v, want an error containing %q", tc.reason, err, tc.want)
			}
		})
	}
}

// admit is the API server's validation of a CRD on create, which Crossplane's
// CRDs of the XRD must pass: among its rules, every CEL rule must compile
// and its estimated cost stay within the API server's limits. It takes
// seconds (the cost estimation), so it runs here rather than on every
// start of the function.
func admit(c *extv1.CustomResourceDefinition) error {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c.DeepCopy(), internal, nil); err != nil {
		return fmt.Errorf("cannot convert the CRD: %w", err)
	}
	// What Crossplane's apply sets and the API server fills in: the owner
	// is the XRD, and the storage version is stored.
	internal.OwnerReferences = nil
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = append(internal.Status.StoredVersions, v.Name)
		}
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		return fmt.Errorf("the API server would refuse the CRD: %w", errs.ToAggregate())
	}
	return nil
}
