package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCert(t *testing.T) {
	good, pub, sec := testCert(t)
	other, err := ecdh.X25519().GenerateKey(rand.Reader)
	must(t, err)
	otherPub := encodeZ85(other.PublicKey().Bytes())
	cases := map[string]struct {
		reason  string
		text    string
		mode    os.FileMode
		wantErr string // after "Error loading certificate: PATH: "
	}{
		"Valid": {
			reason: "A certificate as the project writes it, mode 0600, loads.",
			text:   good, mode: 0o600,
		},
		"OwnerReadOnly": {
			reason: "0400 is stricter than 0600: fine.",
			text:   good, mode: 0o400,
		},
		"GroupReadable": {
			reason:  "Flux refuses a certificate group or others can read: the Secret's mount (0444) is, the runner's copy must not be.",
			text:    good,
			mode:    0o640,
			wantErr: "readable by group/other",
		},
		"OtherReadable": {
			reason:  "The Secret volume's defaultMode 0444.",
			text:    good,
			mode:    0o444,
			wantErr: "readable by group/other",
		},
		"MismatchedKeys": {
			reason:  "public-key must be X25519 of secret-key.",
			text:    certText("flux-cert-generator", otherPub, sec),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: public-key is not the public key of secret-key (X25519))",
		},
		"NoName": {
			reason:  "The broker authorizes children by the certificate's name.",
			text:    certText("", pub, sec),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: metadata has no name)",
		},
		"ShortKey": {
			reason:  "Keys are 40 Z85 characters.",
			text:    certText("n", pub[:35], sec),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: public-key: 35 characters, a Z85 key has 40)",
		},
		"NotZ85": {
			reason:  "A quote is not a Z85 character, so it cannot be inside a value.",
			text:    certText("n", pub, sec[:39]+"\""),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: line 7: the value of secret-key has a character Flux refuses at offset 39)",
		},
		"NoSecret": {
			reason:  "Both keys are needed.",
			text:    strings.Replace(good, "    secret-key", "#", 1),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: the curve section needs both public-key and secret-key)",
		},
		"IndentedSection": {
			reason:  "Section names are not indented.",
			text:    strings.Replace(good, "curve\n", "  curve\n", 1),
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: line 5: expected key = \"value\")",
		},
		"UnknownCurveKey": {
			reason:  "The curve section has public-key and secret-key only.",
			text:    good + "    other-key = \"x\"\n",
			mode:    0o600,
			wantErr: "Invalid argument (flux-standin: line 8: unknown curve key \"other-key\")",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "curve.cert")
			must(t, os.WriteFile(p, []byte(tc.text), 0o600))
			must(t, os.Chmod(p, tc.mode))
			c, err := loadCert(p)
			gotErr := ""
			if err != nil {
				gotErr = strings.TrimPrefix(err.Error(), "Error loading certificate: "+p+": ")
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if err == nil && c.PublicZ85 != pub {
				t.Errorf("%s\npublic key %q, want %q", tc.reason, c.PublicZ85, pub)
			}
		})
	}
	t.Run("Missing", func(t *testing.T) {
		_, err := loadCert("/nonexistent/curve.cert")
		if diff := cmp.Diff("Error loading certificate: /nonexistent/curve.cert: No such file or directory", err.Error()); diff != "" {
			t.Errorf("a missing certificate: -want, +got:\n%s", diff)
		}
	})
}

func TestZ85(t *testing.T) {
	// ZeroMQ RFC 32's test vector.
	in := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	if diff := cmp.Diff("HelloWorld", encodeZ85(in)); diff != "" {
		t.Errorf("encode: -want, +got:\n%s", diff)
	}
	key := encodeZ85(append(append([]byte{}, in...), make([]byte, 24)...))
	got, err := decodeKey(key)
	must(t, err)
	if diff := cmp.Diff(in, got[:8]); diff != "" {
		t.Errorf("decode: -want, +got:\n%s", diff)
	}
	if _, err := decodeKey(strings.Repeat("#", 40)); err == nil {
		t.Error("%%%%% groups above 2^32-1 must be refused")
	}
}

// encodeZ85 is the inverse of decodeKey, which the tests make their certificates with.
func encodeZ85(b []byte) string {
	var sb strings.Builder
	for i := 0; i+4 <= len(b); i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var d [5]byte
		for j := 4; j >= 0; j-- {
			d[j] = z85Alphabet[v%85]
			v /= 85
		}
		sb.Write(d[:])
	}
	return sb.String()
}
