package driver

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Find answers a function's resource selector from the objects of a
// cluster, as Crossplane's client would: by apiVersion and kind, in the
// selector's namespace when it names one, by name or by labels. A Namespace
// asked for by name always exists (the MiniCluster lives in it): when
// cluster holds none, an unlabelled one answers, as for a namespace no one
// labelled.
func Find(cluster []*unstructured.Unstructured, sel *fnv1.ResourceSelector) (*fnv1.Resources, error) {
	out := &fnv1.Resources{}
	add := func(u *unstructured.Unstructured) error {
		s, err := structpb.NewStruct(u.Object)
		if err != nil {
			return fmt.Errorf("cannot convert %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out.Items = append(out.Items, &fnv1.Resource{Resource: s})
		return nil
	}
	for _, u := range cluster {
		if u.GetAPIVersion() != sel.GetApiVersion() || u.GetKind() != sel.GetKind() {
			continue
		}
		if sel.Namespace != nil && u.GetNamespace() != sel.GetNamespace() {
			continue
		}
		switch m := sel.GetMatch().(type) {
		case *fnv1.ResourceSelector_MatchName:
			if u.GetName() != m.MatchName {
				continue
			}
		case *fnv1.ResourceSelector_MatchLabels:
			if !labels.SelectorFromSet(m.MatchLabels.GetLabels()).Matches(labels.Set(u.GetLabels())) {
				continue
			}
		}
		if err := add(u); err != nil {
			return nil, err
		}
	}
	if m, ok := sel.GetMatch().(*fnv1.ResourceSelector_MatchName); ok && len(out.Items) == 0 && sel.GetApiVersion() == "v1" && sel.GetKind() == "Namespace" {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(m.MatchName)
		if err := add(ns); err != nil {
			return nil, err
		}
	}
	return out, nil
}
