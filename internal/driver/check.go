package driver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	mcschema "github.com/flux-framework/minicluster-crossplane/internal/schema"
)

// InvalidError is a MiniCluster the API server would refuse: fields its
// schema does not know (as kubectl's default --validate=strict reports
// them), or metadata, schema and CEL errors. Its message is kubectl's.
type InvalidError struct {
	Kind, Name string
	// Unknown are the paths of unknown fields. When there are any, the API
	// server stops at decoding, so Errs is empty.
	Unknown []string
	// Errs are the metadata, schema and CEL errors, in the API server's
	// order.
	Errs field.ErrorList
}

// Lines are the problems, one a line: `unknown field "spec.x"` or a field
// error ("spec.size: Invalid value: ...").
func (e *InvalidError) Lines() []string {
	var out []string
	for _, p := range e.Unknown {
		out = append(out, fmt.Sprintf("unknown field %q", p))
	}
	for _, err := range e.Errs {
		out = append(out, err.Error())
	}
	return out
}

func (e *InvalidError) Error() string {
	lines := e.Lines()
	if len(e.Unknown) > 0 {
		return fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s", e.Kind, mcschemaVersion(), e.Kind, strings.Join(lines, ", "))
	}
	if len(lines) == 1 {
		return fmt.Sprintf("The %s %q is invalid: %s", e.Kind, e.Name, lines[0])
	}
	return fmt.Sprintf("The %s %q is invalid: \n* %s", e.Kind, e.Name, strings.Join(lines, "\n* "))
}

// mcschemaVersion is the served version ("v1alpha2").
func mcschemaVersion() string {
	_, v, _ := strings.Cut(mcschema.Claims.APIVersion(), "/")
	return v
}

// Check does to obj, a MiniCluster claim or XMiniCluster as FindMiniCluster
// returns it, what the API server of a cluster of the given shape ("" is
// ShapeClaims) does on create: it refuses unknown fields (kubectl
// --validate=strict), applies the schema's defaults in place, and validates
// metadata, the schema and its CEL rules. It returns nil or an
// *InvalidError. No message quotes spec.flux.curveCert.
func Check(ctx context.Context, obj *unstructured.Unstructured, shape Shape) error {
	s := schemaOf(obj, shape)
	if inv := strictDecode(obj, s); inv != nil {
		return inv
	}
	inv := &InvalidError{Kind: obj.GetKind(), Name: obj.GetName()}
	s.Default(obj.Object)
	inv.Errs = append(inv.Errs, validateMeta(obj)...)
	inv.Errs = append(inv.Errs, s.Validate(ctx, obj.Object)...)
	if len(inv.Errs) == 0 {
		return nil
	}
	cert, _, _ := unstructured.NestedString(obj.Object, "spec", "flux", "curveCert")
	for _, e := range inv.Errs {
		redactFieldError(e, cert)
	}
	return inv
}

// strictDecode is the API server's strict decoding, its first step: an
// *InvalidError naming the fields of obj schema s does not know, or nil
// when it has none.
func strictDecode(obj *unstructured.Unstructured, s *mcschema.Schema) *InvalidError {
	unknown := redactPaths(s.Unknown(obj.Object))
	if len(unknown) == 0 {
		return nil
	}
	return &InvalidError{Kind: obj.GetKind(), Name: obj.GetName(), Unknown: unknown}
}

// schemaOf is the schema the API server serves obj's kind with in a cluster
// of the shape: in the v2 shape a MiniCluster is the namespaced composite,
// whose CRD keeps Crossplane's fields under spec.crossplane. An
// XMiniCluster is checked as the claim shape's whatever the shape
// (CompositeV2 then refuses it, saying why).
func schemaOf(obj *unstructured.Unstructured, shape Shape) *mcschema.Schema {
	if shape == ShapeV2 && obj.GetKind() == v1alpha2.ClaimKind {
		return mcschema.V2
	}
	return mcschema.Claims
}

// validateMeta is the API server's metadata validation on create
// (ValidateObjectMetaAccessor), after it has filled in what kubectl and
// the REST handler would: the default namespace of a claim, no namespace
// for the cluster-scoped composite.
func validateMeta(obj *unstructured.Unstructured) field.ErrorList {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": runtime.DeepCopyJSONValue(obj.Object["metadata"])}}
	namespaced := obj.GetKind() == v1alpha2.ClaimKind
	switch {
	case !namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		u.SetNamespace("default")
	}
	return apivalidation.ValidateObjectMetaAccessor(u, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// curveCertPath is the field whose value is a secret key.
const curveCertPath = "spec.flux.curveCert"

// redactPaths hides the keys of an object given as spec.flux.curveCert:
// pruning reports them as unknown fields, and a key may be a secret key.
func redactPaths(paths []string) []string {
	out := paths[:0]
	seen := false
	for _, p := range paths {
		if strings.HasPrefix(p, curveCertPath+".") || strings.HasPrefix(p, curveCertPath+"[") {
			if seen {
				continue
			}
			seen, p = true, curveCertPath+".<redacted>"
		}
		out = append(out, p)
	}
	return out
}

// redactFieldError keeps the certificate out of a field error about it:
// the bad value goes (unless it is a JSON type name, as in type errors),
// and any copy of the text in the detail.
func redactFieldError(e *field.Error, cert string) {
	if e.Field != curveCertPath && !strings.HasPrefix(e.Field, curveCertPath+".") && !strings.HasPrefix(e.Field, curveCertPath+"[") {
		return
	}
	switch v := e.BadValue.(type) {
	case string:
		switch v {
		case "string", "integer", "number", "boolean", "object", "array", "null":
		default:
			e.BadValue = field.OmitValueType{}
		}
	case nil, field.OmitValueType:
	default:
		e.BadValue = field.OmitValueType{}
	}
	if cert != "" {
		e.Detail = strings.ReplaceAll(e.Detail, cert, "<redacted>")
	}
}

// quoted matches a Go-quoted string.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// minSecretPiece is the shortest quote of the certificate that is redacted.
const minSecretPiece = 8

// certWords are the words of a certificate that are never secret.
var certWords = map[string]bool{"metadata": true, "curve": true, "public-key": true, "secret-key": true, "name": true, "keygen.hostname": true}

// redactCertMessage removes from a message about spec.flux.curveCert every
// quoted text of 8 bytes or more taken from the certificate (a key, a line,
// part of either), except the section and key names. The function's
// certificate parser may quote pieces of a malformed certificate; the CLI
// never prints them. Shorter quotes (a misspelt section header) stay.
func redactCertMessage(msg, cert string) string {
	if cert == "" || !strings.Contains(msg, "curveCert") {
		return msg
	}
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil || len(s) < minSecretPiece || certWords[s] || !strings.Contains(cert, s) {
			return q
		}
		return `"<redacted>"`
	})
}
