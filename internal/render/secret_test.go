package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

func TestCurveSecret(t *testing.T) {
	type secret struct {
		namespace, name string
		data            map[string][]byte
	}
	type want struct {
		// composed is the Secret Render composes, if any.
		composed *secret
		// volume is the brokers' certificate volume.
		volume *corev1.SecretVolumeSource
	}
	cases := map[string]struct {
		reason string
		opts   []func(*v1alpha2.MiniCluster)
		want   want
	}{
		"Composed": {
			reason: "The composed <name>-curve-cert Secret holds the certificate under the key the brokers' volume projects, so the runner finds it at " + entrypoint.CurveDir + "/" + entrypoint.CurveFile + "; the mount is world-readable so a runner of any uid can copy it.",
			want: want{
				composed: &secret{namespace: "tenant-a", name: "flux-sample-curve-cert", data: map[string][]byte{v1alpha2.CurveCertKey: []byte("cert")}},
				volume:   &corev1.SecretVolumeSource{SecretName: "flux-sample-curve-cert", Items: []corev1.KeyToPath{{Key: v1alpha2.CurveCertKey, Path: entrypoint.CurveFile}}, DefaultMode: ptr.To[int32](0o444)}, //nolint:gosec // G101: a Secret name in a test, not a credential
			},
		},
		"ClaimsOwn": {
			reason: "With flux.curveCertSecret the brokers mount the claim's Secret (a burst shares its root's) and none is composed.",
			opts:   []func(*v1alpha2.MiniCluster){func(m *v1alpha2.MiniCluster) { m.Spec.Flux.CurveCertSecret = "root-cert" }},
			want: want{
				volume: &corev1.SecretVolumeSource{SecretName: "root-cert", Items: []corev1.KeyToPath{{Key: v1alpha2.CurveCertKey, Path: entrypoint.CurveFile}}, DefaultMode: ptr.To[int32](0o444)},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			for _, o := range Render(input(t, tc.opts...)) {
				switch obj := o.Object.(type) {
				case *corev1.Secret:
					got.composed = &secret{namespace: obj.Namespace, name: obj.Name, data: obj.Data}
				case *batchv1.Job:
					for _, v := range obj.Spec.Template.Spec.Volumes {
						if v.Name == plan.VolumeCurveCert {
							got.volume = v.Secret
						}
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, secret{})); diff != "" {
				t.Errorf("%s\nthe CURVE Secret and the brokers' certificate volume: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
