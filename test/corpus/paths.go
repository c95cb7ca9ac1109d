package corpus

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pathRE finds field paths in messages: metadata.… or spec.… followed by
// .field and [index-or-key] segments, the form of field.Path.String() and of
// the API server's messages ("spec.containers[0].volumes[data].path",
// "spec.pod.labels[example.com/team]").
var pathRE = regexp.MustCompile(`\b(?:metadata|spec)(?:\.[A-Za-z0-9_/-]+|\[[^\]\n]*\])+`)

// FieldPaths returns the field paths named in msg, in order, each once.
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

// segment is one step of a field path: a field name (dotted) or the
// content of [...].
type segment struct {
	s       string
	bracket bool
}

func splitPath(p string) []segment {
	var out []segment
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			i++
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return append(out, segment{s: p[i+1:], bracket: true})
			}
			out = append(out, segment{s: p[i+1 : i+j], bracket: true})
			i += j + 1
		default:
			j := strings.IndexAny(p[i:], ".[")
			if j < 0 {
				j = len(p) - i
			}
			out = append(out, segment{s: p[i : i+j]})
			i += j
		}
	}
	return out
}

// Lookup tells whether the field path p exists in obj. Map keys may appear
// as [key] or as dotted names, also when the key itself contains dots
// (spec.pod.labels.example.com/team); list elements only as [index].
func Lookup(obj map[string]any, p string) bool {
	_, ok := lookup(obj, splitPath(p))
	return ok
}

func lookup(v any, segs []segment) (any, bool) {
	if len(segs) == 0 {
		return v, true
	}
	switch v := v.(type) {
	case map[string]any:
		if segs[0].bracket {
			e, ok := v[segs[0].s]
			if !ok {
				return nil, false
			}
			return lookup(e, segs[1:])
		}
		// A dotted key may span several dotted segments.
		key := ""
		for i := 0; i < len(segs) && !segs[i].bracket; i++ {
			if i > 0 {
				key += "."
			}
			key += segs[i].s
			if e, ok := v[key]; ok {
				if r, ok := lookup(e, segs[i+1:]); ok {
					return r, true
				}
			}
		}
		return nil, false
	case []any:
		if !segs[0].bracket {
			return nil, false
		}
		i, err := strconv.Atoi(segs[0].s)
		if err != nil || i < 0 || i >= len(v) {
			return nil, false
		}
		return lookup(v[i], segs[1:])
	default:
		return nil, false
	}
}

// parent is p without its last segment ("" for a one-segment path).
func parent(p string) string {
	segs := splitPath(p)
	if len(segs) <= 1 {
		return ""
	}
	var b strings.Builder
	for i, s := range segs[:len(segs)-1] {
		switch {
		case s.bracket:
			b.WriteString("[" + s.s + "]")
		case i > 0:
			b.WriteString("." + s.s)
		default:
			b.WriteString(s.s)
		}
	}
	return b.String()
}

// PresentPath returns the first field path named in msg that the claim
// has: the path exists in obj; or its parent exists and the message calls
// it a required value ("<path>: Required value") or a duplicate one (a
// defaulted value, e.g. an emptyDir's default path); or the message says
// "spec: Required value" of a claim without spec. ok is false when msg
// names no such path: an invalid value of a field the claim does not have
// blames a field the user did not write.
func PresentPath(obj map[string]any, msg string) (path string, ok bool) {
	for _, loc := range pathRE.FindAllStringIndex(msg, -1) {
		p := msg[loc[0]:loc[1]]
		if Lookup(obj, p) {
			return p, true
		}
		rest := msg[loc[1]:]
		if (strings.HasPrefix(rest, requiredSuffix) || strings.HasPrefix(rest, duplicateSuffix)) && Lookup(obj, parent(p)) {
			return p, true
		}
	}
	if m := requiredRootRE.FindStringSubmatch(msg); m != nil {
		if _, has := obj[m[1]]; !has {
			return m[1], true
		}
	}
	return "", false
}

const (
	requiredSuffix  = ": Required value"
	duplicateSuffix = ": Duplicate value"
)

var requiredRootRE = regexp.MustCompile(`\b(spec|metadata)` + requiredSuffix)

// Generalize replaces every [index] and [key] of a field path by [*], to
// group paths by the field they name.
func Generalize(p string) string {
	return bracketRE.ReplaceAllString(p, "[*]")
}

var bracketRE = regexp.MustCompile(`\[[^\]]*\]`)

// leafPaths lists the paths of every value under root (maps and lists
// included), sorted, as segments for setting and as strings for messages.
func allPaths(root any, prefix string) []string {
	var out []string
	var walk func(v any, p string)
	walk = func(v any, p string) {
		if p != "" {
			out = append(out, p)
		}
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], joinKey(p, k))
			}
		case []any:
			for i, e := range v {
				walk(e, p+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(root, prefix)
	return out
}

// joinKey appends a map key to a path: as .key when it is a plain name, as
// [key] otherwise.
func joinKey(p, k string) string {
	if plainKeyRE.MatchString(k) {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	return p + "[" + k + "]"
}

var plainKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// setPath replaces (or, with del, deletes) the value at path p in obj.
// It reports whether the path existed.
func setPath(obj map[string]any, p string, v any, del bool) bool {
	segs := splitPath(p)
	if len(segs) == 0 {
		return false
	}
	var cur any = obj
	for i, s := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			e, ok := c[s.s]
			if !ok {
				return false
			}
			if last {
				if del {
					delete(c, s.s)
				} else {
					c[s.s] = v
				}
				return true
			}
			cur = e
		case []any:
			idx, err := strconv.Atoi(s.s)
			if err != nil || idx < 0 || idx >= len(c) {
				return false
			}
			if last {
				if del {
					// Deleting a list element: replace the list in its parent.
					nl := append(append([]any{}, c[:idx]...), c[idx+1:]...)
					return setPath(obj, parent(p), nl, false)
				}
				c[idx] = v
				return true
			}
			cur = c[idx]
		default:
			return false
		}
	}
	return false
}
