package driver

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Output of one run of the function.
type Output struct {
	// Objects composed, in resource-name order, annotated with their name.
	Objects []*unstructured.Unstructured
	// Composite is the desired composite resource (its status).
	Composite *unstructured.Unstructured
	// YAML is Objects as a YAML stream.
	YAML []byte
	// Results are the function's results and conditions, one line each.
	Results []string
	// Fatal is true when the function refused to compose, or when the
	// claim is Invalid.
	Fatal bool
	// Invalid is set when the API server would refuse the claim; then the
	// function was not called.
	Invalid *InvalidError
}

// ReadResponse reads the function's response. cert is the claim's
// spec.flux.curveCert: no result or condition message repeats a piece of it.
func ReadResponse(rsp *fnv1.RunFunctionResponse, cert string) (*Output, error) {
	return readResponse(rsp, cert, nil)
}

// readResponse is ReadResponse that, with a controller, sets it on every
// composed object as Crossplane does when it applies them: fed back as
// observed state, they are the composite's own.
func readResponse(rsp *fnv1.RunFunctionResponse, cert string, controller *metav1.OwnerReference) (*Output, error) {
	out := &Output{}
	for _, r := range rsp.GetResults() {
		sev := strings.TrimPrefix(r.GetSeverity().String(), "SEVERITY_")
		out.Results = append(out.Results, fmt.Sprintf("%s: %s", sev, redactCertMessage(r.GetMessage(), cert)))
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			out.Fatal = true
		}
	}
	for _, c := range rsp.GetConditions() {
		line := fmt.Sprintf("Condition %s=%s (%s)", c.GetType(), strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_"), c.GetReason())
		if c.GetMessage() != "" {
			line += ": " + redactCertMessage(c.GetMessage(), cert)
		}
		out.Results = append(out.Results, line)
	}
	if out.Fatal {
		return out, nil
	}
	names := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for name := range rsp.GetDesired().GetResources() {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, name := range names {
		u := &unstructured.Unstructured{Object: rsp.GetDesired().GetResources()[name].GetResource().AsMap()}
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationResourceName] = name
		u.SetAnnotations(ann)
		if controller != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{*controller})
		}
		out.Objects = append(out.Objects, u)
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("cannot encode %s: %w", name, err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	out.YAML = buf.Bytes()
	if c := rsp.GetDesired().GetComposite(); c != nil {
		out.Composite = &unstructured.Unstructured{Object: c.GetResource().AsMap()}
	}
	return out, nil
}
