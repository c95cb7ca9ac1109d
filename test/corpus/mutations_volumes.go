package corpus

import (
	"fmt"
)

// volumeMutations add volumes, name them and place their mount paths.
var volumeMutations = []mutation{
	{"volume-path", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		path := pick(g, append([]string{"data", "/", "/mnt", "/opt", "/home", "/tmp/../etc", "/data:ro", "/dev/shm", "/mnt/flux/sub", "/data/", "//data", "/a b", "/x\x00", "/proc", "/proc/cpuinfo", "/proc/x"}, reservedPaths...)...)
		vname := pick(g, "data2", "scratch")
		v := map[string]any{"path": path}
		if g.chance(0.5) {
			v["emptyDir"] = true
		} else {
			v["hostPath"] = "/srv/data"
		}
		obj(c, "volumes")[vname] = v
		return fmt.Sprintf("%s.volumes[%s].path=%s", p, vname, show(path))
	}},
	{"volume-duplicate-path", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		path := pick(g, "/data", "/dev/shm", "/data/")
		vs := obj(c, "volumes")
		vs["one"] = map[string]any{"emptyDir": true, "path": "/data"}
		vs["two"] = map[string]any{"hostPath": "/srv", "path": path}
		return fmt.Sprintf("%s.volumes one and two both at /data and %s", p, show(path))
	}},
	{"two-emptydirs", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		vs := obj(c, "volumes")
		vs["shm-a"] = map[string]any{"emptyDir": true}
		vs["shm-b"] = map[string]any{"emptyDir": true, "emptyDirMedium": "memory"}
		return p + ".volumes: two emptyDir volumes without path"
	}},
	{"flux-mount-path", func(g *gen, o map[string]any) string {
		mp := pick(g, append([]string{"/opt", "/mnt", "/mnt/flux-view", "/data", "/", "/a/../b", "/tmp/fluxout", "/dev/shm", "/etc", "/usr", "/tmp", "/proc/flux", "/sys/flux", "/usr/local/flux"}, reservedPaths...)...)
		at(spec(o), "flux.container")["mountPath"] = mp
		desc := "spec.flux.container.mountPath=" + show(mp)
		if mp == "/data" || g.chance(0.3) {
			obj(runner(o), "volumes")["data"] = map[string]any{"hostPath": "/data", "path": "/data"}
			desc += ", runner volume at /data"
		}
		return desc
	}},
	{"volume-name", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		n := pick(g, append([]string{"Data", "a.b", g.label(63), g.label(64), "data", "x"}, reservedVols...)...)
		obj(c, "volumes")[n] = map[string]any{"emptyDir": true, "path": "/scratch"}
		desc := fmt.Sprintf("%s.volumes[%s]", p, show(n))
		if g.chance(0.4) {
			i := addSidecar(o, map[string]any{"name": "side", "command": "sleep infinity", "volumes": map[string]any{n: map[string]any{"hostPath": "/srv", "path": "/srv"}}})
			desc += fmt.Sprintf(", and spec.containers[%d] with the same volume name, another source", i)
		}
		return desc
	}},
	{"volume-source", func(g *gen, o map[string]any) string {
		c, p := g.anyContainer(o)
		v := pick(g,
			map[string]any{"path": "/data"},
			map[string]any{"path": "/data", "emptyDir": true, "hostPath": "/srv"},
			map[string]any{"path": "/data", "hostPath": "srv/data"},
			map[string]any{"path": "/data", "configMapName": "Bad_CM"},
			map[string]any{"path": "/data", "secretName": "bad secret"},
			map[string]any{"path": "/data", "claimName": "claim name"},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"a": "../x"}},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"a": "/abs"}},
			map[string]any{"path": "/data", "configMapName": "settings", "items": map[string]any{"bad key!": "a", "b": "a"}},
			map[string]any{"path": "/data", "emptyDir": true, "emptyDirSizeLimit": pick(g, "64Mo", "-1Gi", "1e3", "0")},
			map[string]any{"path": "/data", "csiDriver": pick(g, "BAD driver", "csi.example.com"), "csiDriverAttributes": map[string]any{"k": "v"}},
			map[string]any{"path": "/data", "emptyDir": true, "emptyDirMedium": "Memory"},
			map[string]any{"path": "/data", "hostPath": "/srv", "items": map[string]any{"a": "b"}},
		)
		obj(c, "volumes")["vol"] = v
		return fmt.Sprintf("%s.volumes[vol]=%s", p, show(v))
	}},
}
