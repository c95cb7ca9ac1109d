package function_test

// Fuzz tests of the function. The seeds (every example claim) run with
// go test; fuzz them with
//
//	go test ./function/ -run '^$' -fuzz '^FuzzRunFunction$' -fuzztime 20s
//	go test ./function/ -run '^$' -fuzz '^FuzzDecode$' -fuzztime 20s

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// addExampleClaims adds every example claim to the seed corpus, with the
// name of its example, whose platform it is composed in.
func addExampleClaims(f *testing.F) {
	f.Helper()
	for _, ex := range exampleNames(f) {
		b, err := os.ReadFile(filepath.Join("..", "examples", ex, "claim.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, ex)
	}
}

// fuzzPlatforms are the platforms of the examples with fixtures
// (cluster.yaml, input.yaml) by example name; any other name is a
// namespace without labels and the shipped Composition's input.
func fuzzPlatforms(tb testing.TB) map[string]example {
	tb.Helper()
	out := map[string]example{}
	for _, name := range exampleNames(tb) {
		if ex := loadExample(tb, name); ex.cluster != nil || !reflect.DeepEqual(ex.input, mustJSONMap(tb, compositionInput)) {
			out[name] = example{cluster: ex.cluster, input: ex.input}
		}
	}
	return out
}

// fuzzExample is the example Crossplane would compose for a claim
// document in the platform of the example named platform, or false when
// the document is nothing Crossplane could send.
func fuzzExample(tb testing.TB, doc []byte, platforms map[string]example, platform string) (example, bool) {
	xr, ok := fuzzComposite(tb, doc)
	if !ok {
		return example{}, false
	}
	ex, ok := platforms[platform]
	if !ok {
		ex = example{input: mustJSONMap(tb, compositionInput)}
	}
	ex.xr = xr
	return ex, true
}

// fuzzComposite is the composite Crossplane would create for a claim
// document, or false when the document is nothing Crossplane could send.
// A document with a spec is a whole claim; any other is the spec alone.
func fuzzComposite(tb testing.TB, doc []byte) (map[string]any, bool) {
	var claim map[string]any
	if err := yaml.Unmarshal(doc, &claim); err != nil || claim == nil {
		return nil, false
	}
	name, ns := "flux-sample", "default"
	spec := claim
	if s, ok := claim["spec"].(map[string]any); ok {
		spec = s
		if md, ok := claim["metadata"].(map[string]any); ok {
			// Any name: the function validates it. The namespace comes
			// from Kubernetes, so it is always a DNS label.
			if n, ok := md["name"].(string); ok && n != "" {
				name = n
			}
			if n, ok := md["namespace"].(string); ok && len(validation.IsDNS1123Label(n)) == 0 {
				ns = n
			}
		}
	}
	mc := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	mc.SetAPIVersion(v1alpha2.SchemeGroupVersion.String())
	mc.SetKind(v1alpha2.ClaimKind)
	mc.SetName(name)
	mc.SetNamespace(ns)
	xr, err := driver.Composite(mc)
	if err != nil {
		return nil, false
	}
	if _, err := structpb.NewStruct(xr.Object); err != nil {
		return nil, false // not JSON data (e.g. invalid UTF-8): not a request
	}
	return created(tb, xr), true
}

// FuzzRunFunction composes mutated claims, each in the platform of an
// example (its cluster.yaml and input.yaml; an unknown name: a namespace
// without labels and the default policy). RunFunction must never panic
// nor fail; it answers with a Fatal result and nothing composed, or with
// the composed resources, whose every script passes bash -n. A second
// reconcile, with everything observed, composes the same objects (a Job's
// template is immutable: composing it differently would fail every
// update).
func FuzzRunFunction(f *testing.F) {
	addExampleClaims(f)
	for _, seed := range hostileSeeds() {
		f.Add(seed, "")
	}
	platforms := fuzzPlatforms(f)
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	dir := f.TempDir()
	checked := &sync.Map{} // script hash -> bash -n error text ("" when it passed)

	f.Fuzz(func(t *testing.T, doc []byte, platform string) {
		ex, ok := fuzzExample(t, doc, platforms, platform)
		if !ok {
			return
		}
		fn := function.New(function.WithRandom(fixedEntropy{}))
		rsp := fuzzRun(t, fn, ex.requested(t), ex.cluster)
		if fatalResult(rsp) != "" {
			return
		}
		cm := rsp.GetDesired().GetResources()[render.KeyEntrypoint].GetResource().AsMap()
		data, _ := cm["data"].(map[string]any)
		for key, v := range data {
			if strings.HasSuffix(key, ".sh") {
				script, _ := v.(string)
				if msg := bashN(t, bash, dir, checked, script); msg != "" {
					t.Errorf("%s does not pass bash -n: %s\n%s", key, msg, script)
				}
			}
		}

		again := fuzzRun(t, fn, observe(t, ex, rsp), ex.cluster)
		if msg := fatalResult(again); msg != "" {
			t.Fatalf("the second reconcile failed: %s", msg)
		}
		for name, r := range rsp.GetDesired().GetResources() {
			if !proto.Equal(r.GetResource(), again.GetDesired().GetResources()[name].GetResource()) {
				t.Errorf("%s changed between the first and the second reconcile", name)
			}
		}
		if n, m := len(rsp.GetDesired().GetResources()), len(again.GetDesired().GetResources()); n != m {
			t.Errorf("%d resources composed first, %d then", n, m)
		}
	})
}

// hostile is a string with everything that could break a shell script
// that quotes it badly: quotes, expansions, separators, newlines, a
// here-document end, non-ASCII.
const hostile = "a'b\"c $(id) `id` ${HOME} $HOME \\ ; & | < > # * ? [x] ~ ! {a,b} %s %% \n EOF\n'\"'\"\t é🚀"

// batchHostile is hostile with every line's quotes closed: in batch mode
// each line is one job, split into words on its own.
const batchHostile = "x \"$(id)\" '`id`' ${HOME} \\; & | < > # * ? [x] ~ ! {a,b} %s %%\n EOF\n'\"' \"'\" \t é🚀"

// hostileSeeds are valid claims with hostile strings in every field that
// reaches a script.
func hostileSeeds() [][]byte {
	commands := map[string]any{}
	for _, k := range []string{"prefix", "init", "pre", "brokerPre", "workerPre", "post", "servicePre"} {
		commands[k] = "echo " + hostile
	}
	runner := map[string]any{
		"image": "x", "runFlux": true, "command": "echo 'it''s' \"quoted\" " + hostile, "workingDir": "/work dir/$(id)",
		"environment": map[string]any{"A_B": hostile}, "commands": commands, "logs": "/tmp/lo gs/'x'",
	}
	sidecar := map[string]any{"name": "side", "image": "y", "command": "run " + hostile, "commands": map[string]any{"pre": hostile}}
	script := map[string]any{"image": "x", "runFlux": true, "commands": map[string]any{"script": "#!/bin/bash\necho " + hostile + "\n"}}
	specs := []map[string]any{
		{"size": 3, "maxSize": 5, "tasks": 2, "containers": []any{runner, sidecar},
			"flux": map[string]any{"submitCommand": "submit " + hostile, "wrap": "strace,-e,'x'", "optionFlags": "-o x='1 2' " + hostile,
				"connectTimeout": "5s", "environment": map[string]any{"FLUX_X": hostile}, "container": map[string]any{"pythonPath": "/x/$(id)'"}},
			"logging": map[string]any{"debug": true, "timed": true, "zeromq": true}, "archive": map[string]any{"path": "/arch ive/'x'.sqlite"}},
		{"size": 2, "interactive": true, "containers": []any{runner}},
		{"size": 2, "containers": []any{script, sidecar}},
		{"size": 2, "containers": []any{map[string]any{"image": "x", "launcher": true, "command": hostile}}},
		{"size": 2, "containers": []any{map[string]any{"image": "x", "batch": true, "command": "a\nb " + batchHostile}}},
	}
	var out [][]byte
	for _, s := range specs {
		b, err := json.Marshal(map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster",
			"metadata": map[string]any{"name": "hostile", "namespace": "tenant-a"}, "spec": s})
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}

// TestHostileSeedsCompose keeps the hostile seeds valid claims, so that
// they reach the scripts.
func TestHostileSeedsCompose(t *testing.T) {
	for i, seed := range hostileSeeds() {
		ex, ok := fuzzExample(t, seed, nil, "")
		if !ok {
			t.Fatalf("seed %d is not a claim", i)
		}
		rsp, err := driver.RunRequest(context.Background(), function.New(function.WithRandom(fixedEntropy{})), ex.requested(t), ex.cluster)
		if err != nil {
			t.Fatal(err)
		}
		if msg := fatalResult(rsp); msg != "" {
			t.Errorf("seed %d: %s", i, msg)
		}
	}
}

// fuzzRun calls RunFunction as Crossplane does, answering its requirements
// from cluster, and checks the shape of its answer.
func fuzzRun(t *testing.T, fn *function.Function, req *fnv1.RunFunctionRequest, cluster []*unstructured.Unstructured) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := driver.RunRequest(context.Background(), fn, req, cluster)
	if err != nil {
		t.Fatalf("RunFunction returned an error, want results: %v", err)
	}
	if rsp == nil {
		t.Fatal("RunFunction returned no response")
	}
	n := len(rsp.GetDesired().GetResources())
	if fatalResult(rsp) != "" {
		if n != 0 {
			t.Fatalf("a Fatal result must compose nothing; got %d resources", n)
		}
		return rsp
	}
	if _, ok := rsp.GetDesired().GetResources()[render.KeyEntrypoint]; !ok {
		t.Fatalf("neither a Fatal result nor the entrypoint ConfigMap; results %v", rsp.GetResults())
	}
	if _, err := proto.Marshal(rsp); err != nil {
		t.Fatalf("the response cannot be sent: %v", err)
	}
	return rsp
}

// bashN runs bash -n on the script as a pod runs it, from a file, and
// returns its complaint. Each distinct script is checked once.
func bashN(t *testing.T, bash, dir string, checked *sync.Map, script string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(script))
	if msg, ok := checked.Load(sum); ok {
		return msg.(string)
	}
	file, err := os.CreateTemp(dir, "script-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file.Name()) //nolint:errcheck // temporary
	if _, err := file.WriteString(script); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	msg := ""
	if out, err := exec.Command(bash, "-n", file.Name()).CombinedOutput(); err != nil || len(out) > 0 {
		msg = strings.TrimSpace(string(out)) + " (" + errText(err) + ")"
	}
	checked.Store(sum, msg)
	return msg
}

func errText(err error) string {
	if err == nil {
		return "exit 0, with output"
	}
	return err.Error()
}

// FuzzDecode decodes mutated composites: Decode must never panic, and
// whenever it succeeds it returns a named MiniCluster in a namespace, and a
// namespaced composite (the v2 shape) in its own namespace whatever its
// labels and spec say.
func FuzzDecode(f *testing.F) {
	for _, ex := range exampleNames(f) {
		b, err := json.Marshal(loadExample(f, ex).xr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"claimRef":{"name":"a","namespace":"b"},"size":1}}`))
	f.Add([]byte(`{"metadata":{"labels":{"crossplane.io/claim-name":"a"}},"spec":{"claimRef":null}}`))
	f.Add([]byte(`{"kind":"MiniCluster","metadata":{"name":"x","namespace":"t","labels":{"crossplane.io/claim-name":"a","crossplane.io/claim-namespace":"b"}},"spec":{"size":1,"crossplane":{"compositionRef":{"name":"c"}}}}`))

	f.Fuzz(func(t *testing.T, doc []byte) {
		var xr map[string]any
		if err := json.Unmarshal(doc, &xr); err != nil {
			return
		}
		mc, ns, err := function.Decode(xr)
		if err != nil {
			if mc != nil || ns != "" {
				t.Errorf("Decode failed (%v) but returned %v, %q", err, mc, ns)
			}
			return
		}
		if mc == nil || ns == "" || mc.Name == "" || mc.Namespace != ns {
			t.Errorf("Decode succeeded with MiniCluster %v in namespace %q", mc, ns)
		}
		meta, _ := xr["metadata"].(map[string]any)
		if own, _ := meta["namespace"].(string); own != "" && (ns != own || mc.Name != meta["name"]) {
			t.Errorf("namespaced composite %v/%v decoded as %s/%s", own, meta["name"], ns, mc.Name)
		}
	})
}
