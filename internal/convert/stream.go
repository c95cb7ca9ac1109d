package convert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Options of Stream.
type Options struct {
	// Check, when set, is given every claim Stream makes, as YAML. An error
	// means the claim would be refused (by the API server or the
	// function); Stream then fails, naming the MiniCluster. Warnings join
	// the notes.
	Check func(claim []byte) (warnings []string, err error)
}

// Output of Stream.
type Output struct {
	// YAML is the stream with every v1alpha1 MiniCluster converted.
	YAML []byte
	// Notes are one line each, naming the MiniCluster and the field.
	Notes []string
	// Converted counts the MiniClusters converted.
	Converted int
}

// Stream converts every v1alpha1 MiniCluster of a YAML (or JSON) stream,
// also inside a List (kubectl get -o yaml); every other document is
// written out unchanged.
func Stream(in io.Reader, o Options) (*Output, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	out := &Output{}
	var docs [][]byte
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read document %d: %w", i+1, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		conv, err := out.document(doc, i+1, o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, conv)
	}
	for i, d := range docs {
		if i > 0 {
			out.YAML = append(out.YAML, "---\n"...)
		}
		out.YAML = append(out.YAML, d...)
		if !bytes.HasSuffix(d, []byte("\n")) {
			out.YAML = append(out.YAML, '\n')
		}
	}
	return out, nil
}

// header reads what a document is.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

func (h header) isV1alpha1() bool { return h.APIVersion == V1alpha1 && h.Kind == v1alpha2.ClaimKind }

// document converts document n, or returns it as it was.
func (out *Output) document(doc []byte, n int, o Options) ([]byte, error) {
	var h header
	if err := yaml.Unmarshal(doc, &h); err != nil {
		if bytes.Contains(doc, []byte(V1alpha1)) {
			return nil, fmt.Errorf("document %d: cannot parse it: %w", n, err)
		}
		return doc, nil // not ours to judge: written out as it was
	}
	switch {
	case h.isV1alpha1():
		b, err := out.convert(doc, h, o)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		return b, nil
	case strings.HasSuffix(h.Kind, "List") && len(h.Items) > 0:
		return out.list(doc, h, n, o)
	}
	return doc, nil
}

// list converts the v1alpha1 MiniClusters among a List's items.
func (out *Output) list(doc []byte, h header, n int, o Options) ([]byte, error) {
	found := false
	for _, it := range h.Items {
		var ih header
		if json.Unmarshal(it, &ih) == nil && ih.isV1alpha1() {
			found = true
		}
	}
	if !found {
		return doc, nil
	}
	var list map[string]any
	if err := yaml.Unmarshal(doc, &list); err != nil {
		return nil, fmt.Errorf("document %d: %w", n, err)
	}
	items, _ := list["items"].([]any)
	for i, it := range h.Items {
		var ih header
		if json.Unmarshal(it, &ih) != nil || !ih.isV1alpha1() {
			continue
		}
		b, err := out.convert(it, ih, o)
		if err != nil {
			return nil, fmt.Errorf("document %d, items[%d]: %w", n, i, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("document %d, items[%d]: %w", n, i, err)
		}
		items[i] = m
	}
	b, err := yaml.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("document %d: cannot write the list: %w", n, err)
	}
	return b, nil
}

// convert converts one v1alpha1 MiniCluster and checks the claim.
func (out *Output) convert(doc []byte, h header, o Options) ([]byte, error) {
	id := fmt.Sprintf("MiniCluster %q", h.Metadata.Name)
	if h.Metadata.Namespace != "" {
		id = fmt.Sprintf("MiniCluster %q", h.Metadata.Namespace+"/"+h.Metadata.Name)
	}
	conv, err := MiniCluster(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	b, err := Marshal(conv.Claim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	var warnings []string
	if o.Check != nil {
		if warnings, err = o.Check(b); err != nil {
			return nil, fmt.Errorf("%s: the v1alpha2 claim would be refused, so nothing is written (fix the v1alpha1 field of the same path and convert again): %w", id, err)
		}
	}
	for _, nt := range conv.Notes {
		out.Notes = append(out.Notes, id+": "+nt.String())
	}
	for _, w := range warnings {
		out.Notes = append(out.Notes, id+": "+w)
	}
	out.Converted++
	return b, nil
}

// Marshal writes a claim as YAML with only the fields it sets: no empty
// objects, no status, no creationTimestamp.
func Marshal(mc *v1alpha2.MiniCluster) ([]byte, error) {
	j, err := json.Marshal(mc)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the claim: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("cannot encode the claim: %w", err)
	}
	prune(m)
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the claim: %w", err)
	}
	return b, nil
}

// prune removes nulls and empty objects, bottom up. Empty strings, zeros
// and false stay: the types omit those that mean nothing, so the rest
// (connectTimeout: "", tasks: 0) were set on purpose.
func prune(m map[string]any) bool {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			if prune(t) {
				delete(m, k)
			}
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
	return len(m) == 0
}
