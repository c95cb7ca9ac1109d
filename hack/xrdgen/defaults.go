package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// SetSchemaDefaults writes v1alpha2.SchemaDefaults, the one home of the
// API's default values, into spec, the schema of a MiniCluster spec as a
// JSON-shaped map. A default already in spec came from a
// +kubebuilder:default marker, a second home for a value, and is refused.
func SetSchemaDefaults(spec map[string]any) error {
	if found := SchemaDefaultsIn(spec); len(found) > 0 {
		paths := slices.Sorted(maps.Keys(found))
		return fmt.Errorf("the types give %s a default (a +kubebuilder:default marker): state it in v1alpha2.SchemaDefaults (apis/minicluster/v1alpha2/defaults.go) instead, its one home", strings.Join(paths, ", "))
	}
	seen := map[string]bool{}
	for _, d := range v1alpha2.SchemaDefaults() {
		if seen[d.Path] {
			return fmt.Errorf("v1alpha2.SchemaDefaults states %s twice", d.Path)
		}
		seen[d.Path] = true
		node, err := schemaAt(spec, d.Path)
		if err != nil {
			return fmt.Errorf("v1alpha2.SchemaDefaults: %w", err)
		}
		raw, err := json.Marshal(d.Value)
		if err != nil {
			return fmt.Errorf("v1alpha2.SchemaDefaults: cannot encode the default of %s: %w", d.Path, err)
		}
		node["default"] = json.RawMessage(raw)
	}
	return nil
}

// SchemaDefaultsIn is every default in spec, the schema of a MiniCluster
// spec as a JSON-shaped map, by path in SchemaDefault's notation, each
// value as compact JSON.
func SchemaDefaultsIn(spec map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(node map[string]any, path string)
	walk = func(node map[string]any, path string) {
		if v, ok := node["default"]; ok {
			b, err := json.Marshal(v)
			if err != nil {
				b = []byte(fmt.Sprint(v))
			}
			out[path] = string(b)
		}
		join := func(name string) string {
			if path == "" {
				return name
			}
			return path + "." + name
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for name, p := range props {
				if m, ok := p.(map[string]any); ok {
					walk(m, join(name))
				}
			}
		}
		if m, ok := node["items"].(map[string]any); ok {
			walk(m, path+"[]")
		}
		if m, ok := node["additionalProperties"].(map[string]any); ok {
			walk(m, path+"{}")
		}
	}
	walk(spec, "")
	return out
}

// schemaAt is the schema of the field at path (SchemaDefault's notation)
// below spec.
func schemaAt(spec map[string]any, path string) (map[string]any, error) {
	node := spec
	for _, step := range strings.Split(path, ".") {
		name, items := strings.CutSuffix(step, "[]")
		props, _ := node["properties"].(map[string]any)
		next, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s names a field the schema does not have", path)
		}
		if items {
			if next, ok = next["items"].(map[string]any); !ok {
				return nil, fmt.Errorf("%s: %s is not a list", path, name)
			}
		}
		node = next
	}
	return node, nil
}

// setCRDDefaults writes the schema defaults into the spec of every version
// of the MiniCluster CRD controller-gen generated.
func setCRDDefaults(crd *extv1.CustomResourceDefinition) error {
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		root := v.Schema.OpenAPIV3Schema
		spec, ok := root.Properties["spec"]
		if !ok {
			return fmt.Errorf("version %s of the CRD has no spec", v.Name)
		}
		m, err := toMap(spec)
		if err != nil {
			return err
		}
		if err := SetSchemaDefaults(m); err != nil {
			return err
		}
		if err := fromMap(m, &spec); err != nil {
			return err
		}
		root.Properties["spec"] = spec
	}
	return nil
}

// toMap turns a schema into a JSON-shaped map, numbers kept exactly.
func toMap(s extv1.JSONSchemaProps) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode schema: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("cannot decode schema: %w", err)
	}
	return m, nil
}

func fromMap(m map[string]any, s *extv1.JSONSchemaProps) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("cannot encode schema: %w", err)
	}
	*s = extv1.JSONSchemaProps{}
	if err := json.Unmarshal(b, s); err != nil {
		return fmt.Errorf("cannot decode schema: %w", err)
	}
	return nil
}
