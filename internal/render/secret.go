package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// CurveSecret holds the CURVE certificate, the instance's only secret. The
// key is the file name the scripts expect where the Secret is mounted.
func CurveSecret(in Input) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(in, in.Names.CurveSecret, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{v1alpha2.CurveCertKey: in.CurveCert},
	}
}
