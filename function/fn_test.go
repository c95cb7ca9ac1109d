package function

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/curve"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// xr is a hello-world composite resource created by claim flux-sample in
// namespace tenant-a, with the spec JSON specYAML and the claim reference
// Crossplane's claim controller sets.
func xr(specYAML string, status string) string {
	spec := map[string]any{}
	if err := json.Unmarshal([]byte(specYAML), &spec); err != nil {
		panic(err)
	}
	if _, ok := spec["claimRef"]; !ok {
		spec["claimRef"] = map[string]any{"apiVersion": "flux-framework.org/v1alpha2", "kind": "MiniCluster", "name": "flux-sample", "namespace": "tenant-a"}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		panic(err)
	}
	s := `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster",
"metadata":{"name":"flux-sample-x7k2p","uid":"` + xrUID + `","labels":{"crossplane.io/claim-name":"flux-sample","crossplane.io/claim-namespace":"tenant-a"}},
"spec":` + string(b)
	if status != "" {
		s += `,"status":` + status
	}
	return s + "}"
}

const helloSpec = `{"size":4,"logging":{"quiet":true},"containers":[{"image":"rockylinux:9","command":"echo hello world"}],"compositionRef":{"name":"miniclusters.flux-framework.org"}}`

// req is the request Crossplane sends for the composite xrJSON with the
// resources of observed (composition resource name -> JSON) and the input
// JSON (none when "").
func req(xrJSON string, observed map[string]string, input string) *fnv1.RunFunctionRequest {
	composite := &unstructured.Unstructured{Object: resource.MustStructJSON(xrJSON).AsMap()}
	var objs []*unstructured.Unstructured
	for name, j := range observed {
		o := &unstructured.Unstructured{Object: resource.MustStructJSON(j).AsMap()}
		ann := o.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[driver.AnnotationResourceName] = name
		o.SetAnnotations(ann)
		if _, set, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "ownerReferences"); !set {
			// Crossplane composed it: the composite controls it. A test
			// of another owner (or none) sets its own.
			o.SetOwnerReferences([]metav1.OwnerReference{driver.ControllerOf(composite)})
		}
		objs = append(objs, o)
	}
	var in map[string]any
	if input != "" {
		in = resource.MustStructJSON(input).AsMap()
	}
	r, err := driver.Request(composite, objs, in)
	if err != nil {
		panic(err)
	}
	return r
}

// composedBy is what the function composes for the composite xrJSON
// with the input JSON ("" for none) on a cluster that holds nothing else,
// as observed resources (composition resource name -> JSON) of the next
// run: Crossplane composed them, so req makes the composite their
// controller.
func composedBy(t *testing.T, xrJSON, input string) map[string]string {
	t.Helper()
	rsp := run(t, req(xrJSON, nil, input))
	out := map[string]string{}
	for name, r := range rsp.GetDesired().GetResources() {
		b, err := json.Marshal(r.GetResource().AsMap())
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	if len(out) == 0 {
		t.Fatalf("nothing composed: %v", rsp.GetResults())
	}
	return out
}

// entropy is deterministic, so generated keys are stable in tests, and
// endless: a run that looks something up calls the function twice.
func entropy() io.Reader { return sevens{} }

type sevens struct{}

func (sevens) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

func run(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := driver.RunRequest(context.Background(), New(WithRandom(entropy())), req, nil)
	if err != nil {
		t.Fatalf("RunFunction returned an error, want results: %v", err)
	}
	return rsp
}

func desired[T any](t *testing.T, rsp *fnv1.RunFunctionResponse, name string, into *T) *T {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, slices.Collect(maps.Keys(rsp.GetDesired().GetResources())))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.GetResource().AsMap(), into); err != nil {
		t.Fatalf("cannot decode %s: %v", name, err)
	}
	return into
}

func TestRunFunctionFatal(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     string
		input  string
		want   []string // substrings of the single fatal result
	}{
		"SizeZero": {
			reason: "size 0 is refused, naming the field.",
			xr:     xr(`{"size":0,"containers":[{"image":"x","command":"y"}]}`, ""),
			want:   []string{"spec.size", "greater than or equal to 1"},
		},
		"TwoRunners": {
			reason: "Two flux runners are refused by the schema's rule, naming the list.",
			xr:     xr(`{"size":2,"containers":[{"name":"a","image":"x","runFlux":true},{"name":"b","image":"y","runFlux":true}]}`, ""),
			want:   []string{"spec.containers", "exactly one container with runFlux: true"},
		},
		"MaxSizeBelowSize": {
			reason: "maxSize below size is refused, saying how to fix it.",
			xr:     xr(`{"size":4,"maxSize":2,"containers":[{"image":"x"}]}`, ""),
			want:   []string{"spec.maxSize", "lower spec.size, or give a new MiniCluster a larger spec.maxSize"},
		},
		"PathOnlyVolume": {
			reason: "A volume with only a path is an error, not an invalid PVC (upstream bug).",
			xr:     xr(`{"size":1,"containers":[{"image":"x","volumes":{"data":{"path":"/tmp/fluxout"}}}]}`, ""),
			want:   []string{"spec.containers[0].volumes[data]", "a path alone mounts nothing"},
		},
		"BadCurveCert": {
			reason: "A user certificate Flux would reject is refused before any broker sees it.",
			xr:     xr(`{"size":1,"flux":{"curveCert":"metadata\n    name = \"x\"\n"},"containers":[{"image":"x"}]}`, ""),
			want:   []string{"spec.flux.curveCert"},
		},
		"UnbalancedQuote": {
			reason: "A command that cannot be split into words names its field.",
			xr:     xr(`{"size":1,"containers":[{"image":"x","command":"echo \"hi"}]}`, ""),
			want:   []string{"spec.containers[0].command", "quote"},
		},
		"NoClaim": {
			reason: "A claim-shape composite without a claim reference was made by hand: any tenant's claim could bind it.",
			xr:     `{"apiVersion":"flux-framework.org/v1alpha2","kind":"XMiniCluster","metadata":{"name":"lonely"},"spec":` + helloSpec + `}`,
			want:   []string{"XMiniCluster lonely was not made by a MiniCluster claim", "spec.claimRef"},
		},
		"ReservedVolumeName": {
			reason: "A user volume may not take a name the MiniCluster uses itself.",
			xr:     xr(`{"size":1,"containers":[{"image":"x","volumes":{"flux-view":{"path":"/data","emptyDir":true}}}]}`, ""),
			want:   []string{"spec.containers[0].volumes[flux-view]", "used by the MiniCluster itself"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, req(tc.xr, nil, tc.input))
			var fatal []string
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatal = append(fatal, r.GetMessage())
				}
			}
			if len(fatal) != 1 {
				t.Fatalf("%s\nwant one fatal result, got %v", tc.reason, rsp.GetResults())
			}
			for _, w := range tc.want {
				if !strings.Contains(fatal[0], w) {
					t.Errorf("%s\nfatal result %q does not mention %q", tc.reason, fatal[0], w)
				}
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%s\na fatal result must not add desired resources; got %d", tc.reason, n)
			}
			var valid *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionValid {
					valid = c
				}
			}
			if valid == nil || valid.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || valid.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
				t.Errorf("%s\nwant condition Valid=False on the claim, got %v", tc.reason, valid)
			}
		})
	}
}

func TestRunFunctionHelloWorld(t *testing.T) {
	rsp := run(t, req(xr(helloSpec, ""), nil, ""))
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() != fnv1.Severity_SEVERITY_NORMAL {
			t.Errorf("unexpected result %v", r)
		}
	}
	if diff := cmp.Diff([]string{"curve-cert", "entrypoint", "job", "service"}, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources()))); diff != "" {
		t.Errorf("composed resources: -want, +got:\n%s", diff)
	}
	for name, r := range rsp.GetDesired().GetResources() {
		if ns := r.GetResource().AsMap()["metadata"].(map[string]any)["namespace"]; ns != "tenant-a" {
			t.Errorf("%s is in namespace %v, want the claim's namespace tenant-a", name, ns)
		}
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			t.Errorf("%s: readiness %v, want READY_TRUE: readiness is reported on the composite", name, r.GetReady())
		}
	}
	if got := rsp.GetDesired().GetComposite().GetReady(); got != fnv1.Ready_READY_FALSE {
		t.Errorf("the MiniCluster is %v before anything was observed, want READY_FALSE", got)
	}

	job := desired(t, rsp, "job", &batchv1.Job{})
	if got := []int32{*job.Spec.Parallelism, *job.Spec.Completions}; !cmp.Equal(got, []int32{4, 4}) {
		t.Errorf("parallelism, completions = %v, want 4, 4", got)
	}
	if job.Name != "flux-sample" || job.Spec.Template.Spec.Subdomain != "flux-sample" || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job %s subdomain %s mode %s, want an Indexed job flux-sample in subdomain flux-sample", job.Name, job.Spec.Template.Spec.Subdomain, *job.Spec.CompletionMode)
	}
	svc := desired(t, rsp, "service", &corev1.Service{})
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("service %+v, want headless publishing not-ready addresses", svc.Spec)
	}
	cm := desired(t, rsp, "entrypoint", &corev1.ConfigMap{})
	if !strings.Contains(cm.Data["broker.toml"], "hosts = [{host = 'flux-sample-[0-3]'}]") {
		t.Errorf("broker.toml does not list flux-sample-[0-3]:\n%s", cm.Data["broker.toml"])
	}
	sec := desired(t, rsp, "curve-cert", &corev1.Secret{})
	if _, err := curve.Parse(sec.Data[v1alpha2.CurveCertKey]); err != nil {
		t.Errorf("the Secret's certificate does not parse: %v", err)
	}

	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	want := map[string]any{"size": float64(4), "maximumSize": float64(4), "selector": "hpa-selector=flux-sample", "phase": "Pending", "job": map[string]any{"ready": float64(0), "succeeded": float64(0), "failed": float64(0)}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status: -want, +got:\n%s", diff)
	}
	if rsp.GetMeta().GetTtl().AsDuration() != TTL {
		t.Errorf("ttl %v, want %v", rsp.GetMeta().GetTtl(), durationpb.New(TTL))
	}
}

func TestRunFunctionKeepsObservedCertificate(t *testing.T) {
	c, err := curve.Generate(bytes.NewReader(bytes.Repeat([]byte{42}, 32)), curve.KV{Key: "name", Value: "flux-sample"})
	if err != nil {
		t.Fatal(err)
	}
	text := c.Marshal()
	observed := map[string]string{"curve-cert": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"flux-sample-curve-cert","namespace":"tenant-a"},"data":{"curve.cert":"` + base64.StdEncoding.EncodeToString(text) + `"}}`}

	first := run(t, req(xr(helloSpec, ""), nil, ""))
	again := run(t, req(xr(helloSpec, ""), observed, ""))

	got := desired(t, again, "curve-cert", &corev1.Secret{}).Data[v1alpha2.CurveCertKey]
	if !bytes.Equal(got, text) {
		t.Errorf("with an observed Secret the certificate must be read back, not regenerated:\nwant %s\ngot  %s", text, got)
	}
	if fresh := desired(t, first, "curve-cert", &corev1.Secret{}).Data[v1alpha2.CurveCertKey]; bytes.Equal(fresh, text) {
		t.Errorf("the first run should have generated its own certificate")
	}
	// Everything else is identical whatever the certificate: byte-for-byte
	// determinism keeps the Job's immutable template stable.
	if diff := cmp.Diff(first.GetDesired().GetResources()["job"], again.GetDesired().GetResources()["job"], protocmp.Transform()); diff != "" {
		t.Errorf("job changed between runs: -first, +again:\n%s", diff)
	}
}

func TestRunFunctionUserCertificateSecret(t *testing.T) {
	// The policy lets a claim read the Secret once the platform labels it.
	rsp, err := driver.RunRequest(context.Background(), New(WithRandom(entropy())),
		req(xr(`{"size":2,"flux":{"curveCertSecret":"shared-curve"},"containers":[{"image":"x","command":"hostname"}]}`, ""), nil, ""),
		[]*unstructured.Unstructured{object("Secret", "shared-curve", allowed)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rsp.GetDesired().GetResources()["curve-cert"]; ok {
		t.Errorf("with flux.curveCertSecret the function must not compose its own Secret")
	}
	job := desired(t, rsp, "job", &batchv1.Job{})
	found := false
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "shared-curve" {
			found = true
		}
	}
	if !found {
		t.Errorf("pods do not mount the claim's Secret shared-curve: %+v", job.Spec.Template.Spec.Volumes)
	}
}

func TestRunFunctionScaling(t *testing.T) {
	cases := map[string]struct {
		reason      string
		spec        string
		status      string
		wantSize    int32
		wantMax     float64
		wantWarning bool
	}{
		"Grow": {
			reason:   "Growing within maxSize changes parallelism and completions.",
			spec:     `{"size":3,"maxSize":6,"containers":[{"image":"x","command":"y"}]}`,
			status:   `{"maximumSize":6,"size":2}`,
			wantSize: 3, wantMax: 6,
		},
		"Clamp": {
			reason:   "Beyond the maximum fixed at creation the size is clamped, with a warning, not silently patched.",
			spec:     `{"size":9,"containers":[{"image":"x","command":"y"}]}`,
			status:   `{"maximumSize":4,"size":4}`,
			wantSize: 4, wantMax: 4, wantWarning: true,
		},
		"MaximumFixedAtCreation": {
			reason:   "A later maxSize does not move the maximum the broker config was sized for.",
			spec:     `{"size":2,"maxSize":10,"containers":[{"image":"x","command":"y"}]}`,
			status:   `{"maximumSize":4}`,
			wantSize: 2, wantMax: 4,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, req(xr(tc.spec, tc.status), nil, ""))
			job := desired(t, rsp, "job", &batchv1.Job{})
			if *job.Spec.Parallelism != tc.wantSize || *job.Spec.Completions != tc.wantSize {
				t.Errorf("%s\nparallelism %d completions %d, want %d", tc.reason, *job.Spec.Parallelism, *job.Spec.Completions, tc.wantSize)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if st["maximumSize"] != tc.wantMax || st["size"] != float64(tc.wantSize) {
				t.Errorf("%s\nstatus %v, want size %d maximumSize %v", tc.reason, st, tc.wantSize, tc.wantMax)
			}
			warned := false
			for _, r := range rsp.GetResults() {
				warned = warned || r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING
			}
			scaled := fnv1.Status_STATUS_CONDITION_TRUE
			if tc.wantWarning {
				scaled = fnv1.Status_STATUS_CONDITION_FALSE
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionScaled && c.GetStatus() != scaled {
					t.Errorf("%s\ncondition Scaled %v, want %v", tc.reason, c.GetStatus(), scaled)
				}
			}
			if warned != tc.wantWarning {
				t.Errorf("%s\nwarning %v, want %v: %v", tc.reason, warned, tc.wantWarning, rsp.GetResults())
			}
			cm := desired(t, rsp, "entrypoint", &corev1.ConfigMap{})
			if want := "flux-sample-[0-" + strconv.Itoa(int(tc.wantMax)-1) + "]"; cm.Data["hostlist"] != want {
				t.Errorf("%s\nhostlist %q, want %q: hosts are sized to the maximum", tc.reason, cm.Data["hostlist"], want)
			}
		})
	}
}

// observedWithJob is hello-world's composed objects as observed, the Job
// as given.
func observedWithJob(job string) map[string]string {
	return map[string]string{
		"job":        job,
		"service":    `{"apiVersion":"v1","kind":"Service","metadata":{"name":"flux-sample","namespace":"tenant-a"}}`,
		"entrypoint": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"flux-sample","namespace":"tenant-a"}}`,
		"curve-cert": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"flux-sample-curve-cert","namespace":"tenant-a"}}`,
	}
}

func TestRunFunctionReadiness(t *testing.T) {
	jobWith := func(ready int32, complete bool) string {
		job := &batchv1.Job{}
		job.APIVersion, job.Kind = "batch/v1", "Job"
		job.Name, job.Namespace = "flux-sample", "tenant-a"
		job.Status.Ready = ptr.To(ready)
		job.Status.Active = ready
		if complete {
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			job.Status.Succeeded = 4
		}
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := map[string]struct {
		reason    string
		spec      string
		job       string
		earlier   *fnv1.Ready // an earlier pipeline step's object, of this readiness
		wantReady fnv1.Ready
		wantPhase string
	}{
		"Starting": {
			reason: "Fewer brokers than the quorum: not ready, pending.",
			spec:   helloSpec, job: jobWith(3, false),
			wantReady: fnv1.Ready_READY_FALSE, wantPhase: "Pending",
		},
		"AllUp": {
			reason: "All brokers up: ready, running.",
			spec:   helloSpec, job: jobWith(4, false),
			wantReady: fnv1.Ready_READY_TRUE, wantPhase: "Running",
		},
		"Quorum": {
			reason: "minSize brokers are enough for Flux to start.",
			spec:   `{"size":4,"minSize":2,"containers":[{"image":"x","command":"y"}]}`, job: jobWith(2, false),
			wantReady: fnv1.Ready_READY_TRUE, wantPhase: "Running",
		},
		"Complete": {
			reason: "A completed Job is ready and the cluster succeeded.",
			spec:   helloSpec, job: jobWith(0, true),
			wantReady: fnv1.Ready_READY_TRUE, wantPhase: "Succeeded",
		},
		"EarlierStepUnready": {
			reason: "An object an earlier pipeline step composed without saying it is ready keeps the MiniCluster unready, as Crossplane would.",
			spec:   helloSpec, job: jobWith(4, false), earlier: ptr.To(fnv1.Ready_READY_UNSPECIFIED),
			wantReady: fnv1.Ready_READY_FALSE, wantPhase: "Running",
		},
		"EarlierStepReady": {
			reason: "An earlier step's ready object does not.",
			spec:   helloSpec, job: jobWith(4, false), earlier: ptr.To(fnv1.Ready_READY_TRUE),
			wantReady: fnv1.Ready_READY_TRUE, wantPhase: "Running",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := observedWithJob(tc.job)
			request := func() *fnv1.RunFunctionRequest {
				r := req(xr(tc.spec, ""), observed, "")
				if tc.earlier != nil {
					r.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{
						"earlier": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"}}`), Ready: *tc.earlier},
					}}
				}
				return r
			}
			rsp := run(t, request())
			if got := rsp.GetDesired().GetComposite().GetReady(); got != tc.wantReady {
				t.Errorf("%s\nMiniCluster ready %v, want %v", tc.reason, got, tc.wantReady)
			}
			delete(observed, "entrypoint")
			if got := run(t, request()).GetDesired().GetComposite().GetReady(); got != fnv1.Ready_READY_FALSE {
				t.Errorf("%s\nwithout its ConfigMap the MiniCluster is %v, want READY_FALSE", tc.reason, got)
			}
			for name, r := range rsp.GetDesired().GetResources() {
				if name == "earlier" {
					if tc.earlier != nil && r.GetReady() != *tc.earlier {
						t.Errorf("%s\nthe earlier step's object reported %v, want it kept as %v", tc.reason, r.GetReady(), *tc.earlier)
					}
					continue
				}
				if r.GetReady() != fnv1.Ready_READY_TRUE {
					t.Errorf("%s\n%s reported %v, want READY_TRUE (readiness is the composite's)", tc.reason, name, r.GetReady())
				}
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if st["phase"] != tc.wantPhase {
				t.Errorf("%s\nphase %v, want %s", tc.reason, st["phase"], tc.wantPhase)
			}
		})
	}
}

func TestRunFunctionInputDefaults(t *testing.T) {
	input := `{"apiVersion":"minicluster.fn.flux-framework.org/v1beta1","kind":"Input","defaults":{"fluxViewImage":"registry.example/flux-view:noble","imagePullSecrets":["regcred"],"nodeSelector":{"pool":"hpc"},"connectTimeout":"30s"}}`
	rsp := run(t, req(xr(helloSpec, ""), nil, input))
	pod := desired(t, rsp, "job", &batchv1.Job{}).Spec.Template.Spec
	if got := pod.InitContainers[0].Image; got != "registry.example/flux-view:noble" {
		t.Errorf("view image %q, want the platform's", got)
	}
	if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "regcred"}}, pod.ImagePullSecrets); diff != "" {
		t.Errorf("pull secrets: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pool": "hpc"}, pod.NodeSelector); diff != "" {
		t.Errorf("node selector: -want, +got:\n%s", diff)
	}
	// The claim leaves connectTimeout out; the schema has no default for it,
	// so the platform's applies.
	scripts := strings.Join(slices.Collect(maps.Values(desired(t, rsp, "entrypoint", &corev1.ConfigMap{}).Data)), "\n")
	if !strings.Contains(scripts, "tbon.connect_timeout=30s") {
		t.Errorf("the entrypoint does not set the platform's connect timeout (tbon.connect_timeout=30s)")
	}
}

func TestRunFunctionCleanup(t *testing.T) {
	cases := map[string]struct {
		reason  string
		spec    string
		status  string
		wantJob bool
		phase   string
	}{
		"Running": {
			reason:  "A running cluster with cleanup keeps its Job.",
			spec:    `{"size":2,"cleanup":true,"containers":[{"image":"x","command":"y"}]}`,
			status:  `{"maximumSize":2,"phase":"Running"}`,
			wantJob: true, phase: "Pending",
		},
		"Finished": {
			reason:  "Once finished, cleanup stops composing the Job (Crossplane deletes it) and keeps the phase.",
			spec:    `{"size":2,"cleanup":true,"containers":[{"image":"x","command":"y"}]}`,
			status:  `{"maximumSize":2,"phase":"Succeeded"}`,
			wantJob: false, phase: "Succeeded",
		},
		"FinishedWithoutCleanup": {
			reason:  "Without cleanup a finished cluster keeps its Job and pods, as upstream.",
			spec:    `{"size":2,"containers":[{"image":"x","command":"y"}]}`,
			status:  `{"maximumSize":2,"phase":"Succeeded"}`,
			wantJob: true, phase: "Pending",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, req(xr(tc.spec, tc.status), nil, ""))
			_, hasJob := rsp.GetDesired().GetResources()["job"]
			if hasJob != tc.wantJob {
				t.Errorf("%s\njob composed: %v, want %v", tc.reason, hasJob, tc.wantJob)
			}
			if _, ok := rsp.GetDesired().GetResources()["entrypoint"]; !ok {
				t.Errorf("%s\nthe configuration is kept", tc.reason)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if st["phase"] != tc.phase {
				t.Errorf("%s\nphase %v, want %s", tc.reason, st["phase"], tc.phase)
			}
		})
	}
}

func TestRunFunctionWarnings(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string
		want   string
	}{
		"InteractiveCommand": {
			reason: "A command that interactive mode never runs is pointed out, not silently ignored.",
			spec:   `{"size":2,"interactive":true,"containers":[{"image":"x","command":"echo hi"}]}`,
			want:   "spec.containers[0].command is not run",
		},
		"SidecarBrokerHook": {
			reason: "A broker hook on a container that does not run Flux does nothing, and says so.",
			spec:   `{"size":2,"containers":[{"image":"x","command":"y","runFlux":true},{"name":"side","image":"x","commands":{"brokerPre":"echo hi"}}]}`,
			want:   "spec.containers[1].commands.brokerPre has no effect",
		},
		"ArchiveNotSaved": {
			reason: "An archive path flux dump cannot write is only restored from, and says so.",
			spec:   `{"size":2,"archive":{"path":"/state/archive.sqlite"},"containers":[{"image":"x","command":"y"}]}`,
			want:   "spec.archive.path is restored from when it exists, but not saved",
		},
		"InteractiveScript": {
			reason: "A script that interactive mode never runs is named as the script, not as a command the user did not set.",
			spec:   `{"size":2,"interactive":true,"containers":[{"image":"x","commands":{"script":"echo hi"}}]}`,
			want:   "spec.containers[0].commands.script is not run",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, req(xr(tc.spec, ""), nil, ""))
			var got []string
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
					got = append(got, r.GetMessage())
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("%s\nwarnings %q, want one containing %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestTTL(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string // helloSpec if ""
		status string
		want   time.Duration
	}{
		"NoConditions": {
			reason: "A composite Crossplane watches as usual is composed again on any change: the long TTL.",
			want:   TTL,
		},
		"WatchCircuitClosed": {
			reason: "Responsive=True: Crossplane's circuit breaker passes the composite's watch events.",
			status: `{"conditions":[{"type":"Responsive","status":"True","reason":"WatchCircuitClosed"}]}`,
			want:   TTL,
		},
		"WatchCircuitOpen": {
			reason: "Responsive=False: the breaker drops watch events, a change of the spec included, so the composition must run again soon by itself.",
			status: `{"conditions":[{"type":"Ready","status":"True","reason":"Available"},{"type":"Responsive","status":"False","reason":"WatchCircuitOpen"}]}`,
			want:   WatchesDroppedTTL,
		},
		"WatchCircuitOpenBadSpec": {
			reason: "A Fatal result keeps the short TTL too: the fix the user applies may be dropped as well.",
			spec:   `{"size":0,"containers":[]}`,
			status: `{"conditions":[{"type":"Responsive","status":"False","reason":"WatchCircuitOpen"}]}`,
			want:   WatchesDroppedTTL,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec == "" {
				spec = helloSpec
			}
			rsp := run(t, req(xr(spec, tc.status), nil, ""))
			if diff := cmp.Diff(tc.want, rsp.GetMeta().GetTtl().AsDuration()); diff != "" {
				t.Errorf("%s\nTTL: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
