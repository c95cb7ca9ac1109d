package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	yamlv3 "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// DuplicateFields returns a warning for every key given twice in a mapping
// of the YAML (or JSON) stream b, in the API server's words (`duplicate
// field "spec.interactive"`, what `kubectl create --raw` shows with
// fieldValidation=Warn). kubectl apply itself keeps the last value
// without a word, since it converts YAML to JSON before sending it; we
// warn because the earlier value is dropped silently otherwise. A stream
// that does not parse gives no warnings: ParseObjects reports it.
func DuplicateFields(b []byte) []string {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return out
		}
		var n yamlv3.Node
		if err := yamlv3.Unmarshal(doc, &n); err != nil {
			continue
		}
		out = append(out, duplicates(&n, "")...)
	}
}

// duplicates walks n, whose field path is path ("" for the document).
func duplicates(n *yamlv3.Node, path string) []string {
	var out []string
	switch n.Kind {
	case yamlv3.DocumentNode:
		for _, c := range n.Content {
			out = append(out, duplicates(c, path)...)
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			out = append(out, duplicates(c, path+"["+strconv.Itoa(i)+"]")...)
		}
	case yamlv3.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			p := k
			if path != "" {
				p = path + "." + k
			}
			if seen[k] {
				out = append(out, fmt.Sprintf("duplicate field %q", p))
			}
			seen[k] = true
			out = append(out, duplicates(n.Content[i+1], p)...)
		}
	}
	return out
}
