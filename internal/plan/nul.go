package plan

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// checkStrings refuses NUL bytes anywhere in the spec: they cannot reach a
// script, a file or a command line intact.
func checkStrings(mc *v1alpha2.MiniCluster) field.ErrorList {
	var errs field.ErrorList
	walkStrings(reflect.ValueOf(&mc.Spec).Elem(), field.NewPath("spec"), func(p *field.Path, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			errs = append(errs, field.Invalid(p, "<contains NUL>", "must not contain a NUL byte (\\0): remove it"))
		}
	})
	return errs
}

// walkStrings calls fn for every string, and every map key, under v with
// its JSON field path.
func walkStrings(v reflect.Value, p *field.Path, fn func(*field.Path, string)) {
	switch v.Kind() {
	case reflect.String:
		fn(p, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), p, fn)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			walkStrings(v.Field(i), p.Child(name), fn)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walkStrings(v.Index(i), p.Index(i), fn)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			fn(p.Key(k.String()), k.String())
			walkStrings(v.MapIndex(k), p.Key(k.String()), fn)
		}
	}
}
