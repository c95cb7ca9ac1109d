package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// TemplatePath is where the Burst CRD embeds a MiniCluster spec, below a
// version's openAPIV3Schema.
var TemplatePath = []string{"properties", "spec", "properties", "forProvider", "properties", "template"}

// TrimTemplate removes the MiniCluster's transition rules (CEL rules that
// read oldSelf: "spec.X is immutable once the MiniCluster exists") from the
// MiniCluster spec a Burst embeds as spec.forProvider.template, and keeps
// every other rule. They guard a running MiniCluster's Job; on a Burst they
// only make the API server refuse every update the burst controller makes
// (finalizer, external-name annotation): the controller writes the Burst
// back from Go types, which spell empty objects out (network: {}), so the
// template never equals what the user applied. The burst controller never
// changes a burst MiniCluster's immutable fields, and the target cluster's
// XRD keeps enforcing them on the claim.
//
// b is a CRD as controller-gen writes it (a leading "---", keys sorted);
// the result is byte-identical but for the removed rules.
func TrimTemplate(b []byte) ([]byte, int, error) {
	removed := 0
	out, err := editTemplates(b, func(template map[string]any) error {
		removed += trimTransitionRules(template)
		return nil
	})
	return out, removed, err
}

// DefaultTemplate writes the MiniCluster spec's schema defaults
// (SetSchemaDefaults) into the template a Burst CRD embeds, as they are in
// the XRDs: the API server applies them to a Burst's template too.
//
// b is a CRD as controller-gen writes it; the result is byte-identical but
// for the added defaults.
func DefaultTemplate(b []byte) ([]byte, error) {
	return editTemplates(b, SetSchemaDefaults)
}

// editTemplates calls edit on the schema of the MiniCluster spec embedded
// at TemplatePath in every version of the CRD b, and re-encodes the CRD.
func editTemplates(b []byte, edit func(template map[string]any) error) ([]byte, error) {
	const sep = "---\n"
	body, hadSep := bytes.CutPrefix(b, []byte(sep))
	var crd map[string]any
	if err := yaml.Unmarshal(body, &crd); err != nil {
		return nil, fmt.Errorf("cannot parse CRD: %w", err)
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		node, _ := v.(map[string]any)
		node, _ = node["schema"].(map[string]any)
		node, _ = node["openAPIV3Schema"].(map[string]any)
		for _, k := range TemplatePath {
			node, _ = node[k].(map[string]any)
		}
		if node == nil {
			return nil, fmt.Errorf("CRD %v has no schema at %s", crd["metadata"], strings.Join(TemplatePath, "."))
		}
		if err := edit(node); err != nil {
			return nil, err
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	if hadSep {
		out = append([]byte(sep), out...)
	}
	return out, nil
}

// trimTransitionRules removes rules reading oldSelf from a schema and
// everything below it, and returns how many it removed.
func trimTransitionRules(schema map[string]any) int {
	n := 0
	if rules, ok := schema["x-kubernetes-validations"].([]any); ok {
		kept := rules[:0]
		for _, r := range rules {
			if m, ok := r.(map[string]any); ok && strings.Contains(fmt.Sprint(m["rule"]), "oldSelf") {
				n++
				continue
			}
			kept = append(kept, r)
		}
		if len(kept) == 0 {
			delete(schema, "x-kubernetes-validations")
		} else {
			schema["x-kubernetes-validations"] = kept
		}
	}
	for _, k := range []string{"properties", "patternProperties", "definitions"} {
		if props, ok := schema[k].(map[string]any); ok {
			for _, p := range props {
				if m, ok := p.(map[string]any); ok {
					n += trimTransitionRules(m)
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if m, ok := schema[k].(map[string]any); ok {
			n += trimTransitionRules(m)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := schema[k].([]any); ok {
			for _, s := range list {
				if m, ok := s.(map[string]any); ok {
					n += trimTransitionRules(m)
				}
			}
		}
	}
	return n
}

// trimTemplateFile rewrites a Burst CRD file in place with TrimTemplate and
// DefaultTemplate.
func trimTemplateFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, _, err := TrimTemplate(b)
	if err == nil {
		out, err = DefaultTemplate(out)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, b) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}
