package corpus

import (
	"fmt"
)

// sizeMutations set sizes and counts.
var sizeMutations = []mutation{
	{"size", func(g *gen, o map[string]any) string {
		v := pick(g, int64(1), int64(2), int64(99999), int64(100000), int64(0), int64(-1), int64(100001))
		s := spec(o)
		s["size"] = v
		if g.chance(0.7) {
			delete(s, "maxSize")
			delete(s, "minSize")
		}
		return fmt.Sprintf("spec.size=%d", v)
	}},
	{"max-min-size", func(g *gen, o map[string]any) string {
		combos := [][3]int64{{4, 2, 0}, {2, 100000, 0}, {2, 0, 3}, {4, 0, 4}, {1, 1, 1}, {4, 4, 5}, {4, 8, 2}, {1, 100000, 1}, {100000, 100000, 100000}, {3, 0, 0}}
		c := combos[g.r.IntN(len(combos))]
		s := spec(o)
		s["size"] = c[0]
		delete(s, "maxSize")
		delete(s, "minSize")
		if c[1] != 0 || g.chance(0.5) {
			s["maxSize"] = c[1]
		}
		if c[2] != 0 || g.chance(0.5) {
			s["minSize"] = c[2]
		}
		return fmt.Sprintf("size %d, maxSize %v, minSize %v", c[0], show(s["maxSize"]), show(s["minSize"]))
	}},
	{"counts", func(g *gen, o map[string]any) string {
		f := pick(g, "tasks", "deadlineSeconds", "backoffLimit")
		v := pick(g, int64(0), int64(1), int64(-1), int64(1000), int64(2147483647), int64(2147483648), int64(1)<<53)
		spec(o)[f] = v
		return fmt.Sprintf("spec.%s=%d", f, v)
	}},
}

// structureMutations delete, retype or add fields, or make a valid change.
var structureMutations = []mutation{
	{"delete-field", func(g *gen, o map[string]any) string {
		// Under spec, or the name: without its kind it would not be a claim.
		ps := append(allPaths(spec(o), "spec"), "metadata.name")
		p := ps[g.r.IntN(len(ps))]
		setPath(o, p, nil, true)
		return "deleted " + p
	}},
	{"type-change", func(g *gen, o map[string]any) string {
		ps := allPaths(spec(o), "spec")
		if len(ps) == 0 {
			spec(o)["size"] = "four"
			return `spec.size="four"`
		}
		p := ps[g.r.IntN(len(ps))]
		var cur any
		if v, ok := lookup(o, splitPath(p)); ok {
			cur = v
		}
		var nv any
		switch cur.(type) {
		case string:
			nv = pick[any](g, int64(42), true, []any{"a"}, map[string]any{"a": "b"})
		case int64, float64:
			nv = pick[any](g, "4", "four", true, 1.5)
		case bool:
			nv = pick[any](g, "yes", int64(1), "true")
		case map[string]any:
			nv = pick[any](g, []any{}, "map", int64(0))
		case []any:
			nv = pick[any](g, map[string]any{}, "list", nil)
		default:
			nv = "x"
		}
		setPath(o, p, nv, false)
		return fmt.Sprintf("%s: %T -> %s", p, cur, show(nv))
	}},
	{"unknown-field", func(g *gen, o map[string]any) string {
		where := pick(g, "spec", "spec.flux", "spec.pod", "runner")
		var m map[string]any
		if where == "runner" {
			m = runner(o)
		} else {
			m = at(o, where)
		}
		m["notAField"] = int64(1)
		return where + ".notAField"
	}},
	{"valid-tweak", func(g *gen, o map[string]any) string {
		s := spec(o)
		switch g.r.IntN(12) {
		case 0:
			obj(runner(o), "environment")["MODE"] = "production"
			return "runner environment MODE"
		case 1:
			at(s, "pod.labels")["team"] = "hpc"
			return "pod label team=hpc"
		case 2:
			at(s, "logging")[pick(g, "quiet", "strict", "debug", "zeromq", "timed")] = true
			return "a logging switch"
		case 3:
			s["interactive"] = true
			return "interactive"
		case 4:
			s["tasks"] = int64(0)
			return "tasks 0"
		case 5:
			at(s, "flux.container")["pullAlways"] = true
			at(s, "network")["disableAffinity"] = true
			return "pullAlways, disableAffinity"
		case 6:
			f := at(s, "flux")
			f["completeWorkers"], f["noWaitSocket"] = true, true
			return "completeWorkers, noWaitSocket"
		case 7:
			at(s, "flux.scheduler")["simple"] = true
			return "scheduler simple"
		case 8:
			s["deadlineSeconds"] = int64(3600)
			s["cleanup"] = true
			return "deadlineSeconds 3600, cleanup"
		case 9:
			addSidecar(o, map[string]any{"name": "helper", "image": "busybox", "command": "sleep infinity"})
			return "a plain sidecar"
		case 10:
			at(s, "flux")["disableSocket"] = true
			return "disableSocket"
		default:
			obj(runner(o), "volumes")["scratch"] = map[string]any{"emptyDir": true, "path": "/scratch"}
			return "an emptyDir at /scratch"
		}
	}},
}
