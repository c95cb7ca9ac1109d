package schema

import (
	"fmt"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// derive returns the group/version an XRD serves, its referenceable
// version, and the claim and composite CRDs Crossplane derives from it.
func derive(definition []byte) (string, string, []*extv1.CustomResourceDefinition, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := yaml.Unmarshal(definition, &tm); err != nil {
		return "", "", nil, fmt.Errorf("cannot parse the XRD: %w", err)
	}
	// Crossplane serves v2 XRDs through the same (v1) type; they differ in
	// what scope means when it is not set.
	xrd := &xpv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(definition, xrd); err != nil {
		return "", "", nil, fmt.Errorf("cannot parse the XRD: %w", err)
	}
	if tm.APIVersion == "apiextensions.crossplane.io/v2" && xrd.Spec.Scope == nil {
		ns := xpv1.CompositeResourceScopeNamespaced
		xrd.Spec.Scope = &ns
	}
	var version string
	for _, v := range xrd.Spec.Versions {
		if v.Referenceable {
			version = v.Name
		}
	}
	if version == "" {
		return "", "", nil, fmt.Errorf("the XRD has no referenceable version")
	}
	var defs []*extv1.CustomResourceDefinition
	if xrd.Spec.ClaimNames != nil {
		claim, err := xcrd.ForCompositeResourceClaim(xrd)
		if err != nil {
			return "", "", nil, fmt.Errorf("cannot derive the claim CRD: %w", err)
		}
		defs = append(defs, claim)
	}
	xr, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		return "", "", nil, fmt.Errorf("cannot derive the composite resource CRD: %w", err)
	}
	defs = append(defs, xr)
	return xrd.Spec.Group + "/" + version, version, defs, nil
}

// build derives the claim and composite CRDs from an XRD, as Crossplane
// does, and the validators the API server would build for them.
func build(definition []byte) (*crds, error) {
	apiVersion, version, defs, err := derive(definition)
	if err != nil {
		return nil, err
	}
	out := &crds{apiVersion: apiVersion, byKind: map[string]*crd{}}
	for _, d := range defs {
		c, err := serve(d, version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Spec.Names.Kind, err)
		}
		out.kinds = append(out.kinds, c.kind)
		out.byKind[c.kind] = c
	}
	return out, nil
}

// serve does what the API server's CRD handler does for a served version
// (crdHandler.getOrCreateServingInfoFor and NewStrategy).
func serve(c *extv1.CustomResourceDefinition, version string) (*crd, error) {
	var v *extv1.CustomResourceDefinitionVersion
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Name == version {
			v = &c.Spec.Versions[i]
		}
	}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no schema for version %s", version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := extv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("cannot convert the schema: %w", err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("cannot prune defaults: %w", err)
	}
	validator, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("cannot build the schema validator: %w", err)
	}
	out := &crd{
		kind:       c.Spec.Names.Kind,
		structural: s,
		validator:  validator,
		cel:        sync.OnceValue(func() *cel.Validator { return cel.NewValidator(s, true, celconfig.PerCallLimit) }),
	}
	if sr := v.Subresources; sr != nil {
		out.hasStatus = sr.Status != nil
		if sr.Scale != nil {
			out.scale = &apiextensions.CustomResourceSubresourceScale{}
			if err := extv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sr.Scale, out.scale, nil); err != nil {
				return nil, fmt.Errorf("cannot convert the scale subresource: %w", err)
			}
		}
	}
	return out, nil
}
