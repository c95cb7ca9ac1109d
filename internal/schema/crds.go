package schema

import (
	"bytes"
	_ "embed" // for go:embed
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Files of the CRDs Crossplane derives from each shape's XRD, written by
// make generate (hack/xrdgen -crds, with internal/schema/derive) and held to
// the XRDs by TestCRDsAreDerived. Deriving them here would link xcrd, and
// with it every Kubernetes API group, into the function.
var (
	//go:embed crds/claims.yaml
	claimsCRDs []byte
	//go:embed crds/v2.yaml
	v2CRDs []byte
)

// parse reads a file of CRDs (YAML documents) and returns the group/version
// they serve, the version, and the CRDs in file order (claim first).
func parse(file []byte) (string, string, []*extv1.CustomResourceDefinition, error) {
	var defs []*extv1.CustomResourceDefinition
	for _, doc := range bytes.Split(file, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 || !bytes.Contains(doc, []byte("\nspec:")) {
			continue // the header's comments
		}
		d := &extv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, d); err != nil {
			return "", "", nil, fmt.Errorf("cannot parse a CRD: %w", err)
		}
		defs = append(defs, d)
	}
	if len(defs) == 0 {
		return "", "", nil, fmt.Errorf("no CRDs")
	}
	// Crossplane stores the XRD's referenceable version, and serves it.
	xr := defs[len(defs)-1]
	var version string
	for _, v := range xr.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	if version == "" {
		return "", "", nil, fmt.Errorf("the %s CRD has no storage version", xr.Name)
	}
	return xr.Spec.Group + "/" + version, version, defs, nil
}

// build builds, for each CRD in file, the validators the API server would
// build to serve it.
func build(file []byte) (*crds, error) {
	apiVersion, version, defs, err := parse(file)
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
		cel:        sync.OnceValue(func() *celCreate { return newCELCreate(s, celconfig.PerCallLimit) }),
		celUpdate:  sync.OnceValue(func() *cel.Validator { return cel.NewValidator(s, true, celconfig.PerCallLimit) }),
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
