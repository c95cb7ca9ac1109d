package corpus

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const examplesDir = "../../examples"

func examples(t *testing.T) []*Claim {
	t.Helper()
	ex, err := LoadExamples(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func TestLoadExamples(t *testing.T) {
	ex := examples(t)
	if len(ex) < 20 {
		t.Fatalf("%d example claims, want every examples/*/claim.yaml", len(ex))
	}
	ids := map[string]bool{}
	for _, c := range ex {
		if ids[c.ID] {
			t.Errorf("duplicate ID %s", c.ID)
		}
		ids[c.ID] = true
		if c.Object["kind"] != Kind || c.Object["apiVersion"] != APIVersion {
			t.Errorf("%s: not a claim: %v %v", c.ID, c.Object["apiVersion"], c.Object["kind"])
		}
		if len(c.Mutations) != 0 {
			t.Errorf("%s: an example has mutations", c.ID)
		}
	}
	if !ids["hello-world"] {
		t.Errorf("hello-world missing from %v", ids)
	}
	// Numbers are int64 (as an unstructured object wants), not float64.
	for _, c := range ex {
		if c.ID == "hello-world" {
			if _, ok := c.Object["spec"].(map[string]any)["size"].(int64); !ok {
				t.Errorf("hello-world spec.size is %T, want int64", c.Object["spec"].(map[string]any)["size"])
			}
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	ex := examples(t)
	a := Generate(ex, Options{Seed: 7, N: 300})
	b := Generate(examples(t), Options{Seed: 7, N: 300})
	if len(a) != 300 || len(b) != 300 {
		t.Fatalf("generated %d and %d claims, want 300", len(a), len(b))
	}
	for i := range a {
		ja, _ := a[i].JSON()
		jb, _ := b[i].JSON()
		if a[i].Describe() != b[i].Describe() || !bytes.Equal(ja, jb) {
			t.Fatalf("claim %d differs between two runs with one seed:\n%s\n%s", i, a[i].Describe(), b[i].Describe())
		}
	}
	c := Generate(ex, Options{Seed: 8, N: 300})
	same := 0
	for i := range a {
		ja, _ := a[i].JSON()
		jc, _ := c[i].JSON()
		if bytes.Equal(ja, jc) {
			same++
		}
	}
	if same > 30 {
		t.Errorf("seeds 7 and 8 give %d identical claims of 300", same)
	}
	// The bases are untouched.
	fresh := examples(t)
	for i := range ex {
		if !reflect.DeepEqual(ex[i].Object, fresh[i].Object) {
			t.Errorf("Generate changed the base %s", ex[i].ID)
		}
	}
}

func TestGenerateCount(t *testing.T) {
	ex := examples(t)
	for _, n := range []int{0, 1, 500, 777} {
		if got := len(Generate(ex, Options{Seed: 1, N: n})); got != n {
			t.Errorf("N=%d: got %d claims", n, got)
		}
	}
	if got := Generate(nil, Options{Seed: 1, N: 10}); got != nil {
		t.Errorf("no bases: got %d claims", len(got))
	}
}

// Every mutation is used, every claim says what was changed, and every
// claim is valid JSON and YAML that reads back to the same object.
func TestGenerateValidDocuments(t *testing.T) {
	claims := Generate(examples(t), Options{Seed: 1, N: 600})
	used := map[string]int{}
	ids := map[string]bool{}
	for _, c := range claims {
		if ids[c.ID] {
			t.Fatalf("duplicate ID %s", c.ID)
		}
		ids[c.ID] = true
		if len(c.Mutations) == 0 {
			t.Fatalf("%s has no mutations", c.ID)
		}
		for _, k := range c.Kinds() {
			used[k]++
		}
		j, err := c.JSON()
		if err != nil {
			t.Fatalf("%s: JSON: %v", c.Describe(), err)
		}
		if !json.Valid(j) {
			t.Fatalf("%s: invalid JSON", c.Describe())
		}
		y, err := c.YAML()
		if err != nil {
			t.Fatalf("%s: YAML: %v", c.Describe(), err)
		}
		var fromYAML, fromJSON map[string]any
		if err := yaml.Unmarshal(y, &fromYAML); err != nil {
			t.Fatalf("%s: the YAML does not parse: %v", c.Describe(), err)
		}
		if err := json.Unmarshal(j, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromYAML, fromJSON) {
			t.Fatalf("%s: YAML and JSON read back differently", c.Describe())
		}
		// The YAML holds the claim's kind, so it is one claim document.
		if docs, err := parseDocuments(y); err != nil || len(docs) != 1 || docs[0]["kind"] != Kind {
			t.Fatalf("%s: YAML is not one %s document (%d, %v)", c.Describe(), Kind, len(docs), err)
		}
	}
	for _, m := range Mutations() {
		if used[m] == 0 {
			t.Errorf("mutation %s never used", m)
		}
	}
	if len(used) != len(Mutations()) {
		t.Errorf("used %d mutation kinds, have %d", len(used), len(Mutations()))
	}
}

// Some mutations leave claims that stay big; none grows past what an API
// server takes in one request (3 MiB).
func TestGenerateSizes(t *testing.T) {
	biggest := 0
	for _, c := range Generate(examples(t), Options{Seed: 3, N: 600}) {
		j, _ := c.JSON()
		if len(j) > biggest {
			biggest = len(j)
		}
		if len(j) > 3<<20 {
			t.Errorf("%s is %d bytes", c.Describe(), len(j))
		}
	}
	if biggest < 1<<20 {
		t.Errorf("biggest claim is %d bytes, want some over 1 MiB (huge hooks)", biggest)
	}
}

func TestFieldPaths(t *testing.T) {
	msg := `invalid MiniCluster: spec.containers[0].volumes[data].path: Invalid value: "x": must be absolute; ` +
		`metadata.name: Invalid value: "a": too long; spec.pod.labels[example.com/team]: Invalid value; ` +
		`json: cannot unmarshal string into Go struct field MiniClusterSpec.spec.size of type int32; spec.flux.bursting.`
	got := FieldPaths(msg)
	want := []string{"spec.containers[0].volumes[data].path", "metadata.name", "spec.pod.labels[example.com/team]", "spec.size", "spec.flux.bursting"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FieldPaths:\n got %q\nwant %q", got, want)
	}
	if got := FieldPaths("no paths here; inspect the specification"); len(got) != 0 {
		t.Errorf("FieldPaths found %q", got)
	}
}

func TestLookup(t *testing.T) {
	claim := map[string]any{
		"metadata": map[string]any{"name": "x"},
		"spec": map[string]any{
			"containers": []any{map[string]any{"image": "i", "volumes": map[string]any{"data": map[string]any{"path": "/d"}}}},
			"pod":        map[string]any{"labels": map[string]any{"example.com/team": "a", "kueue.x-k8s.io/queue-name": "q"}},
			"size":       int64(4),
		},
	}
	for p, want := range map[string]bool{
		"metadata.name":                              true,
		"spec.size":                                  true,
		"spec.containers[0].image":                   true,
		"spec.containers[0].volumes[data].path":      true,
		"spec.containers[0].volumes.data.path":       true,
		"spec.pod.labels[example.com/team]":          true,
		"spec.pod.labels.example.com/team":           true,
		"spec.pod.labels.kueue.x-k8s.io/queue-name":  true,
		"spec.containers[1].image":                   false,
		"spec.containers.image":                      false,
		"spec.containers[0].command":                 false,
		"spec.pod.labels[team]":                      false,
		"spec.size.value":                            false,
		"spec.containers[x]":                         false,
		"spec.containers[0].volumes[data].path.more": false,
	} {
		if got := Lookup(claim, p); got != want {
			t.Errorf("Lookup(%s) = %v, want %v", p, got, want)
		}
	}

	for msg, want := range map[string]string{
		"invalid MiniCluster: spec.containers[0].volumes[data].path: must be absolute": "spec.containers[0].volumes[data].path",
		"spec.bogus: Invalid value; spec.size: Invalid value: 4":                       "spec.size",
		"spec.containers[0].name: Required value: a sidecar needs a name":              "spec.containers[0].name",
		"spec.containers[0].name: Invalid value: must be a DNS label":                  "",
		"spec.containers: Required value: a MiniCluster needs a container":             "spec.containers",
		"spec: Required value": "", // the claim has a spec
		"spec.containers[0].volumes[data].readOnly: Required value":        "spec.containers[0].volumes[data].readOnly",
		"check the types of its spec fields":                               "",
		"spec.containers[0].volumes[data].readOnly: Duplicate value: true": "spec.containers[0].volumes[data].readOnly",
		"spec.containers[0].volumes[data].readOnly: Invalid value: true":   "",
		"spec.containers[0].volumes[other].path: Duplicate value: \"/d\"":  "",
		"spec.containers[3].name: Required value":                          "",
		"the service name is too long":                                     "",
	} {
		got, ok := PresentPath(claim, msg)
		if got != want || ok != (want != "") {
			t.Errorf("PresentPath(%q) = %q, %v; want %q", msg, got, ok, want)
		}
	}
}

func TestPresentPathNoSpec(t *testing.T) {
	claim := map[string]any{"metadata": map[string]any{"name": "x"}}
	if p, ok := PresentPath(claim, "MiniCluster \"x\" is invalid: spec: Required value"); !ok || p != "spec" {
		t.Errorf("PresentPath = %q, %v; want spec", p, ok)
	}
	if p, ok := PresentPath(claim, "spec.containers: Required value"); ok {
		t.Errorf("PresentPath = %q: the claim has no spec", p)
	}
}

func TestGeneralize(t *testing.T) {
	if got := Generalize("spec.template.spec.containers[0].volumeMounts[12].mountPath"); got != "spec.template.spec.containers[*].volumeMounts[*].mountPath" {
		t.Error(got)
	}
	if got := Generalize("metadata.labels[app.kubernetes.io/name]"); got != "metadata.labels[*]" {
		t.Error(got)
	}
}

func TestSetPath(t *testing.T) {
	o := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "a"}, map[string]any{"image": "b"}}, "x-y": map[string]any{"k": "v"}}}
	paths := allPaths(o, "")
	want := []string{"spec", "spec.containers", "spec.containers[0]", "spec.containers[0].image", "spec.containers[1]", "spec.containers[1].image", "spec[x-y]", "spec[x-y].k"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("allPaths:\n got %q\nwant %q", paths, want)
	}
	for _, p := range paths {
		if !Lookup(o, p) {
			t.Errorf("allPaths gave %s, which Lookup does not find", p)
		}
	}
	if !setPath(o, "spec[x-y].k", "w", false) || o["spec"].(map[string]any)["x-y"].(map[string]any)["k"] != "w" {
		t.Error("set spec[x-y].k")
	}
	if !setPath(o, "spec.containers[0]", nil, true) {
		t.Fatal("delete spec.containers[0]")
	}
	cs := o["spec"].(map[string]any)["containers"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["image"] != "b" {
		t.Errorf("after deleting containers[0]: %v", cs)
	}
	if setPath(o, "spec.nothing.here", 1, false) {
		t.Error("set a missing path")
	}
}

func TestDescribe(t *testing.T) {
	c := Generate(examples(t), Options{Seed: 1, N: 1})[0]
	if d := c.Describe(); !strings.HasPrefix(d, "gen-0000 (") || !strings.Contains(d, Mutations()[0]+": ") {
		t.Errorf("Describe: %s", d)
	}
}
