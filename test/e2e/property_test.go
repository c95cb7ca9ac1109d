package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/corpus"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Settings of TestPropertyValidMeansAccepted.
const (
	// EnvPropertyReport names the file the full report is written to
	// (default: a new temporary directory, printed).
	EnvPropertyReport = "MC_PROPERTY_REPORT"
	// EnvPropertySeed seeds the generated corpus (default 1).
	EnvPropertySeed = "MC_PROPERTY_SEED"
	// EnvPropertyClaims is the number of generated claims (default 1000).
	EnvPropertyClaims = "MC_PROPERTY_CLAIMS"
	// EnvPropertyDeadline bounds the checks (a Go duration, default 3m):
	// no new claim is started after it.
	EnvPropertyDeadline = "MC_PROPERTY_DEADLINE"

	propMinClaims  = 500
	propWorkers    = 8
	propFieldOwner = "property-test"
	propNamespace  = "property"
	propXRUID      = "6f1a6a2e-0000-4000-8000-000000000000"
)

// Causes of a property failure, in report order.
const (
	causeRejected    = "Valid=True, but the API server rejects a composed object"
	causeJobPod      = "Valid=True, but the API server rejects a pod the Job would create"
	causeNamespace   = "Valid=True, but a composed object is outside the claim's namespace"
	causeNoPath      = "Fatal, but the message names no field path present in the claim"
	causeSchemaGap   = "the API server rejects the claim, but the CLI composes it"
	causeServerPath  = "the API server rejects the claim, the CLI too, but without the server's field path"
	causeRenderError = "driver.Run returned an error, not a result"
	causeInfra       = "the API server could not be asked"
)

var propCauses = []string{causeRejected, causeJobPod, causeNamespace, causeNoPath, causeSchemaGap, causeServerPath, causeRenderError, causeInfra}

// propFailure is one failure of the property.
type propFailure struct {
	cause   string
	object  string // Kind/name, or "" for the claim itself
	group   string // what the failure is, generalised, for the summary
	message string
}

// propResult is what one claim came to.
type propResult struct {
	claim          *corpus.Claim
	schemaRejected string // the server's message, "" if it accepted the claim
	fatal          string // the CLI's Fatal message, "" if it composed
	objects        int    // composed objects applied
	pods           int    // Job pods dry-run created
	failures       []propFailure
}

// TestPropertyValidMeansAccepted checks that Valid=True means Kubernetes
// accepts every object the function composes, against the real API server, over every example claim and a seeded
// corpus of claims derived from them (test/corpus):
//
//   - the claim is dry-run created, as a tenant would create it (kubectl's
//     strict field validation); when the server rejects it, driver.Run must be Fatal too, and name a field path
//     the server named;
//   - when the server accepts it and the function says Valid, every composed
//     object (with the labels and owner reference Crossplane adds) passes a
//     server-side dry-run apply, and so do the first and last pods the Job
//     controller would create from the Job (hostname <name>-<index>,
//     completion-index label and annotation, through pod admission);
//   - when the function says Fatal, its message names a field path present
//     in the claim (or a required one whose parent is present).
//
// Every failure is a line of the report: claim and mutations → object →
// the server's message. The full report goes to $MC_PROPERTY_REPORT.
func TestPropertyValidMeansAccepted(t *testing.T) {
	cp := controlPlane(t)
	createNamespace(t, cp, propNamespace)

	seed := uint64(1)
	if v := os.Getenv(EnvPropertySeed); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", EnvPropertySeed, err)
		}
		seed = s
	}
	n := 1000
	if v := os.Getenv(EnvPropertyClaims); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s: %v", EnvPropertyClaims, err)
		}
	}
	budget := 3 * time.Minute
	if v := os.Getenv(EnvPropertyDeadline); v != "" {
		var err error
		if budget, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s: %v", EnvPropertyDeadline, err)
		}
	}

	examples, err := corpus.LoadExamples(filepath.Join(cp.Options().RepoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	claims := append(examples, corpus.Generate(examples, corpus.Options{Seed: seed, N: n})...)
	t.Logf("checking %d claims (%d examples, %d generated with seed %d), %d workers, deadline %s",
		len(claims), len(examples), n, seed, propWorkers, budget)

	p := &propRun{cp: cp, ns: propNamespace}
	t.Cleanup(p.cleanup)
	start := time.Now()
	deadline := start.Add(budget)
	results := make([]*propResult, len(claims))
	var next atomic.Int64
	var late atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < propWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(claims) {
					return
				}
				if time.Now().After(deadline) {
					late.Store(true)
					return
				}
				results[i] = p.check(claims[i])
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	var checked, rejected, fatal, valid, objects, pods int
	var failing []*propResult
	for _, r := range results {
		if r == nil {
			continue
		}
		checked++
		objects += r.objects
		pods += r.pods
		switch {
		case r.schemaRejected != "":
			rejected++
		case r.fatal != "":
			fatal++
		default:
			valid++
		}
		if len(r.failures) > 0 {
			failing = append(failing, r)
		}
	}
	stats := fmt.Sprintf("%d of %d claims checked in %s (seed %d): %d rejected by the API server's schema, %d Fatal, %d Valid (%d objects and %d Job pods dry-run applied); %d claims fail the property",
		checked, len(claims), elapsed.Round(100*time.Millisecond), seed, rejected, fatal, valid, objects, pods, len(failing))
	t.Log(stats)
	switch {
	case late.Load():
		t.Logf("the deadline (%s) stopped the checks after %d claims", budget, checked)
	case checked < propMinClaims:
		t.Errorf("only %d claims checked, want at least %d", checked, propMinClaims)
	}

	if len(failing) == 0 {
		return
	}
	summary := propSummary(failing)
	report := propReport(stats, summary, propOutcomes(results), failing)
	path := os.Getenv(EnvPropertyReport)
	if path == "" {
		dir, err := os.MkdirTemp("", "property-report-")
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(dir, "property-report.txt")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Errorf("cannot write the report: %v", err)
	}
	var lines strings.Builder
	for _, r := range failing {
		for _, f := range r.failures {
			fmt.Fprintf(&lines, "%s → %s → %s\n", r.claim.Describe(), propOr(f.object, "claim"), propShort(f.message, 240))
		}
	}
	t.Logf("failures, one line each (claim and mutations → object → message):\n%s", lines.String())
	t.Errorf("the property fails for %d of %d claims checked; full report in %s\n%s", len(failing), checked, path, summary)
}

// propRun checks claims against one control plane.
type propRun struct {
	cp *harness.ControlPlane
	ns string

	mu             sync.Mutex
	made           map[string]bool // ServiceAccounts and RuntimeClasses created
	runtimeClasses []string
}

// check runs one claim through the API server and the CLI.
func (p *propRun) check(c *corpus.Claim) *propResult {
	res := &propResult{claim: c}
	fail := func(cause, object, group, msg string) {
		res.failures = append(res.failures, propFailure{cause: cause, object: object, group: group, message: msg})
	}
	c = c.Copy()
	if md, ok := c.Object["metadata"].(map[string]any); ok {
		md["namespace"] = p.ns
	} else {
		c.Object["metadata"] = map[string]any{"namespace": p.ns}
	}
	y, err := c.YAML()
	if err != nil {
		fail(causeRenderError, "", "cannot encode the claim", err.Error())
		return res
	}

	// a. What a tenant would do: create the claim, with kubectl's default
	// field validation (Strict: unknown and duplicate fields are errors).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := &unstructured.Unstructured{Object: corpus.DeepCopy(c.Object).(map[string]any)}
	serverErr := p.cp.Client.Create(ctx, u, client.DryRunAll, client.FieldValidation("Strict"))
	if serverErr != nil && !propIsRejection(serverErr) {
		fail(causeInfra, "", "dry-run create of the claim", serverErr.Error())
		return res
	}
	if serverErr != nil {
		res.schemaRejected = serverErr.Error()
	}

	// b. What the CLI (and so the function) says.
	out, err := driver.Run(ctx, function.New(), driver.Options{Claim: y})
	if err != nil {
		// The CLI refuses outright what it cannot read as a claim (no
		// metadata.name, say): right, when the server refuses it too for a
		// reason the CLI names.
		if serverErr != nil && propContainsAny(err.Error(), propServerPaths(serverErr)) {
			res.fatal = err.Error()
			return res
		}
		msg := err.Error()
		if serverErr != nil {
			// Refused, but as an error rather than a Fatal result.
			msg = fmt.Sprintf("server: %s\nCLI error: %s\n(names the server's path: %v)", serverErr, err, propContainsAny(err.Error(), propServerPaths(serverErr)))
		}
		fail(causeRenderError, "", propGroupMessage(err.Error()), msg)
		return res
	}
	var fatals []string
	for _, r := range out.Results {
		if m, ok := strings.CutPrefix(r, "FATAL: "); ok {
			fatals = append(fatals, m)
		}
	}
	if out.Fatal {
		res.fatal = strings.Join(fatals, "\n")
		if res.fatal == "" {
			res.fatal = strings.Join(out.Results, "\n")
		}
	}

	if serverErr != nil {
		paths := propServerPaths(serverErr)
		switch {
		case !out.Fatal:
			fail(causeSchemaGap, "", propGroup("claim", serverErr), serverErr.Error())
		case !propContainsAny(res.fatal, paths):
			fail(causeServerPath, "", propGroup("claim", serverErr),
				fmt.Sprintf("server: %s\nCLI: %s\n(server paths %q)", serverErr, res.fatal, paths))
		}
		return res
	}

	// d. Fatal: the message names a field the user wrote.
	if out.Fatal {
		if _, ok := corpus.PresentPath(c.Object, res.fatal); !ok {
			fail(causeNoPath, "", propGroupMessage(res.fatal), res.fatal)
		}
		return res
	}

	// c. Valid: every composed object is accepted.
	xrName := propXRName(c)
	for _, obj := range out.Objects {
		obj = obj.DeepCopy()
		id := obj.GetKind() + "/" + obj.GetName()
		if ns := obj.GetNamespace(); ns != p.ns {
			fail(causeNamespace, id, obj.GetKind()+" namespace", fmt.Sprintf("namespace %q, the claim's is %q", ns, p.ns))
			continue
		}
		propCrossplaneMetadata(obj, c, xrName)
		p.prepare(ctx, obj)
		err := p.cp.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(propFieldOwner), client.ForceOwnership, client.DryRunAll)
		if err != nil {
			if !propIsRejection(err) {
				fail(causeInfra, id, "dry-run apply", err.Error())
				continue
			}
			fail(causeRejected, id, propGroup(obj.GetKind(), err), err.Error())
			continue
		}
		res.objects++
		if obj.GetKind() != "Job" {
			continue
		}
		// The Job is accepted; so must be the pods its controller makes.
		job := &batchv1.Job{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, job); err != nil {
			fail(causeInfra, id, "cannot convert the Job", err.Error())
			continue
		}
		last := int(ptrOr(job.Spec.Completions, 1)) - 1
		if out.Composite != nil {
			if m, ok, _ := unstructured.NestedInt64(out.Composite.Object, "status", "maximumSize"); ok && int(m)-1 > last {
				last = int(m) - 1
			}
		}
		for _, index := range propIndexes(last) {
			pod := propJobPod(job, index)
			p.preparePod(ctx, &pod.Spec)
			if err := p.cp.Client.Create(ctx, pod, client.DryRunAll); err != nil {
				pid := fmt.Sprintf("Pod/%s<index %d>", pod.GenerateName, index)
				if !propIsRejection(err) {
					fail(causeInfra, pid, "dry-run create of a Job pod", err.Error())
					continue
				}
				fail(causeJobPod, pid, propGroup("Pod(Job)", err), err.Error())
				continue
			}
			res.pods++
		}
	}
	return res
}

func propIndexes(last int) []int {
	if last <= 0 {
		return []int{0}
	}
	return []int{0, last}
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// propIsRejection tells an answer of the API server about the object from
// a failure to reach it.
func propIsRejection(err error) bool {
	var st kerrors.APIStatus
	if !errors.As(err, &st) {
		// Client-side refusals (e.g. an unknown kind, no namespace on a
		// namespaced kind) are about the object too; a failed connection
		// or a timeout is not.
		var ne net.Error
		var ue *url.Error
		return !errors.As(err, &ne) && !errors.As(err, &ue) &&
			!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	}
	switch kerrors.ReasonForError(err) {
	case metav1.StatusReasonTimeout, metav1.StatusReasonServerTimeout, metav1.StatusReasonServiceUnavailable, metav1.StatusReasonTooManyRequests:
		return false
	}
	return true
}

// propServerPaths are the field paths the server named in its rejection.
func propServerPaths(err error) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	var st kerrors.APIStatus
	if errors.As(err, &st) && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			if strings.ContainsAny(c.Field, ".[") {
				add(c.Field)
			}
			for _, p := range corpus.FieldPaths(c.Message) {
				add(p)
			}
		}
	}
	if len(out) == 0 {
		for _, p := range corpus.FieldPaths(err.Error()) {
			add(p)
		}
	}
	if len(out) == 0 && st != nil && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			if c.Field != "<nil>" {
				add(c.Field)
			}
		}
	}
	return out
}

func propContainsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// propGroup names what a rejection is about: the kind, and each cause's
// generalised field and type (or the message without names and numbers).
func propGroup(kind string, err error) string {
	var st kerrors.APIStatus
	if errors.As(err, &st) && st.Status().Details != nil && len(st.Status().Details.Causes) > 0 {
		var parts []string
		for _, c := range st.Status().Details.Causes {
			if c.Field == "<nil>" && strings.Contains(c.Message, "some validation rules were not checked") {
				continue
			}
			part := corpus.Generalize(c.Field) + " " + string(c.Type)
			if c.Type == metav1.CauseTypeFieldValueInvalid || c.Type == metav1.CauseTypeForbidden || c.Field == "" {
				// The detail after the value says which rule.
				part += ": " + propGroupMessage(propDetail(c.Message))
			}
			parts = append(parts, part)
		}
		sort.Strings(parts)
		parts = compactStrings(parts)
		return kind + " " + strings.Join(parts, " + ")
	}
	return kind + " " + propGroupMessage(err.Error())
}

func compactStrings(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

var (
	quotedRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	numbersRE = regexp.MustCompile(`[0-9]+`)
	valueRE   = regexp.MustCompile(`^Invalid value: (?:"(?:[^"\\]|\\.)*"|\S+): `)
)

// propDetail is a cause message without its leading "Invalid value: x: ".
func propDetail(msg string) string { return valueRE.ReplaceAllString(msg, "") }

// propGroupMessage shortens a message to what it says, without names,
// values and numbers.
func propGroupMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "invalid MiniCluster: ")
	msg = quotedRE.ReplaceAllString(msg, `"…"`)
	msg = numbersRE.ReplaceAllString(msg, "N")
	msg = strings.Join(strings.Fields(msg), " ")
	return propShort(msg, 110)
}

func propShort(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func propOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// propXRName is the name Crossplane gives the claim's composite: the
// claim's name and "-", cut to 58 characters, and 5 random ones.
func propXRName(c *corpus.Claim) string {
	name, _, _ := unstructured.NestedString(c.Object, "metadata", "name")
	base := name + "-"
	if len(base) > 58 {
		base = base[:58]
	}
	return base + "x7k2p"
}

// propCrossplaneMetadata adds what Crossplane adds to a composed resource:
// the composite and claim labels and the composite as controller owner.
func propCrossplaneMetadata(obj *unstructured.Unstructured, c *corpus.Claim, xrName string) {
	name, _, _ := unstructured.NestedString(c.Object, "metadata", "name")
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range map[string]string{
		"crossplane.io/composite":       xrName,
		"crossplane.io/claim-name":      name,
		"crossplane.io/claim-namespace": propNamespace,
	} {
		if _, ok := labels[k]; !ok {
			labels[k] = v
		}
	}
	obj.SetLabels(labels)
	if len(obj.GetOwnerReferences()) == 0 {
		t, b := true, true
		obj.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: "flux-framework.org/v1alpha2", Kind: "XMiniCluster", Name: xrName,
			UID: propXRUID, Controller: &t, BlockOwnerDeletion: &b,
		}})
	}
}

// prepare makes what a composed pod or Job refers to exist, as it would in
// a tenant's namespace: its ServiceAccount and RuntimeClass. Admission
// rejects a pod whose ServiceAccount or RuntimeClass is missing, which says
// nothing about the function.
func (p *propRun) prepare(ctx context.Context, obj *unstructured.Unstructured) {
	var path []string
	switch obj.GetKind() {
	case "Pod":
		path = []string{"spec"}
	case "Job":
		path = []string{"spec", "template", "spec"}
	default:
		return
	}
	spec := &corev1.PodSpec{}
	m, _, _ := unstructured.NestedMap(obj.Object, path...)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, spec); err == nil {
		p.preparePod(ctx, spec)
	}
}

func (p *propRun) preparePod(ctx context.Context, spec *corev1.PodSpec) {
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" && len(validation.IsDNS1123Subdomain(sa)) == 0 && p.once("sa/"+sa) {
		err := p.cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: sa}})
		if err != nil && !kerrors.IsAlreadyExists(err) {
			p.forget("sa/" + sa)
		}
	}
	if rc := ptrOr(spec.RuntimeClassName, ""); rc != "" && len(validation.IsDNS1123Subdomain(rc)) == 0 && p.once("rc/"+rc) {
		err := p.cp.Client.Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: rc}, Handler: "runc"})
		switch {
		case err == nil:
			p.mu.Lock()
			p.runtimeClasses = append(p.runtimeClasses, rc)
			p.mu.Unlock()
		case !kerrors.IsAlreadyExists(err):
			p.forget("rc/" + rc)
		}
	}
}

func (p *propRun) once(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.made == nil {
		p.made = map[string]bool{}
	}
	if p.made[key] {
		return false
	}
	p.made[key] = true
	return true
}

func (p *propRun) forget(key string) {
	p.mu.Lock()
	delete(p.made, key)
	p.mu.Unlock()
}

// cleanup deletes the RuntimeClasses (cluster-scoped) the run created; the
// ServiceAccounts stay in the test's namespace.
func (p *propRun) cleanup() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rc := range p.runtimeClasses {
		_ = p.cp.Client.Delete(context.Background(), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: rc}})
	}
}

// propJobPod is the pod the Job controller (Kubernetes 1.34) creates for a
// completion index of an Indexed Job: the template with the index as
// annotation, label and JOB_COMPLETION_INDEX, the tracking finalizer, the
// Job as owner, hostname <job>-<index> and a generated name.
func propJobPod(job *batchv1.Job, index int) *corev1.Pod {
	const indexKey = "batch.kubernetes.io/job-completion-index"
	t := job.Spec.Template.DeepCopy()
	for _, cs := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for i := range cs {
			has := false
			for _, e := range cs[i].Env {
				has = has || e.Name == "JOB_COMPLETION_INDEX"
			}
			if !has {
				cs[i].Env = append(cs[i].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + indexKey + "']"},
				}})
			}
		}
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Annotations[indexKey] = strconv.Itoa(index)
	t.Labels[indexKey] = strconv.Itoa(index)
	if job.Spec.BackoffLimitPerIndex != nil {
		t.Annotations["batch.kubernetes.io/job-index-failure-count"] = "0"
	}
	t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, index)
	suffix := fmt.Sprintf("-%d-", index)
	generateName := job.Name + suffix
	if len(generateName) > 58 {
		generateName = generateName[:58-len(suffix)] + suffix
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName,
			Namespace:       job.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      append(t.Finalizers, "batch.kubernetes.io/job-tracking"),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: t.Spec,
	}
}

// propSummary counts failures by cause and by what they are about, with the
// mutations that led to them.
func propSummary(failing []*propResult) string {
	type group struct {
		claims    map[string]bool
		mutations map[string]int
		example   string
	}
	byCause := map[string]map[string]*group{}
	claimsByCause := map[string]map[string]bool{}
	for _, r := range failing {
		for _, f := range r.failures {
			if byCause[f.cause] == nil {
				byCause[f.cause] = map[string]*group{}
				claimsByCause[f.cause] = map[string]bool{}
			}
			claimsByCause[f.cause][r.claim.ID] = true
			g := byCause[f.cause][f.group]
			if g == nil {
				g = &group{claims: map[string]bool{}, mutations: map[string]int{}, example: r.claim.Describe() + " → " + propOr(f.object, "claim") + " → " + propShort(f.message, 400)}
				byCause[f.cause][f.group] = g
			}
			if !g.claims[r.claim.ID] {
				g.claims[r.claim.ID] = true
				kinds := r.claim.Kinds()
				if len(kinds) == 0 {
					kinds = []string{"(example)"}
				}
				for _, k := range kinds {
					g.mutations[k]++
				}
			}
		}
	}
	var b strings.Builder
	for _, cause := range propCauses {
		groups := byCause[cause]
		if len(groups) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n== %s: %d claims\n", cause, len(claimsByCause[cause]))
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if a, c := len(groups[keys[i]].claims), len(groups[keys[j]].claims); a != c {
				return a > c
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			g := groups[k]
			ms := make([]string, 0, len(g.mutations))
			for m, n := range g.mutations {
				ms = append(ms, fmt.Sprintf("%s×%d", m, n))
			}
			sort.Strings(ms)
			fmt.Fprintf(&b, "%5d  %s\n       mutations: %s\n       e.g. %s\n", len(g.claims), k, strings.Join(ms, ", "), g.example)
		}
	}
	return b.String()
}

// propReport is the full report: statistics, summary, and every failure
// with the claim it came from.
func propReport(stats, summary, outcomes string, failing []*propResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TestPropertyValidMeansAccepted\n%s\n\nSUMMARY (claims per cause and group)\n%s\n\nOUTCOMES BY MUTATION (claims with the mutation)\n%s\n\nFAILURES\n", stats, summary, outcomes)
	for _, r := range failing {
		fmt.Fprintf(&b, "\n---- %s\n", r.claim.Describe())
		if r.schemaRejected != "" {
			fmt.Fprintf(&b, "server rejected the claim: %s\n", r.schemaRejected)
		}
		if r.fatal != "" {
			fmt.Fprintf(&b, "CLI Fatal: %s\n", r.fatal)
		}
		for _, f := range r.failures {
			fmt.Fprintf(&b, "* %s\n  object: %s\n  group: %s\n  message: %s\n", f.cause, propOr(f.object, "claim"), f.group, f.message)
		}
		if y, err := r.claim.YAML(); err == nil && len(y) <= 16<<10 {
			fmt.Fprintf(&b, "claim:\n%s", y)
		} else if err == nil {
			fmt.Fprintf(&b, "claim: %d bytes of YAML, left out (regenerate it from the seed and %s)\n", len(y), r.claim.ID)
		}
	}
	return b.String()
}

// propOutcomes counts, for every mutation, the claims it was applied to that
// the server rejected, that the function refused, that it composed, and
// that fail the property: which mutations the corpus exercises, and how.
func propOutcomes(results []*propResult) string {
	type counts struct{ rejected, fatal, valid, failing int }
	by := map[string]*counts{}
	for _, r := range results {
		if r == nil {
			continue
		}
		kinds := r.claim.Kinds()
		if len(kinds) == 0 {
			kinds = []string{"(example)"}
		}
		seen := map[string]bool{}
		for _, k := range kinds {
			if seen[k] {
				continue
			}
			seen[k] = true
			c := by[k]
			if c == nil {
				c = &counts{}
				by[k] = c
			}
			switch {
			case r.schemaRejected != "":
				c.rejected++
			case r.fatal != "":
				c.fatal++
			default:
				c.valid++
			}
			if len(r.failures) > 0 {
				c.failing++
			}
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-30s %8s %8s %8s %8s\n", "mutation", "rejected", "Fatal", "Valid", "failing")
	for _, k := range keys {
		c := by[k]
		fmt.Fprintf(&b, "%-30s %8d %8d %8d %8d\n", k, c.rejected, c.fatal, c.valid, c.failing)
	}
	return b.String()
}
