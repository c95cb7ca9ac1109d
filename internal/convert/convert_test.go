package convert

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func ptr[T any](v T) *T { return &v }

const head = "apiVersion: flux-framework.org/v1alpha1\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n  namespace: default\nspec:\n"

func TestMiniCluster(t *testing.T) {
	type want struct {
		spec  v1alpha2.MiniClusterSpec
		notes []string // fields of the notes, in order
		err   string
	}
	viewless := func(img string) v1alpha2.FluxSpec {
		return v1alpha2.FluxSpec{Container: v1alpha2.FluxContainer{Disable: true, Image: img}}
	}
	cases := map[string]struct {
		reason string
		spec   string
		want   want
	}{
		"Minimal": {
			reason: "One runner with a command: the image's Flux runs the brokers.",
			spec:   "  size: 2\n  containers: [{image: app, command: hostname}]\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Size: ptr[int32](2), Containers: []v1alpha2.MiniClusterContainer{{Image: "app", Command: "hostname"}}, Flux: viewless("app")},
				notes: []string{"spec.flux.container"},
			},
		},
		"DefaultImage": {
			reason: "Without an image the v1alpha1 default image (also v1alpha2's) is the view's too.",
			spec:   "  containers: [{command: hostname}]\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Containers: []v1alpha2.MiniClusterContainer{{Command: "hostname"}}, Flux: viewless(v1alpha2.DefaultImage)},
				notes: []string{"spec.flux.container"},
			},
		},
		"StrictAsGiven": {
			reason: "An explicit strict: false stays false, without a line.",
			spec:   "  logging: {strict: false, quiet: true}\n  containers: [{image: app, command: hostname}]\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Logging: v1alpha2.LoggingSpec{Quiet: true}, Containers: []v1alpha2.MiniClusterContainer{{Image: "app", Command: "hostname"}}, Flux: viewless("app")},
				notes: []string{"spec.flux.container"},
			},
		},
		"FlagsBothPlaces": {
			reason: "spec.flux.optionFlags wins over the container's older fluxOptionFlags, with a line.",
			spec:   "  flux: {optionFlags: -ompi=openmpi@5, logLevel: 5}\n  containers: [{image: app, command: hostname, fluxOptionFlags: -x=y, fluxLogLevel: 5}]\n",
			want: want{
				spec: v1alpha2.MiniClusterSpec{Containers: []v1alpha2.MiniClusterContainer{{Image: "app", Command: "hostname"}},
					Flux: v1alpha2.FluxSpec{OptionFlags: "-ompi=openmpi@5", LogLevel: ptr[int32](5), Container: v1alpha2.FluxContainer{Disable: true, Image: "app"}}},
				notes: []string{"spec.containers[0].fluxOptionFlags", "spec.flux.container"},
			},
		},
		"DiagnosticsWithoutCommand": {
			reason: "Diagnostics instead of the server: the cluster stays up as an interactive one.",
			spec:   "  containers: [{image: app, diagnostics: true}]\n  fluxRestful: {port: 5000}\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Interactive: true, Containers: []v1alpha2.MiniClusterContainer{{Image: "app"}}, Flux: viewless("app")},
				notes: []string{"spec.containers[0].diagnostics", "spec.flux.container", "spec.fluxRestful.port"},
			},
		},
		"RestfulWithCommand": {
			reason: "fluxRestful of a runner with a command had no effect in v1alpha1: a line each, no server.",
			spec:   "  fluxRestful: {branch: b, secretKey: k}\n  containers: [{image: app, command: hostname}]\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Containers: []v1alpha2.MiniClusterContainer{{Image: "app", Command: "hostname"}}, Flux: viewless("app")},
				notes: []string{"spec.flux.container", "spec.fluxRestful.branch", "spec.fluxRestful.secretKey"},
			},
		},
		"Interactive": {
			reason: "An interactive cluster without a command stays one: no RESTful API.",
			spec:   "  interactive: true\n  containers: [{image: app}]\n",
			want: want{
				spec:  v1alpha2.MiniClusterSpec{Interactive: true, Containers: []v1alpha2.MiniClusterContainer{{Image: "app"}}, Flux: viewless("app")},
				notes: []string{"spec.flux.container"},
			},
		},
		"NoRunner": {
			reason: "Two containers and no runFlux: converted as they are (the schema then names the problem), no view decision.",
			spec:   "  containers: [{image: a, name: a}, {image: b, name: b}]\n",
			want: want{
				spec: v1alpha2.MiniClusterSpec{Containers: []v1alpha2.MiniClusterContainer{{Image: "a", Name: "a"}, {Image: "b", Name: "b"}}},
			},
		},
		"ExistingAndTopLevelVolume": {
			reason: "One name in both volume maps of a container has no v1alpha2 form.",
			spec:   "  volumes: {data: {path: /host}}\n  containers: [{image: app, volumes: {data: {path: /a}}, existingVolumes: {data: {path: /b, claimName: c}}}]\n",
			want:   want{err: "spec.containers[0].volumes.data: spec.containers[0].existingVolumes.data has the same name: v1alpha2 has one volumes map, so rename one of them"},
		},
		"HostpathWithoutPath": {
			reason: "A hostpath volume needs its node directory.",
			spec:   "  volumes: {data: {storageClass: hostpath}}\n  containers: [{image: app, volumes: {data: {path: /a}}}]\n",
			want:   want{err: "spec.volumes.data.path: required for a hostpath volume: it is the directory on the node"},
		},
		"Unknown": {
			reason: "Fields of v1alpha2 or of nothing are not v1alpha1 fields.",
			spec:   "  minSize: 1\n  containers: [{image: app, noWrapEntrypoint: true}]\n  pod: {tolerations: []}\n",
			want:   want{err: `unknown v1alpha1 fields "spec.containers[0].noWrapEntrypoint", "spec.minSize", "spec.pod.tolerations": not a field of the Flux Operator's v1alpha1 MiniCluster (check the spelling, or remove them)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := MiniCluster([]byte(head + tc.spec))
			if tc.want.err != "" {
				if err == nil {
					t.Fatalf("%s\nno error", tc.reason)
				}
				if diff := cmp.Diff(tc.want.err, err.Error()); diff != "" {
					t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.spec, got.Claim.Spec); diff != "" {
				t.Errorf("%s\nspec: -want, +got:\n%s", tc.reason, diff)
			}
			var fields []string
			for _, n := range got.Notes {
				fields = append(fields, n.Field)
			}
			if diff := cmp.Diff(tc.want.notes, fields); diff != "" {
				t.Errorf("%s\nnotes: -want, +got:\n%s\n%v", tc.reason, diff, got.Notes)
			}
		})
	}
}

// TestRestfulNoSecretInClaim keeps every credential of fluxRestful and
// users out of the claim.
func TestRestfulNoSecretInClaim(t *testing.T) {
	got, err := MiniCluster([]byte(head + "  users: [{name: u, password: pw-users}]\n  fluxRestful: {secretKey: sk-value, username: user-value, token: tok-value}\n  containers: [{image: app}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(got.Claim)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pw-users", "sk-value", "user-value", "tok-value"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the claim holds %q:\n%s", s, b)
		}
	}
}

// TestStreamList converts the MiniClusters of a List, as kubectl get -o
// yaml prints them, and leaves its other items alone.
func TestStreamList(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n- " +
		strings.ReplaceAll(strings.TrimSuffix(head+"  containers: [{image: app, command: hostname}]\n", "\n"), "\n", "\n  ") + "\n"
	out, err := Stream(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
- apiVersion: flux-framework.org/v1alpha2
  kind: MiniCluster
  metadata:
    name: flux-sample
    namespace: default
  spec:
    containers:
    - command: hostname
      image: app
    flux:
      container:
        disable: true
        image: app
kind: List
`
	if diff := cmp.Diff(want, string(out.YAML)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
	if out.Converted != 1 || len(out.Notes) != 1 {
		t.Errorf("converted %d, notes %v", out.Converted, out.Notes)
	}
}

// TestDocsListEveryField keeps docs/v1alpha1.md's table and the v1alpha1
// fields convert knows in step: every field is in the table, and the
// table names no field convert does not know. spec.services[] share the
// rows of spec.containers[].
func TestDocsListEveryField(t *testing.T) {
	b, err := os.ReadFile("../../docs/v1alpha1.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| `spec.") {
			first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
			rows = append(rows, first)
		}
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(strings.Join(rows, "\n"), -1) {
		documented[m[1]] = true
	}

	var paths []string
	fieldPaths(reflect.TypeFor[v1alpha1Spec](), "spec", &paths)
	known := map[string]bool{}
	for _, p := range paths {
		known[p] = true
	}
	missing := map[string]bool{}
	for _, p := range paths {
		// Only leaves: a field whose children are listed is listed by them.
		if slices.ContainsFunc(paths, func(q string) bool {
			return strings.HasPrefix(q, p+".") || strings.HasPrefix(q, p+"[]")
		}) {
			continue
		}
		row := strings.Replace(p, "spec.services[]", "spec.containers[]", 1)
		if !documented[row] && !missing[row] {
			missing[row] = true
			t.Errorf("docs/v1alpha1.md has no row for %s", row)
		}
	}
	for d := range documented {
		if !known[d] {
			t.Errorf("docs/v1alpha1.md lists %s, which is no v1alpha1 field convert knows", d)
		}
	}
}
