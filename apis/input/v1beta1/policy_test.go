package v1beta1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyRoundTrip: a policy survives encoding, empty lists included
// (an empty list forbids nothing; a list left out takes its default).
func TestPolicyRoundTrip(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy Policy
	}{
		"Permissive": {reason: "The permissive policy's empty lists stay empty.", policy: PermissivePolicy()},
		"Default":    {reason: "Lists left out stay left out.", policy: Policy{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(Input{Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			var got Input
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.policy.Effective(), got.Policy.Effective()); diff != "" {
				t.Errorf("%s\n%s\nEffective after a round trip: -want, +got:\n%s", tc.reason, b, diff)
			}
		})
	}
}
