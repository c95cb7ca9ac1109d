package plan

// The tables of what Validate refuses and accepts. Each source file's
// checks have their cases beside it (containers_test.go, volumes_test.go,
// ...); TestValidateInvalid and TestValidateValid (plan_test.go) run them
// all, and TestSecurityContextInvalid and TestSecurityContextValid theirs,
// through checkInvalid and checkValid.

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// invalid is what Validate must say about a bad v1alpha2.MiniCluster: the Field of
// every error, in order, and a piece of the text that tells the user the fix.
type invalid struct {
	fields []string
	msg    string
}

type invalidCase struct {
	reason string
	args   *v1alpha2.MiniCluster
	want   invalid
}

// validCase is a MiniCluster Validate must accept.
type validCase struct {
	reason string
	args   *v1alpha2.MiniCluster
}

// validate plans m in the namespace of the tests and returns its errors.
func validate(m *v1alpha2.MiniCluster) field.ErrorList {
	_, errs := New(m, Facts{Namespace: "default"})
	return errs
}

// merged is the union of tables, one per source file; a case name may be
// in one table only.
func merged[C any](tables ...map[string]C) map[string]C {
	out := map[string]C{}
	for _, t := range tables {
		for name, c := range t {
			if _, ok := out[name]; ok {
				panic("two tables have the case " + name)
			}
			out[name] = c
		}
	}
	return out
}

// checkInvalid checks that Validate refuses each case with the fields and
// the message it wants.
func checkInvalid(t *testing.T, cases map[string]invalidCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validate(tc.args)
			got := make([]string, 0, len(errs))
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want.fields, got); diff != "" {
				t.Errorf("%s\nValidate(...) fields: -want, +got:\n%s\nerrors: %v", tc.reason, diff, errs)
			}
			if text := errs.ToAggregate(); text == nil || !strings.Contains(text.Error(), tc.want.msg) {
				t.Errorf("%s\nValidate(...): want an error containing %q, got: %v", tc.reason, tc.want.msg, text)
			}
		})
	}
}

// checkValid checks that Validate accepts each case.
func checkValid(t *testing.T, cases map[string]validCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(field.ErrorList(nil), validate(tc.args)); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
