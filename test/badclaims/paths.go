package badclaims

import (
	"regexp"
	"strconv"
	"strings"
)

// pathRE finds field paths in a message: metadata.… or spec.… followed by
// .field and [index-or-key] steps, as field.Path.String() writes them and as
// the API server writes map keys (spec.containers[0].volumes.data.path).
var pathRE = regexp.MustCompile(`\b(?:metadata|spec)(?:\.[A-Za-z0-9_/-]+|\[[^\]\n]*\])+`)

// FieldPaths returns the field paths a message names, in order, each once.
func FieldPaths(msg string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pathRE.FindAllString(msg, -1) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// pathStep is one step of a field path: a name (between dots) or the
// content of [...].
type pathStep struct {
	s       string
	bracket bool
}

func splitFieldPath(p string) []pathStep {
	var out []pathStep
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			i++
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return append(out, pathStep{s: p[i+1:], bracket: true})
			}
			out = append(out, pathStep{s: p[i+1 : i+j], bracket: true})
			i += j + 1
		default:
			j := strings.IndexAny(p[i:], ".[")
			if j < 0 {
				j = len(p) - i
			}
			out = append(out, pathStep{s: p[i : i+j]})
			i += j
		}
	}
	return out
}

// InClaim tells whether the field path p names something in claim: the
// field itself, or, for a field the message says is missing, its parent.
// Map keys may be written [key] or as dotted names, also when the key has
// dots of its own (spec.pod.labels.example.com/team).
func InClaim(claim map[string]any, p string) bool {
	steps := splitFieldPath(p)
	if len(steps) == 0 {
		return false
	}
	if lookup(claim, steps) {
		return true
	}
	return len(steps) > 1 && lookup(claim, steps[:len(steps)-1])
}

func lookup(v any, steps []pathStep) bool {
	if len(steps) == 0 {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if steps[0].bracket {
			e, ok := v[steps[0].s]
			return ok && lookup(e, steps[1:])
		}
		// A dotted key may span several steps.
		key := ""
		for i := 0; i < len(steps) && !steps[i].bracket; i++ {
			if i > 0 {
				key += "."
			}
			key += steps[i].s
			if e, ok := v[key]; ok && lookup(e, steps[i+1:]) {
				return true
			}
		}
		return false
	case []any:
		if !steps[0].bracket {
			return false
		}
		i, err := strconv.Atoi(steps[0].s)
		return err == nil && i >= 0 && i < len(v) && lookup(v[i], steps[1:])
	default:
		return false
	}
}
