package function

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
)

// keyPair is the Z85 keys of a certificate whose secret key is 32 bytes of b.
func keyPair(t *testing.T, b byte) (public, secret string) {
	t.Helper()
	c, err := curve.Generate(bytes.NewReader(bytes.Repeat([]byte{b}, curve.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	return c.PublicKeyZ85(), c.SecretKeyZ85()
}

// userCert is a certificate as a user writes it: public-key on line 4,
// secret-key on line 5.
func userCert(public, secret string) string {
	return "metadata\n    name = \"mine\"\ncurve\n    public-key = \"" + public + "\"\n    secret-key = \"" + secret + "\"\n"
}

// specWith is a size-2 spec whose flux section is flux.
func specWith(t *testing.T, flux map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"size": 2, "flux": flux, "containers": []any{map[string]any{"image": "x", "command": "hostname"}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUserCurveCertOnePass: a certificate Flux would refuse is a field
// error of the plan, reported in the same result as the claim's other
// mistakes, and no message repeats its keys.
func TestUserCurveCertOnePass(t *testing.T) {
	pubA, _ := keyPair(t, 1)
	pubB, secB := keyPair(t, 2)
	mismatched := userCert(pubA, secB)
	certErr := `spec.flux.curveCert: Invalid value: "<curve.cert>": is not a CURVE certificate Flux accepts (generate one with flux keygen): line 4: public-key does not belong to the secret-key on line 5 (the secret key's public key is "` + pubB + `")`
	// long is a claim name whose pods' hostnames are too long: a plan
	// error no schema states.
	long := strings.Repeat("a", 62)
	nameErr := `metadata.name: Invalid value: "` + long + `": is too long: the hostname of the last pod, "` + long + `-1", would have more than 63 characters; use a name of at most 61 characters`

	cases := map[string]struct {
		reason string
		name   string // the claim's; flux-sample when ""
		flux   map[string]any
		want   []string // the errors of the one fatal result, in order
	}{
		"BadCertificate": {
			reason: "A certificate whose keys do not belong together is refused as a field error.",
			flux:   map[string]any{"curveCert": mismatched},
			want:   []string{certErr},
		},
		"BadCertificateAndName": {
			reason: "A plan error and a bad certificate come back together: one round fixes both.",
			name:   long,
			flux:   map[string]any{"curveCert": mismatched},
			want:   []string{nameErr, certErr},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := xr(specWith(t, tc.flux), "")
			if tc.name != "" {
				x = strings.Replace(x, `"crossplane.io/claim-name":"flux-sample"`, `"crossplane.io/claim-name":"`+tc.name+`"`, 1)
				x = strings.Replace(x, `"name":"flux-sample","namespace":"tenant-a"`, `"name":"`+tc.name+`","namespace":"tenant-a"`, 1)
			}
			rsp := run(t, req(x, nil, ""))
			var fatal []string
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = append(fatal, r.GetMessage())
				}
				if piece := curvetest.Piece(r.GetMessage(), secB, pubA); piece != "" {
					t.Errorf("%s\nresult repeats %q of the certificate: %s", tc.reason, piece, r.GetMessage())
				}
			}
			if len(fatal) != 1 {
				t.Fatalf("%s\nwant one fatal result, got %v", tc.reason, rsp.GetResults())
			}
			if diff := cmp.Diff("invalid MiniCluster: "+strings.Join(tc.want, "; "), fatal[0]); diff != "" {
				t.Errorf("%s\nfatal result: -want, +got:\n%s", tc.reason, diff)
			}
			var valid *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if piece := curvetest.Piece(c.GetMessage(), secB, pubA); piece != "" {
					t.Errorf("%s\ncondition %s repeats %q of the certificate: %s", tc.reason, c.GetType(), piece, c.GetMessage())
				}
				if c.GetType() == ConditionValid {
					valid = c
				}
			}
			if valid == nil || valid.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || valid.GetMessage() != fatal[0] {
				t.Errorf("%s\nwant condition Valid=False with the fatal message, got %v", tc.reason, valid)
			}
		})
	}
}

// TestUserCurveCertComposed: a valid certificate of the claim's own goes
// into the Secret as written, whatever the observed Secret holds.
func TestUserCurveCertComposed(t *testing.T) {
	mine := userCert(keyPair(t, 1))
	generated, err := curve.Generate(bytes.NewReader(bytes.Repeat([]byte{3}, curve.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason   string
		observed map[string]string
	}{
		"New": {
			reason: "A new MiniCluster composes the claim's certificate.",
		},
		"ObservedOther": {
			reason: "A claim that sets curveCert later replaces the generated certificate with its own.",
			observed: map[string]string{"curve-cert": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"flux-sample-curve-cert","namespace":"tenant-a"},"data":{"curve.cert":"` +
				base64.StdEncoding.EncodeToString(generated.Marshal()) + `"}}`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, req(xr(specWith(t, map[string]any{"curveCert": mine}), ""), tc.observed, ""))
			got := desired(t, rsp, "curve-cert", &corev1.Secret{}).Data[v1alpha2.CurveCertKey]
			if diff := cmp.Diff(mine, string(got)); diff != "" {
				t.Errorf("%s\ncurve-cert Secret: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
