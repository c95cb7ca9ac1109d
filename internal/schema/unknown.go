package schema

import (
	"sort"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
)

// Unknown returns the paths of the fields of obj the schema does not know,
// sorted: what the API server's pruning would drop, and what it reports as
// `unknown field "<path>"` with kubectl's default --validate=strict
// (metadata fields included). obj is not changed. Objects of other kinds
// have no unknown fields.
func (s *Schema) Unknown(obj map[string]any) []string {
	c := s.forKind(obj)
	if c == nil {
		return nil
	}
	return prune(runtime.DeepCopyJSON(obj), c)
}

func prune(obj map[string]any, c *crd) []string {
	var paths []string
	// ObjectMeta is decoded strictly and separately, as the API server's
	// unstructuredSchemaCoercer does (which then writes the typed ObjectMeta
	// back, without the unknown fields).
	if _, _, meta, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true}); err == nil {
		for _, p := range meta {
			remove(obj, p)
		}
		paths = append(paths, meta...)
	}
	paths = append(paths, pruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	sort.Strings(paths)
	return paths
}

// remove deletes the field at path (a.b[0].c) from obj, if it is there.
func remove(obj map[string]any, path string) {
	var cur any = obj
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name, rest, _ := strings.Cut(part, "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if i == len(parts)-1 && rest == "" {
			delete(m, name)
			return
		}
		cur = m[name]
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			n, err := strconv.Atoi(idx)
			l, ok := cur.([]any)
			if err != nil || !ok || n < 0 || n >= len(l) {
				return
			}
			cur = l[n]
		}
	}
}
