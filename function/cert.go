package function

import (
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// curveCert returns the certificate for the <name>-curve-cert Secret. It is
// generated once: every later run reads it back from the observed Secret, so
// a function restart, a Crossplane restart or a re-render never changes the
// key that running brokers share.
func (f *Function) curveCert(mc *v1alpha2.MiniCluster, observed map[resource.Name]resource.ObservedComposed) ([]byte, error) {
	if mc.Spec.Flux.CurveCertSecret != "" {
		return nil, nil // the claim's own Secret; nothing to compose
	}
	if text := mc.Spec.Flux.CurveCert; text != "" {
		if err := curve.Validate([]byte(text)); err != nil {
			return nil, errors.Wrap(err, "spec.flux.curveCert is not a CURVE certificate Flux accepts (generate one with flux keygen)")
		}
		return []byte(text), nil
	}
	if o, ok := observed[render.KeyCurveCert]; ok {
		var data map[string]string
		if err := o.Resource.GetValueInto("data", &data); err == nil {
			if text, err := decodeBase64(data[entrypoint.CurveFile]); err == nil && curve.Validate(text) == nil {
				return text, nil
			}
		}
		// The observed Secret was emptied or edited into something Flux
		// cannot read. A new key is the only way forward; pods restarted
		// from here on use it.
		f.log.Info("Observed CURVE Secret has no valid certificate; generating a new one", "secret", o.Resource.GetName())
	}
	c, err := curve.Generate(f.rand, curve.KV{Key: "name", Value: mc.Name}, curve.KV{Key: "keygen.hostname", Value: mc.Name + "-0"})
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate CURVE certificate")
	}
	return c.Marshal(), nil
}
