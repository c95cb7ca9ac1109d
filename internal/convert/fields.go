package convert

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	intOrString = reflect.TypeFor[intstr.IntOrString]()
	anyType     = reflect.TypeFor[any]()
)

// unknownFields returns the paths of the keys of v (a decoded JSON value)
// that type t has no field for, in kubectl's notation
// (spec.containers[0].cores), sorted.
func unknownFields(v any, t reflect.Type) []string {
	var out []string
	walk(v, t, "", &out)
	sort.Strings(out)
	return out
}

func walk(v any, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == intOrString || t == anyType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return // a type error: decoding reports it
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			walk(m[k], f.Type, join(path, k), out)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			walk(m[k], t.Elem(), join(path, k), out)
		}
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range s {
			walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields maps the JSON names of t's fields to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f
	}
	return out
}

// fieldPaths lists every field path of t, with maps as <key> and lists as
// [] (spec.containers[].volumes.<name>.path); a path whose value is a free
// map or a quantity ends there.
func fieldPaths(t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if path != "" {
		*out = append(*out, path)
	}
	switch {
	case t == intOrString || t == anyType:
	case t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			fieldPaths(fields[name].Type, join(path, name), out)
		}
	case t.Kind() == reflect.Map && structLike(t.Elem()):
		fieldPaths(t.Elem(), join(path, "<name>"), out)
	case t.Kind() == reflect.Slice && structLike(t.Elem()):
		fieldPaths(t.Elem(), path+"[]", out)
	}
}

func structLike(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != intOrString
}
