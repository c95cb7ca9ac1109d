package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func meta(in Input, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Labels: labels}
}

// emptyToNil keeps an empty map of the claim out of the output, where it
// would render as {} instead of being left out.
func emptyToNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
