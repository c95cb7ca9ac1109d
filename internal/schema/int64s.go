package schema

import (
	"math"
)

// Int64s turns every float64 of obj that holds an integer into an int64, in
// place, and returns obj. Use it on objects that went through a protobuf
// Struct (a RunFunctionRequest), where every number is a float64: the API
// server decodes JSON integers as int64, and its CEL rules treat a float64
// in an integer field as an error.
func Int64s(obj map[string]any) map[string]any {
	for k, v := range obj {
		obj[k] = int64s(v)
	}
	return obj
}

func int64s(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return Int64s(t)
	case []any:
		for i := range t {
			t[i] = int64s(t[i])
		}
	case float64:
		if t == math.Trunc(t) && t >= -(1<<63) && t < 1<<63 {
			return int64(t)
		}
	}
	return v
}
