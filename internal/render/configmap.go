package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMap holds broker.toml, the host list and every script. It copies
// the plan's files so that a caller changing the object cannot change the
// plan.
func ConfigMap(in Input) *corev1.ConfigMap {
	data := make(map[string]string, len(in.Files))
	for k, v := range in.Files {
		data[k] = v
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(in, in.Names.Entrypoint, nil),
		Data:       data,
	}
}
