package badclaims

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/corpus"
)

// HelloWorld is the claim every case starts from.
const HelloWorld = "examples/hello-world/claim.yaml"

var helloWorld struct {
	once sync.Once
	obj  map[string]any
	err  error
}

// RepoRoot is the repository's root directory, found from this source file.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("badclaims: cannot locate the repository")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// base returns a fresh copy of examples/hello-world/claim.yaml, with
// integers as int64 (what unstructured objects hold).
func base() map[string]any {
	helloWorld.once.Do(func() {
		b, err := os.ReadFile(filepath.Join(RepoRoot(), HelloWorld))
		if err != nil {
			helloWorld.err = err
			return
		}
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			helloWorld.err = fmt.Errorf("%s: %w", HelloWorld, err)
			return
		}
		helloWorld.obj = corpus.Normalize(obj).(map[string]any)
	})
	if helloWorld.err != nil {
		panic("badclaims: " + helloWorld.err.Error())
	}
	return corpus.DeepCopy(helloWorld.obj).(map[string]any)
}

// JSON is the claim as JSON, which driver.Run reads like YAML and which
// keeps every byte (NUL included) as it is.
func (c Case) JSON() []byte {
	b, err := json.Marshal(c.Claim)
	if err != nil {
		panic(fmt.Sprintf("badclaims: case %s: %v", c.Name, err))
	}
	return b
}

// FatalMessage is the CLI's Fatal result, without its "FATAL: " prefix, or
// "" when the CLI composed the claim.
func FatalMessage(out *driver.Output) string {
	for _, r := range out.Results {
		if m, ok := strings.CutPrefix(r, "FATAL: "); ok {
			return m
		}
	}
	return ""
}

// SecretPiece returns a piece of one of secrets that msg repeats, or "".
func SecretPiece(msg string, secrets []string) string { return curvetest.Piece(msg, secrets...) }

// ClaimName is the claim's metadata.name.
func (c Case) ClaimName() string { return nameOf(c.Claim) }

func nameOf(claim map[string]any) string {
	md, _ := claim["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// ---------------------------------------------------------------- paths

// segment is one step of a path: a field (or map key) or a list index.
type segment struct {
	key   string
	index int
	isIdx bool
}

// parsePath splits "spec.containers[0].command" into its steps. Map keys
// that contain dots or slashes go through setKey instead.
func parsePath(p string) []segment {
	var out []segment
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, segment{key: part})
				break
			}
			if i > 0 {
				out = append(out, segment{key: part[:i]})
			}
			j := strings.IndexByte(part, ']')
			n, err := strconv.Atoi(part[i+1 : j])
			if err != nil {
				panic("badclaims: bad path " + p)
			}
			out = append(out, segment{index: n, isIdx: true})
			part = part[j+1:]
		}
	}
	return out
}

// node returns the value at path, creating maps on the way.
func node(root map[string]any, path string) any {
	var cur any = root
	for _, s := range parsePath(path) {
		switch n := cur.(type) {
		case map[string]any:
			next, ok := n[s.key]
			if !ok || next == nil {
				next = map[string]any{}
				n[s.key] = next
			}
			cur = next
		case []any:
			cur = n[s.index]
		default:
			panic(fmt.Sprintf("badclaims: %s: cannot step into %T", path, cur))
		}
	}
	return cur
}

func setPath(root map[string]any, path string, v any) {
	segs := parsePath(path)
	last := segs[len(segs)-1]
	parent := ""
	if i := strings.LastIndexAny(path, ".["); i > 0 {
		parent = path[:i]
	}
	var p any = root
	if parent != "" {
		p = node(root, parent)
	}
	switch n := p.(type) {
	case map[string]any:
		n[last.key] = v
	case []any:
		n[last.index] = v
	default:
		panic(fmt.Sprintf("badclaims: %s: cannot set in %T", path, p))
	}
}

// ---------------------------------------------------------------- mutations

// mutation changes a claim in place.
type mutation func(c map[string]any)

// set sets the value at a path such as "spec.containers[0].command".
func set(path string, v any) mutation {
	return func(c map[string]any) { setPath(c, path, v) }
}

// setKey sets one key of the map at path; for keys with dots or slashes.
func setKey(path, key string, v any) mutation {
	return func(c map[string]any) { node(c, path).(map[string]any)[key] = v }
}

// withName sets metadata.name.
func withName(n string) mutation { return set("metadata.name", n) }

// named builds a mutation from the claim's name, once it is known.
func named(f func(name string) mutation) mutation {
	return func(c map[string]any) { f(nameOf(c))(c) }
}

// runner changes the Flux runner, hello-world's only container.
func runner(field string, v any) mutation { return set("spec.containers[0]."+field, v) }

// sidecar appends a container that does not run Flux; the runner is marked
// runFlux, which the schema needs once there are two.
func sidecar(c map[string]any) mutation {
	return func(claim map[string]any) {
		cs := node(claim, "spec.containers").([]any)
		cs[0].(map[string]any)["runFlux"] = true
		setPath(claim, "spec.containers", append(cs, c))
	}
}

// service appends a container of the services Pod.
func service(c map[string]any) mutation {
	return func(claim map[string]any) {
		s := claim["spec"].(map[string]any)
		list, _ := s["services"].([]any)
		s["services"] = append(list, c)
	}
}

// volume adds a volume to the runner.
func volume(name string, v map[string]any) mutation {
	return setKey("spec.containers[0].volumes", name, v)
}

// clusters sets flux.bursting.clusters to name/size pairs.
func clusters(pairs ...any) mutation {
	var list []any
	for i := 0; i+1 < len(pairs); i += 2 {
		list = append(list, map[string]any{"name": pairs[i], "size": int64(pairs[i+1].(int))})
	}
	return set("spec.flux.bursting.clusters", list)
}

// burst makes the claim a burst cluster of the root "root" (size 4), which
// lists itself among the root's clusters, as the burst controller writes it.
func burst() mutation {
	return func(c map[string]any) {
		set("spec.flux.bursting.leadBroker", map[string]any{"address": "10.1.2.3", "name": "root", "size": int64(4), "port": int64(30093)})(c)
		clusters(nameOf(c), 4)(c)
	}
}

// many returns a map of n entries key-<i> → value(i).
func many(n int, value func(i int) any) map[string]any {
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("key-%d", i)] = value(i)
	}
	return m
}

// list returns n values.
func list(n int, value func(i int) any) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = value(i)
	}
	return l
}

func str(s string) func(int) any { return func(int) any { return s } }

// container is a named sidecar container.
func container(name string, kv ...any) map[string]any {
	c := map[string]any{"name": name, "image": "nginx"}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// obj builds a map from key/value pairs.
func obj(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func ints(v ...int) []any {
	out := make([]any, len(v))
	for i, n := range v {
		out[i] = int64(n)
	}
	return out
}

func strs(v ...string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// long is a string of n bytes.
func long(n int) string { return strings.Repeat("a", n) }
