package corpus

import (
	"fmt"
	"strings"
)

// fluxMutations change the Flux configuration: broker config, hostlists,
// bursting, topology, submit and container options.
var fluxMutations = []mutation{
	{"broker-config", func(g *gen, o map[string]any) string {
		v := pick(g,
			"[bootstrap\nhosts = [",
			"key = ",
			"= 1",
			"not toml at all {{}}",
			"[bootstrap]\nfoo = 1\n",
			"[bootstrap]\nhosts = 5\n",
			"[access]\nallow-guest-user = true\n",
			"[resource]\npath = \"/etc/flux/R\"\n[resource]\npath = \"x\"\n",
			"[bootstrap]\ncurve_cert = \"/mnt/curve/curve.cert\"\nhosts = [{host=\"Bad_Host\"}]\n",
			"[bootstrap]\ndefault_port = \"8050\"\nenable_ipv6 = 1\n",
			"[bootstrap]\nhosts = [{bind=\"tcp://eth0:%p\"}]\n",
			bootstrapHosts(o, "{host=\"login\"}, {host=\""+hostRange(o)+"\"}"),
			bootstrapHosts(o, "{host=\""+hostRange(o)+"\"}, {host=\"login\", parent=\""+name(o)+"-0\"}"),
			"[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\nhosts = [{host=\""+hostRange(o)+"\"}]\n",
		)
		at(spec(o), "flux")["brokerConfig"] = v
		return "spec.flux.brokerConfig=" + show(v)
	}},
	{"hostlist", func(g *gen, o map[string]any) string {
		n := name(o)
		v := pick(g,
			n+"-[0-", "a,,b", "UPPER-[0-3]", "host-[3-1]", " ", n+"-[0-3]x", n+"-[0-3],burst-[0-99999]",
			"h-[0-1000000]", "a_b-[0-1]", fmt.Sprintf("%s-[0-%d]", n, size(o)-1), "h-[0-1],h-[0-1]", "h-[a-c]",
			fmt.Sprintf("%s-[0-%d],cloud-[001-003]", n, size(o)-1), strings.Repeat("h", 64)+"-[0-1]",
			"login,"+hostRange(o), hostRange(o)+",node-[0-299]",
		)
		b := at(spec(o), "flux.bursting")
		delete(b, "clusters")
		delete(b, "leadBroker")
		b["hostlist"] = v
		return "spec.flux.bursting.hostlist=" + show(v)
	}},
	{"lead-broker-without-clusters", func(g *gen, o map[string]any) string {
		b := at(spec(o), "flux.bursting")
		delete(b, "clusters")
		delete(b, "hostlist")
		delete(at(spec(o), "flux"), "topology")
		b["leadBroker"] = map[string]any{"address": "10.1.2.3", "name": pick(g, "root", name(o)), "size": pick(g, int64(1), int64(4)), "port": int64(30093)}
		return "spec.flux.bursting.leadBroker without clusters: " + show(b["leadBroker"])
	}},
	{"lead-broker-odd", func(g *gen, o map[string]any) string {
		lb := map[string]any{"address": "10.1.2.3", "name": "root", "size": int64(4), "port": int64(30093)}
		f := pick(g, "address", "name", "size", "port", "missing")
		switch f {
		case "address":
			lb[f] = pick(g, "not an ip!", "", "::1", "10.0.0.1:8050", g.label(63)+"."+g.label(63)+".example.com", "UPPER.example.com")
		case "name":
			lb[f] = pick(g, name(o), "Root", "", g.label(63), "1root")
		case "size":
			lb[f] = pick(g, int64(0), int64(100000), int64(-1))
		case "port":
			lb[f] = pick(g, int64(0), int64(65536), int64(1))
		default:
			delete(lb, pick(g, "address", "name", "size"))
		}
		// A burst cluster is one of the root's clusters.
		setClusters(o, []any{map[string]any{"name": name(o), "size": size(o)}})
		at(spec(o), "flux.bursting")["leadBroker"] = lb
		return fmt.Sprintf("spec.flux.bursting.leadBroker.%s odd: %s", f, show(lb))
	}},
	{"bursting-clusters", func(g *gen, o map[string]any) string {
		var cl []any
		desc := ""
		switch g.r.IntN(6) {
		case 0:
			cl = []any{map[string]any{"name": "burst", "size": int64(2)}, map[string]any{"name": "burst", "size": int64(2)}}
			desc = "duplicate cluster names"
		case 1:
			cl = []any{map[string]any{"name": name(o), "size": int64(2)}}
			desc = "a cluster named like the root"
		case 2:
			n := g.label(pick(g, 60, 61, 62, 63))
			cl = []any{map[string]any{"name": n, "size": pick(g, int64(10), int64(1000))}}
			desc = fmt.Sprintf("cluster name of %d chars", len(n))
		case 3:
			cl = []any{map[string]any{"name": "burst-0", "size": pick(g, int64(0), int64(100000))}}
			desc = "cluster size at a bound"
		case 4:
			for i := 0; i < 64; i++ {
				cl = append(cl, map[string]any{"name": fmt.Sprintf("burst-%d", i), "size": int64(100000)})
			}
			desc = "64 clusters of 100000"
		default:
			cl = []any{map[string]any{"size": int64(2)}, map[string]any{}}
			desc = "clusters without names"
		}
		setClusters(o, cl)
		if g.chance(0.3) {
			at(spec(o), "flux.bursting.leadBrokerService")["nodePort"] = pick(g, int64(30093), int64(1), int64(80), int64(32767), int64(32768), int64(65535))
			desc += fmt.Sprintf(", leadBrokerService.nodePort=%v", at(spec(o), "flux.bursting.leadBrokerService")["nodePort"])
		}
		return "spec.flux.bursting.clusters: " + desc
	}},
	{"minimal-service-topology", func(g *gen, o map[string]any) string {
		f := at(spec(o), "flux")
		f["minimalService"] = true
		s := spec(o)
		sz := pick(g, int64(2), int64(4), int64(33), int64(257), int64(258), int64(1000))
		s["size"] = sz
		delete(s, "maxSize")
		delete(s, "minSize")
		desc := fmt.Sprintf("minimalService, size %d", sz)
		if g.chance(0.7) {
			f["topology"] = pick(g, "kary:2", "binomial", "mincrit", "kary:0", "kary:1", "custom", "kary:300")
			desc += ", topology " + show(f["topology"])
		}
		return desc
	}},
	{"topology", func(g *gen, o map[string]any) string {
		t := pick(g, "kary:", "kary:-1", "tree", "binomial", "mincrit:2", "kary:2", "KARY:2", "kary:99999999999")
		at(spec(o), "flux")["topology"] = t
		return "spec.flux.topology=" + show(t)
	}},
	{"unbalanced-quotes", func(g *gen, o map[string]any) string {
		v := pick(g, quoted...)
		f := pick(g, "command", "optionFlags", "submitCommand", "wrap", "prefix", "workingDir", "logs", "archive")
		switch f {
		case "command":
			r := runner(o)
			r["command"] = v
			delete(obj(r, "commands"), "script")
		case "prefix":
			obj(runner(o), "commands")["prefix"] = v
		case "workingDir", "logs":
			runner(o)[f] = "/wd/" + v
		case "archive":
			at(spec(o), "archive")["path"] = "/state/" + v
		default:
			at(spec(o), "flux")[f] = v
		}
		return fmt.Sprintf("%s=%s", f, show(v))
	}},
	{"batch", func(g *gen, o map[string]any) string {
		r := runner(o)
		delete(r, "launcher")
		delete(obj(r, "commands"), "script")
		r["batch"] = true
		switch g.r.IntN(6) {
		case 0:
			r["command"] = "echo \"one\nflux run 'two\n\n#flux: -N 2\necho three"
			return "batch lines with quotes, empty lines and #flux:"
		case 1:
			var b strings.Builder
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(&b, "echo line %d\n", i)
			}
			r["command"] = b.String()
			return "2000 batch lines"
		case 2:
			r["command"] = "echo a\r\necho b\r\n"
			return "batch lines with CRLF"
		case 3:
			r["batchRaw"] = true
			r["command"] = "#!/bin/bash\n#FLUX: -N 1\nflux run hostname\n"
			return "batchRaw"
		case 4:
			r["batch"] = false
			r["batchRaw"] = true
			return "batchRaw without batch"
		default:
			r["launcher"] = true
			return "batch and launcher"
		}
	}},
	{"command-script", func(g *gen, o map[string]any) string {
		r := runner(o)
		switch g.r.IntN(3) {
		case 0:
			r["command"] = "echo both"
			obj(r, "commands")["script"] = "echo script"
			return "command and commands.script"
		case 1:
			delete(r, "command")
			obj(r, "commands")["script"] = "#!/bin/bash\necho \"I am $(hostname)\"\n"
			return "commands.script only"
		default:
			delete(r, "command")
			delete(obj(r, "commands"), "script")
			return "no command (interactive-like)"
		}
	}},
	{"connect-timeout", func(g *gen, o map[string]any) string {
		v := pick(g, "10s", "1.5m", "500ms", "5x", "", "-1s", "1d", "5 s", "99999999999999999999s")
		at(spec(o), "flux")["connectTimeout"] = v
		return "spec.flux.connectTimeout=" + show(v)
	}},
	{"log-level", func(g *gen, o map[string]any) string {
		v := pick(g, int64(0), int64(7), int64(8), int64(-1))
		at(spec(o), "flux")["logLevel"] = v
		return fmt.Sprintf("spec.flux.logLevel=%d", v)
	}},
	{"curve-cert", func(g *gen, o map[string]any) string {
		f := at(spec(o), "flux")
		switch g.r.IntN(5) {
		case 0:
			f["curveCert"] = "garbage"
			return "curveCert garbage"
		case 1:
			f["curveCert"] = "metadata\ncurve\n    public-key = \"x\"\n"
			return "curveCert without name or secret key"
		case 2:
			f["curveCert"] = "x"
			f["curveCertSecret"] = "shared-curve"
			return "curveCert and curveCertSecret"
		case 3:
			f["curveCertSecret"] = pick(g, refNames...)
			return "curveCertSecret=" + show(f["curveCertSecret"])
		default:
			f["curveCertSecret"] = "shared-curve"
			return "curveCertSecret shared-curve"
		}
	}},
	{"flux-container-name", func(g *gen, o map[string]any) string {
		v := pick(g, "flux-view", name(o), "Flux", "my-view", g.label(63), "spack-software", "flux-entrypoint")
		at(spec(o), "flux.container")["name"] = v
		desc := "spec.flux.container.name=" + show(v)
		if g.chance(0.3) {
			addSidecar(o, map[string]any{"name": v, "command": "sleep infinity"})
			desc += ", and a sidecar of that name"
		}
		return desc
	}},
	{"paths-odd", func(g *gen, o map[string]any) string {
		v := pick(g, "relative/dir", "/a b", "/tmp/../etc", "", "/"+strings.Repeat("d", 4000), "~/x")
		switch f := pick(g, "archive", "logs", "workingDir", "fluxWorkingDir", "pythonPath"); f {
		case "archive":
			at(spec(o), "archive")["path"] = v
			return "spec.archive.path=" + show(v)
		case "logs", "workingDir":
			runner(o)[f] = v
			return fmt.Sprintf("runner %s=%s", f, show(v))
		case "fluxWorkingDir":
			at(spec(o), "flux.container")["workingDir"] = v
			return "spec.flux.container.workingDir=" + show(v)
		default:
			at(spec(o), "flux.container")["pythonPath"] = v
			return "spec.flux.container.pythonPath=" + show(v)
		}
	}},
}

// hostRange is the host list of every pod of the claim o at its size.
func hostRange(o map[string]any) string { return fmt.Sprintf("%s-[0-%d]", name(o), size(o)-1) }

// bootstrapHosts is a broker.toml with the URIs and certificate Flux needs
// and the given hosts entries.
func bootstrapHosts(o map[string]any, entries string) string {
	return "[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\ndefault_port = 8050\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h." + name(o) + ":%p\"\nhosts = [" + entries + "]\n"
}
