package corpus

import (
	"fmt"
	"strings"
)

// nameMutations change metadata.name and the names derived from it or
// colliding with it: headless Service, containers, services, ports.
var nameMutations = []mutation{
	{"long-name", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 40, 50, 53, 55, 56, 57, 58, 59, 60, 61, 62, 63))
		setName(o, n)
		return fmt.Sprintf("metadata.name is %d chars", len(n))
	}},
	{"long-name-lead-broker", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 48, 50, 51, 52, 53, 55, 58, 61, 63))
		setName(o, n)
		setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
		return fmt.Sprintf("metadata.name is %d chars, flux.bursting.clusters set (<name>-lead-broker Service)", len(n))
	}},
	{"long-name-size", func(g *gen, o map[string]any) string {
		n := g.label(pick(g, 50, 55, 57, 58, 59, 60, 61))
		sz := pick(g, int64(10), int64(100), int64(1000), int64(10000), int64(100000))
		setName(o, n)
		s := spec(o)
		s["size"] = sz
		delete(s, "maxSize")
		delete(s, "minSize")
		return fmt.Sprintf("metadata.name is %d chars, size %d (hostname <name>-%d)", len(n), sz, sz-1)
	}},
	{"name-odd", func(g *gen, o map[string]any) string {
		n := pick(g, "1flux", "0-sample", "9", "flux.sample", "flux_sample", "Flux-Sample", "flux-", "-flux", "a",
			"flux--sample", "a.b.c", strings.Repeat("a", 64), strings.Repeat("a", 100)+".example")
		setName(o, n)
		return "metadata.name=" + show(n)
	}},
	{"headless-name", func(g *gen, o map[string]any) string {
		nw := at(spec(o), "network")
		switch g.r.IntN(7) {
		case 0:
			addSidecar(o, map[string]any{"name": "web", "ports": []any{int64(8080)}, "command": "sleep infinity"})
			nw["headlessName"] = "web"
			return `headlessName "web" = a sidecar with ports`
		case 1:
			setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
			nw["headlessName"] = name(o) + "-lead-broker"
			return "headlessName <name>-lead-broker, clusters set"
		case 2:
			nw["headlessName"] = g.label(63)
			return "headlessName 63 chars"
		case 3:
			nw["headlessName"] = pick(g, "1net", "0", "9-flux")
			return "headlessName starts with a digit: " + show(nw["headlessName"])
		case 4:
			nw["headlessName"] = pick(g, "flux-view", "flux-entrypoint")
			return "headlessName " + show(nw["headlessName"])
		case 5:
			spec(o)["services"] = []any{map[string]any{"name": "db", "image": "postgres", "ports": []any{int64(5432)}}}
			nw["headlessName"] = name(o) + "-services"
			return "headlessName <name>-services, services set"
		default:
			nw["headlessName"] = name(o)
			return "headlessName = metadata.name"
		}
	}},
	{"sidecar-lead-broker", func(g *gen, o map[string]any) string {
		setClusters(o, []any{map[string]any{"name": "burst-0", "size": int64(2)}})
		i := addSidecar(o, map[string]any{"name": name(o) + "-lead-broker", "ports": []any{pick(g, int64(8050), int64(80))}, "command": "sleep infinity"})
		return fmt.Sprintf("spec.containers[%d] named <name>-lead-broker with ports, clusters set", i)
	}},
	{"sidecar-name", func(g *gen, o map[string]any) string {
		var n string
		switch g.r.IntN(6) {
		case 0:
			n = name(o)
		case 1:
			n = "flux-view"
		case 2:
			if hl, ok := at(spec(o), "network")["headlessName"].(string); ok {
				n = hl
			} else {
				n = name(o)
			}
		case 3:
			n = g.label(63)
		default:
			n = pick(g, oddNames...)
		}
		c := map[string]any{"name": n, "command": "sleep infinity"}
		if g.chance(0.6) {
			c["ports"] = pick(g, []any{int64(80)}, []any{int64(80), int64(80)}, []any{int64(8050)}, []any{int64(1), int64(65535)})
		}
		i := addSidecar(o, c)
		desc := fmt.Sprintf("spec.containers[%d] named %s ports %s", i, show(n), show(c["ports"]))
		if g.chance(0.3) {
			j := addSidecar(o, map[string]any{"name": n, "command": "sleep 1"})
			desc += fmt.Sprintf(", and spec.containers[%d] with the same name", j)
		}
		return desc
	}},
	{"runner-ports", func(g *gen, o map[string]any) string {
		p := pick(g, []any{int64(8050)}, []any{int64(80)}, []any{int64(80), int64(443)}, []any{int64(1), int64(65535)}, []any{int64(0)}, []any{int64(65536)})
		runner(o)["ports"] = p
		return fmt.Sprintf("spec.containers[%d].ports=%v", runnerIndex(o), p)
	}},
	{"services", func(g *gen, o map[string]any) string {
		n := pick(g, "nginx", name(o), name(o)+"-services", "flux-view", "8080-db", g.label(63), "Nginx")
		c := map[string]any{"name": n, "image": "nginx"}
		if g.chance(0.6) {
			c["ports"] = pick(g, []any{int64(80)}, []any{int64(80), int64(80)}, []any{int64(8050)})
		}
		extra := ""
		switch g.r.IntN(5) {
		case 0:
			c["commands"] = map[string]any{"pre": "echo pre"}
			extra = " commands.pre"
		case 1:
			c["runFlux"] = true
			extra = " runFlux"
		case 2:
			c["volumes"] = map[string]any{"data": map[string]any{"emptyDir": true, "path": pick(g, "/data", "/mnt/flux", "data")}}
			extra = " with a volume"
		}
		spec(o)["services"] = []any{c}
		return fmt.Sprintf("spec.services[0] named %s ports %s%s", show(n), show(c["ports"]), extra)
	}},
}
