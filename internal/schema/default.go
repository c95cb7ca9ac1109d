package schema

import (
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
)

// Default applies the schema's defaults to obj (a MiniCluster claim or an
// XMiniCluster) in place, as the API server does after decoding: nulls the
// schema does not allow are dropped first, then defaults are set. Objects of
// other kinds are left alone. It does not drop unknown fields (see Unknown).
//
// The defaults are the XRD's, which hack/xrdgen writes from
// v1alpha2.SchemaDefaults, the values v1alpha2.SetDefaults applies too.
func (s *Schema) Default(obj map[string]any) {
	c := s.forKind(obj)
	if c == nil {
		return
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	structuraldefaulting.Default(obj, c.structural)
}
