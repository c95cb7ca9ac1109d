package corpus

import (
	"fmt"
	"strings"
)

// scriptMutations put huge or odd text (quotes, NUL bytes) in hooks, commands
// and lifecycle handlers.
var scriptMutations = []mutation{
	{"huge-hooks", func(g *gen, o map[string]any) string {
		total := pick(g, 900*1024, 1024*1024+1, 1200*1024, 1400*1024)
		per := 60 * 1024
		r := runner(o)
		delete(r, "command")
		cmds := obj(r, "commands")
		left := total
		for _, k := range []string{"init", "pre", "brokerPre", "workerPre", "post", "script"} {
			if left <= 0 {
				break
			}
			n := min(per, left)
			cmds[k] = g.text(n)
			left -= n
		}
		for i := 0; left > 0 && i < 10; i++ {
			n := min(per, left)
			c := map[string]any{"name": fmt.Sprintf("hook-%d", i), "command": g.text(n)}
			left -= n
			if left > 0 {
				m := min(per, left)
				c["commands"] = map[string]any{"servicePre": g.text(m)}
				left -= m
			}
			addSidecar(o, c)
		}
		return fmt.Sprintf("hooks and sidecar commands of %d KiB in total", total/1024)
	}},
	{"hooks-odd", func(g *gen, o map[string]any) string {
		k := pick(g, "init", "pre", "brokerPre", "workerPre", "post", "prefix", "servicePre")
		v := pick(g, append([]string{"cat <<EOF\nunterminated", "exit 1", "line\r\nwith crlf", strings.Repeat("y", 10000), "set -e\nfalse", "a\x00b"}, quoted...)...)
		c, p := g.anyContainer(o)
		obj(c, "commands")[k] = v
		return fmt.Sprintf("%s.commands.%s=%s", p, k, show(v))
	}},
	{"lifecycle", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		k := pick(g, "postStartExec", "preStopExec")
		v := pick(g, `echo "started`, "a\x00b", strings.Repeat("z", 4096), "", "flux shutdown --quiet")
		obj(c, "lifeCycle")[k] = v
		return fmt.Sprintf("%s.lifeCycle.%s=%s", p, k, show(v))
	}},
	{"nul-byte", func(g *gen, o map[string]any) string {
		v := "a\x00b"
		switch g.r.IntN(9) {
		case 0:
			runner(o)["command"] = "echo " + v
			return "runner command with NUL"
		case 1:
			runner(o)["workingDir"] = "/wd" + v
			return "runner workingDir with NUL"
		case 2:
			at(spec(o), "flux")["submitCommand"] = "flux submit " + v
			return "flux.submitCommand with NUL"
		case 3:
			at(spec(o), "flux")["brokerConfig"] = "[access]\n# " + v + "\n"
			return "flux.brokerConfig with NUL"
		case 4:
			at(spec(o), "flux.bursting")["hostlist"] = "h" + v + "-[0-1]"
			return "flux.bursting.hostlist with NUL"
		case 5:
			at(spec(o), "archive")["path"] = "/state/" + v
			return "archive.path with NUL"
		case 6:
			runner(o)["logs"] = "/tmp/" + v
			return "runner logs with NUL"
		case 7:
			at(spec(o), "flux")["curveCert"] = v
			return "flux.curveCert with NUL"
		default:
			at(spec(o), "flux")["optionFlags"] = "-o " + v
			return "flux.optionFlags with NUL"
		}
	}},
}
