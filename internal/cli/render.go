// Package cli renders a MiniCluster claim the way Crossplane would: it turns
// the claim into its composite resource, builds a RunFunctionRequest and
// calls the composition function in-process.
package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/function"
)

// AnnotationResourceName names the composed resource an object is, as
// Crossplane does; rendered objects carry it so they can be fed back as
// observed state.
const AnnotationResourceName = "crossplane.io/composition-resource-name"

// Options of one render.
type Options struct {
	// Claim is a MiniCluster claim, an upstream MiniCluster or an
	// XMiniCluster, as YAML or JSON (the first one of the stream is
	// rendered; other kinds are ignored).
	Claim []byte
	// Observed objects, e.g. a previous render's output.
	Observed []*unstructured.Unstructured
	// Input is the function's input as YAML (optional).
	Input []byte
	// Function to call; a default one when nil.
	Function *function.Function
}

// Output of one render.
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

// ReadDir reads every object of every YAML file in dir.
func ReadDir(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read observed directory: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name())) //nolint:gosec // files of the directory the user names
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", e.Name(), err)
		}
		objs, err := ParseObjects(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ParseObjects reads a YAML (or JSON) stream of Kubernetes objects as
// kubectl and the API server would: each document is turned into JSON
// (refusing duplicate keys), then decoded with integers as int64.
func ParseObjects(b []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot parse YAML: %w", err)
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("cannot parse YAML: %w", err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(j, &obj); err != nil {
			return nil, fmt.Errorf("cannot parse YAML: a document is not an object: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// Composite turns a claim (or upstream MiniCluster) into the composite
// resource Crossplane would create for it. An XMiniCluster passes unchanged.
func Composite(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	switch obj.GetKind() {
	case v1alpha2.CompositeKind:
		return obj, nil
	case v1alpha2.ClaimKind:
	default:
		return nil, fmt.Errorf("expected kind %s or %s, got %q", v1alpha2.ClaimKind, v1alpha2.CompositeKind, obj.GetKind())
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	xr := &unstructured.Unstructured{Object: map[string]any{}}
	xr.SetAPIVersion(v1alpha2.SchemeGroupVersion.String())
	xr.SetKind(v1alpha2.CompositeKind)
	xr.SetName(obj.GetName())
	xr.SetLabels(map[string]string{
		function.LabelClaimName:      obj.GetName(),
		function.LabelClaimNamespace: ns,
	})
	if spec, ok := obj.Object["spec"]; ok {
		xr.Object["spec"] = spec
	}
	if status, ok := obj.Object["status"]; ok {
		xr.Object["status"] = status
	}
	return xr, nil
}

// CompositeYAML returns the composite resource of the MiniCluster in b,
// after the checks Render makes (see Check). The composite carries the
// claim's spec as written: the API server's defaults are left for
// `crossplane composition render --xrd` (or the cluster) to apply.
func CompositeYAML(b []byte) ([]byte, error) {
	objs, err := ParseObjects(b)
	if err != nil {
		return nil, err
	}
	mc, err := FindMiniCluster(objs)
	if err != nil {
		return nil, err
	}
	if err := Check(context.Background(), mc.DeepCopy()); err != nil {
		return nil, err
	}
	xr, err := Composite(mc)
	if err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(xr.Object)
	if err != nil {
		return nil, err
	}
	return append([]byte("# The composite resource Crossplane creates for claim.yaml (minicluster xr -f claim.yaml).\n"), out...), nil
}

// Render calls the function for the claim in o, as Crossplane would for
// the claim once the API server has accepted it: a claim the API server
// would refuse (see Check) is not composed; Output.Invalid says why, and
// its one FATAL result carries every error. Errors are problems of the
// input itself: YAML, no MiniCluster, another API version, no name.
func Render(ctx context.Context, o Options) (*Output, error) {
	objs, err := ParseObjects(o.Claim)
	if err != nil {
		return nil, err
	}
	mc, err := FindMiniCluster(objs)
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, mc); err != nil {
		var inv *InvalidError
		if errors.As(err, &inv) {
			return &Output{Fatal: true, Invalid: inv, Results: []string{"FATAL: " + inv.Error()}}, nil
		}
		return nil, err
	}
	xr, err := Composite(mc)
	if err != nil {
		return nil, err
	}
	return run(ctx, o, xr)
}

// run calls the function for the composite resource xr.
func run(ctx context.Context, o Options, xr *unstructured.Unstructured) (*Output, error) {
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "minicluster-cli"},
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{},
	}
	for _, obs := range o.Observed {
		// The observed composite (or claim) carries the status the function
		// wrote before, e.g. the maximum size.
		if k := obs.GetKind(); (k == v1alpha2.ClaimKind || k == v1alpha2.CompositeKind) && obs.GetName() == xr.GetName() {
			if st, ok := obs.Object["status"]; ok {
				xr.Object["status"] = st
			}
			continue
		}
		name := obs.GetAnnotations()[AnnotationResourceName]
		if name == "" {
			continue
		}
		s, err := structpb.NewStruct(obs.Object)
		if err != nil {
			return nil, fmt.Errorf("cannot convert observed %s: %w", name, err)
		}
		req.Observed.Resources[name] = &fnv1.Resource{Resource: s}
	}
	oxr, err := structpb.NewStruct(xr.Object)
	if err != nil {
		return nil, fmt.Errorf("cannot convert composite resource: %w", err)
	}
	req.Observed.Composite = &fnv1.Resource{Resource: oxr}
	dxr, err := structpb.NewStruct(map[string]any{"apiVersion": xr.GetAPIVersion(), "kind": xr.GetKind(), "metadata": map[string]any{"name": xr.GetName()}})
	if err != nil {
		return nil, err
	}
	req.Desired.Composite = &fnv1.Resource{Resource: dxr}
	if len(o.Input) > 0 {
		var in map[string]any
		if err := yaml.Unmarshal(o.Input, &in); err != nil {
			return nil, fmt.Errorf("cannot parse input: %w", err)
		}
		if req.Input, err = structpb.NewStruct(in); err != nil {
			return nil, fmt.Errorf("cannot convert input: %w", err)
		}
	}

	fn := o.Function
	if fn == nil {
		fn = function.New()
	}
	rsp, err := fn.RunFunction(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("function failed: %w", err)
	}
	cert, _, _ := unstructured.NestedString(xr.Object, "spec", "flux", "curveCert")
	return output(rsp, cert)
}

// output reads the function's response. cert is the claim's
// spec.flux.curveCert: no result or condition message repeats a piece of it.
func output(rsp *fnv1.RunFunctionResponse, cert string) (*Output, error) {
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
