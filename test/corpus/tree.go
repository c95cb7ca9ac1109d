package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// gen holds the generator's random source and the helpers mutations share.
// Every choice goes through r, and maps are walked in sorted order, so a
// seed always gives the same claims.
type gen struct {
	r *rand.Rand
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	alnum  = lower + "0123456789"
	labelc = alnum + "-"
)

// label returns a random DNS label of n characters (n >= 1): a lowercase
// letter first, a letter or digit last, and some hyphens between.
func (g *gen) label(n int) string {
	b := make([]byte, n)
	for i := range b {
		switch i {
		case 0:
			b[i] = lower[g.r.IntN(len(lower))]
		case n - 1:
			b[i] = alnum[g.r.IntN(len(alnum))]
		default:
			b[i] = labelc[g.r.IntN(len(labelc))]
		}
	}
	return string(b)
}

// text returns n bytes of shell-harmless text in lines of about 80.
func (g *gen) text(n int) string {
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		line := fmt.Sprintf("echo %s", g.label(1+g.r.IntN(70)))
		if b.Len()+len(line)+1 > n {
			line = "#" + strings.Repeat("x", max(0, n-b.Len()-2))
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

// show formats a value for a mutation's description, short.
func show(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return fmt.Sprintf("%q…(%d bytes)", v[:16], len(v))
		}
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	default:
		s := fmt.Sprintf("%v", v)
		if len(s) > 60 {
			s = s[:40] + "…"
		}
		return s
	}
}

// obj returns m[k] as a map, replacing whatever else is there by a new map.
func obj(m map[string]any, k string) map[string]any {
	if c, ok := m[k].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[k] = c
	return c
}

// at returns the map at a dotted path under m, creating maps on the way.
func at(m map[string]any, path string) map[string]any {
	for _, k := range strings.Split(path, ".") {
		m = obj(m, k)
	}
	return m
}

func spec(o map[string]any) map[string]any { return obj(o, "spec") }

func name(o map[string]any) string {
	if n, ok := obj(o, "metadata")["name"].(string); ok && n != "" {
		return n
	}
	return "flux-sample"
}

func setName(o map[string]any, n string) { obj(o, "metadata")["name"] = n }

// size is spec.size when it is a number, else the default 1.
func size(o map[string]any) int64 {
	if n, ok := spec(o)["size"].(int64); ok {
		return n
	}
	return 1
}

// containers returns spec.containers as maps, making sure there is at least
// one (an earlier mutation may have deleted or retyped them).
func containers(o map[string]any) []any {
	s := spec(o)
	cs, _ := s["containers"].([]any)
	var out []any
	for _, c := range cs {
		if _, ok := c.(map[string]any); ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = []any{map[string]any{"image": "rockylinux:9", "command": "echo hello world"}}
	}
	s["containers"] = out
	return out
}

// runner returns the Flux runner container: the one with runFlux: true, or
// the first.
func runner(o map[string]any) map[string]any {
	cs := containers(o)
	for _, c := range cs {
		if c.(map[string]any)["runFlux"] == true {
			return c.(map[string]any)
		}
	}
	return cs[0].(map[string]any)
}

// runnerIndex is the runner's position in spec.containers.
func runnerIndex(o map[string]any) int {
	for i, c := range containers(o) {
		if c.(map[string]any)["runFlux"] == true {
			return i
		}
	}
	return 0
}

// addSidecar appends a container that does not run Flux, marking the runner
// runFlux: true as a pod with several containers needs.
func addSidecar(o map[string]any, c map[string]any) int {
	r := runner(o)
	r["runFlux"] = true
	if _, ok := c["image"]; !ok {
		c["image"] = "nginx"
	}
	cs := append(containers(o), c)
	spec(o)["containers"] = cs
	return len(cs) - 1
}

// anyContainer is a random container of the claim (runner or sidecar) and
// its path.
func (g *gen) anyContainer(o map[string]any) (map[string]any, string) {
	cs := containers(o)
	i := g.r.IntN(len(cs))
	return cs[i].(map[string]any), fmt.Sprintf("spec.containers[%d]", i)
}

// setBursting makes the claim the root of a burst (clusters), dropping what
// would conflict.
func setClusters(o map[string]any, clusters []any) {
	b := at(spec(o), "flux.bursting")
	delete(b, "hostlist")
	delete(b, "leadBroker")
	delete(at(spec(o), "flux"), "topology")
	b["clusters"] = clusters
}
