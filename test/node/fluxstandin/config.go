package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// loadConfig reads the configuration as flux_conf_parse does: a directory
// means every *.toml in it, in glob (sorted) order, merged table by table; a
// file is read alone. Errors read "Config file error: ...", as the broker
// logs them.
func loadConfig(path string) (map[string]any, error) {
	wrap := func(format string, args ...any) error {
		return fmt.Errorf("Config file error: "+format, args...)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, wrap("%s: %s", path, errnoText(err))
	}
	files := []string{path}
	if st.IsDir() {
		files, _ = filepath.Glob(filepath.Join(path, "*.toml"))
		sort.Strings(files)
	}
	conf := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, wrap("%s: %s", f, errnoText(err))
		}
		var obj map[string]any
		if err := toml.Unmarshal(b, &obj); err != nil {
			var de *toml.DecodeError
			if errors.As(err, &de) {
				row, _ := de.Position()
				return nil, wrap("%s:%d: %s", f, row, de.Error())
			}
			return nil, wrap("%s: %s", f, err.Error())
		}
		mergeRecursive(conf, obj)
	}
	return conf, nil
}

// mergeRecursive is json_object_update_recursive: tables merge, any other
// value of a later file replaces the earlier one.
func mergeRecursive(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeRecursive(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// jsonType is the Jansson type name of a TOML value once flux-core's tomltk
// has converted it to JSON (a TOML date or time becomes an object).
func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case int64, int:
		return "integer"
	case float64:
		return "real"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// field is one key of a Jansson unpack format: "s?s" is an optional string.
type field struct {
	key      string
	kind     byte // 's' string, 'i' integer, 'b' boolean, 'o' any value
	required bool
}

// unpack checks obj the way json_unpack_ex does with a strict ("!")
// format: keys in format order, each of its type, then no key left over.
// The messages are Jansson's.
func unpack(obj any, strict bool, fields ...field) (map[string]any, error) {
	m, ok := obj.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Expected object, got %s", jsonType(obj))
	}
	for _, f := range fields {
		v, present := m[f.key]
		if !present {
			if f.required {
				return nil, fmt.Errorf("Object item not found: %s", f.key)
			}
			continue
		}
		want := ""
		switch f.kind {
		case 's':
			if _, ok := v.(string); !ok {
				want = "string"
			}
		case 'i':
			if _, ok := v.(int64); !ok {
				want = "integer"
			}
		case 'b':
			if _, ok := v.(bool); !ok {
				want = "true or false"
			}
		}
		if want != "" {
			return nil, fmt.Errorf("Expected %s, got %s", want, jsonType(v))
		}
	}
	if strict {
		known := map[string]bool{}
		for _, f := range fields {
			known[f.key] = true
		}
		var left []string
		for k := range m {
			if !known[k] {
				left = append(left, k)
			}
		}
		if len(left) > 0 {
			sort.Strings(left)
			return nil, fmt.Errorf("%d object item(s) left unpacked: %s", len(left), strings.Join(left, ", "))
		}
	}
	return m, nil
}

// tableString reads [table] key as a string, with the error the Flux module
// that reads it gives.
func tableString(conf map[string]any, table, key string) (string, error) {
	t, ok := conf[table]
	if !ok {
		return "", nil
	}
	m, err := unpack(t, false, field{key, 's', false})
	if err != nil {
		return "", fmt.Errorf("Config file error [%s]: %s", table, err)
	}
	s, _ := m[key].(string)
	return s, nil
}
