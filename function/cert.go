package function

import (
	"encoding/base64"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// curveCert returns the certificate for the <name>-curve-cert Secret: the
// claim's own (spec.flux.curveCert, which plan.New has checked), or one
// generated once: every later run reads it back from the observed Secret, so
// a function restart, a Crossplane restart or a re-render never changes the
// key that running brokers share.
//
// own are the MiniCluster's own observed objects (admission.Trusted): a
// certificate is read back only from a Secret this MiniCluster controls.
func (f *Function) curveCert(mc *v1alpha2.MiniCluster, own map[string]*unstructured.Unstructured) ([]byte, error) {
	if mc.Spec.Flux.CurveCertSecret != "" {
		return nil, nil // the claim's own Secret; nothing to compose
	}
	if text := mc.Spec.Flux.CurveCert; text != "" {
		return []byte(text), nil // the claim's own, checked by plan.New
	}
	if o, ok := own[render.KeyCurveCert]; ok {
		if data, ok := secretData(o.Object); ok {
			if text, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data)); err == nil && f.validCert(text) {
				return text, nil
			}
		}
		// The observed Secret was emptied or edited into something Flux
		// cannot read. A new key is the only way forward; pods restarted
		// from here on use it.
		f.log.Info("Observed CURVE Secret has no valid certificate; generating a new one", "secret", o.GetName())
	}
	c, err := curve.Generate(f.rand, curve.KV{Key: "name", Value: mc.Name}, curve.KV{Key: "keygen.hostname", Value: mc.Name + "-0"})
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate CURVE certificate")
	}
	return c.Marshal(), nil
}

// secretData is the certificate's entry of a Secret's data, as
// GetValueInto("data", &map[string]string{}) would read it (without its
// JSON round trip): false when data is missing or not an object of strings.
func secretData(secret map[string]any) (string, bool) {
	d, ok := secret["data"]
	if !ok {
		return "", false
	}
	m, ok := d.(map[string]any)
	if !ok {
		return "", d == nil // null decodes as an empty map
	}
	for _, v := range m {
		switch v.(type) {
		case string, nil:
		default:
			return "", false
		}
	}
	s, _ := m[v1alpha2.CurveCertKey].(string)
	return s, true
}

// validCert is curve.Validate(text) == nil, remembered: validating derives
// the public key from the secret one (an X25519 multiplication), and every
// reconcile of every MiniCluster reads its certificate back. Only valid
// certificates are remembered, and only a bounded number of them.
func (f *Function) validCert(text []byte) bool {
	key := string(text)
	f.certsMu.Lock()
	_, ok := f.validCerts[key]
	f.certsMu.Unlock()
	if ok {
		return true
	}
	if curve.Validate(text) != nil {
		return false
	}
	f.certsMu.Lock()
	defer f.certsMu.Unlock()
	if f.validCerts == nil || len(f.validCerts) >= maxRememberedCerts {
		// Forget them all: simple, bounded, and a certificate costs one
		// validation to remember again.
		f.validCerts = make(map[string]struct{})
	}
	f.validCerts[key] = struct{}{}
	return true
}

// maxRememberedCerts bounds the memory of validCert: about 1 KiB each.
const maxRememberedCerts = 4096
