// Package function is the MiniCluster composition function, the adapter
// between Crossplane and the domain: it reads the composite resource and
// what Crossplane observed, asks Crossplane for the cluster objects a
// decision needs (required resources), and calls the domain in order:
// internal/schema and v1alpha2.SetDefaults, internal/policy, plan.New,
// render.Render, and observe.Observe for the status. It composes the Flux
// cluster's objects in the MiniCluster's namespace: the claim's (claim
// shape) or the namespaced composite's own (Crossplane v2 shape).
package function

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// The conditions and reasons the function writes itself, as the strings
// the SDK takes: v1alpha2 defines each (observe's conditions carry
// v1alpha2's types, converted in writeConditions).
const (
	// ConditionValid is false while the claim has an error the function
	// refuses to compose.
	ConditionValid = string(v1alpha2.ConditionValid)
	// ConditionScaled is false while spec.size exceeds the maximum size.
	ConditionScaled = string(v1alpha2.ConditionScaled)

	// ReasonPolicy is the reason of Valid=False when the platform's
	// policy refuses the claim.
	ReasonPolicy = string(v1alpha2.ReasonPolicy)

	// reasonValid is the reason of Valid=True.
	reasonValid = string(v1alpha2.ReasonValid)
	// reasonInvalidSpec is the reason of Valid=False for a user's mistake.
	reasonInvalidSpec = string(v1alpha2.ReasonInvalidSpec)
)

// Function composes MiniClusters.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
	// rand is the entropy of new CURVE keys.
	rand io.Reader

	// validCerts are certificates already validated (see validCert).
	certsMu    sync.Mutex
	validCerts map[string]struct{}

	specs specChecker

	// now is the time observe judges a start by (tests set it).
	now func() time.Time
}

// Option configures a Function.
type Option func(*Function)

// WithLogger sets the logger.
func WithLogger(l logging.Logger) Option { return func(f *Function) { f.log = l } }

// WithRandom sets the entropy source of CURVE keys (tests make it
// deterministic).
func WithRandom(r io.Reader) Option { return func(f *Function) { f.rand = r } }

// WithClock sets the clock observe judges how long brokers have been
// starting by.
func WithClock(now func() time.Time) Option { return func(f *Function) { f.now = now } }

// New returns a Function.
func New(o ...Option) *Function {
	f := &Function{log: logging.NewNopLogger(), rand: rand.Reader, now: time.Now}
	for _, fn := range o {
		fn(f)
	}
	return f
}

// RunFunction composes the objects of one MiniCluster and reports its
// status. Whatever stops it is reported in one place (fail): a user's
// mistake or a refusal also sets Valid=False, naming the field and the fix.
func (f *Function) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, TTL)
	if err := f.run(ctx, req, rsp); err != nil {
		fail(rsp, err)
	}
	return rsp, nil
}

// run is RunFunction, one step a line: read the MiniCluster, sort what
// Crossplane observes into its own objects and the rest, plan it, render
// its objects, have the admission room judge them, compose them, and
// report its status.
func (f *Function) run(ctx context.Context, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	in, err := input(req)
	if err != nil {
		return err
	}
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get observed composite resource")
	}
	xr := oxr.Resource.UnstructuredContent()
	if ttl := ttlFor(xr); ttl != TTL {
		rsp.Meta.Ttl = durationpb.New(ttl)
	}
	pol := in.Policy.Effective()
	mc, ns, err := f.miniCluster(ctx, req, rsp, in, pol, xr)
	if err != nil {
		return err
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		return errors.Wrap(err, "cannot get observed composed resources")
	}
	self := admission.Self{
		UID: string(oxr.Resource.GetUID()), Kind: oxr.Resource.GetKind(), Name: oxr.Resource.GetName(),
		Namespaced: oxr.Resource.GetNamespace() != "", MiniCluster: mc.Name, Namespace: ns,
	}
	trust := admission.Trusted(self, observedObjects(observed))

	gang := admission.GangScheduling(in.Scheduling.Effective(), trust, answerFrom(req))
	p, errs := plan.New(mc, plan.Facts{
		Namespace: ns, ImagePullSecrets: in.Defaults.ImagePullSecrets, AdmittedSize: trust.AdmittedSize(),
		Gang: gang.On, GangMinCount: gang.MinCount,
	})
	if len(errs) > 0 {
		return invalid(FormatErrors(errs))
	}
	cert, err := f.curveCert(mc, trust.Own)
	if err != nil {
		return invalid(err.Error())
	}
	objs := render.Render(render.Input{Plan: p, CurveCert: cert})
	desired, err := toDesired(objs, trust.Own)
	if err != nil {
		return err
	}
	d := admission.Decide(admission.Input{
		Policy: pol, Defaults: in.Defaults, Self: self, Plan: p, Objects: objs,
		JobSpecHash: desired.jobSpecHash, Trust: trust, Gang: gang, Answer: answerFrom(req),
	})
	if err := report(rsp, d); err != nil {
		return err
	}

	scaled, clamped := observe.Scaled(p)
	if clamped != "" {
		response.Warning(rsp, errors.New(clamped)).TargetCompositeAndClaim()
	}
	writeConditions(rsp, scaled)
	for _, w := range plan.Warnings(mc) {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	if p.CleanedUp {
		response.Normalf(rsp, "MiniCluster finished (%s); spec.cleanup removed its pods", mc.Status.Phase).TargetCompositeAndClaim()
	}
	keys, earlierReady, err := compose(req, rsp, desired)
	if err != nil {
		return err
	}
	o := observedOf(xr, trust.Own)
	if err := readForStatus(req, rsp, p, &o, f.now()); err != nil {
		return err
	}
	report := observe.Observe(p, o, keys)
	report.Ready = report.Ready && earlierReady
	if err := writeStatus(req, rsp, report); err != nil {
		return err
	}
	response.ConditionTrue(rsp, ConditionValid, reasonValid).TargetCompositeAndClaim()
	f.log.Debug("Composed MiniCluster", "xr", oxr.Resource.GetName(), "namespace", ns, "size", p.Size, "maximumSize", p.MaximumSize, "phase", report.Status.Phase)
	return nil
}

// report asks Crossplane for what the admission room looks up, and says
// what it decided: its Pod Security warnings and audits, and, when it did
// not let the MiniCluster be composed, why (a refusal) or that it waits
// for Crossplane's answers.
func report(rsp *fnv1.RunFunctionResponse, d admission.Decision) error {
	for _, l := range d.Lookups {
		sel := &fnv1.ResourceSelector{ApiVersion: l.APIVersion, Kind: l.Kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: l.Object}}
		if l.Namespace != "" {
			sel.Namespace = ptr.To(l.Namespace)
		}
		require(rsp, l.Name, sel)
	}
	switch {
	case d.Waiting:
		return errWaiting
	case d.Refused != nil:
		return &invalidError{reason: d.Refused.Reason, msg: d.Refused.Message}
	}
	for _, w := range d.Warnings {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	for _, a := range d.Audits {
		response.Normal(rsp, a).TargetCompositeAndClaim()
	}
	return nil
}

// answerFrom reads what Crossplane answered to a lookup from req.
func answerFrom(req *fnv1.RunFunctionRequest) func(string) ([]*unstructured.Unstructured, bool) {
	return func(name string) ([]*unstructured.Unstructured, bool) {
		found, answered, err := request.GetRequiredResource(req, name)
		if err != nil || !answered {
			// An answer that does not decode is no answer: nothing is
			// composed until Crossplane sends one that does.
			return nil, false
		}
		out := make([]*unstructured.Unstructured, 0, len(found))
		for _, r := range found {
			out = append(out, r.Resource)
		}
		return out, true
	}
}

// observedObjects are the observed composed resources by composition
// resource name.
func observedObjects(observed map[resource.Name]resource.ObservedComposed) map[string]*unstructured.Unstructured {
	out := make(map[string]*unstructured.Unstructured, len(observed))
	for name, o := range observed {
		if o.Resource != nil {
			out[string(name)] = &o.Resource.Unstructured
		}
	}
	return out
}

// input is the function input of the Composition's pipeline step.
func input(req *fnv1.RunFunctionRequest) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if req.GetInput() == nil {
		return in, nil
	}
	if err := request.GetInput(req, in); err != nil {
		return nil, errors.Wrap(err, "cannot get function input from the Composition's pipeline step")
	}
	if errs := in.Defaults.ValidateFluxViews(); len(errs) > 0 {
		return nil, errors.New("invalid function input in the Composition's pipeline step: " + strings.TrimPrefix(FormatErrors(errs), "invalid MiniCluster: "))
	}
	return in, nil
}

// miniCluster reads the MiniCluster from the composite xr: checked against
// the XRD's schema exactly as the API server applies it (defaults
// included), defaulted with the platform's defaults, its Flux view chosen,
// and checked against the platform's policy. plan.New adds what a schema
// cannot say.
func (f *Function) miniCluster(ctx context.Context, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in *v1beta1.Input, pol v1beta1.Policy, xr map[string]any) (*v1alpha2.MiniCluster, string, error) {
	if errs := f.specs.check(ctx, req.GetObserved().GetComposite().GetResource().GetFields()["spec"], xr); len(errs) > 0 {
		return nil, "", invalid(FormatErrors(errs))
	}
	if r := admission.Composite(xr); r != nil {
		return nil, "", &invalidError{reason: r.Reason, msg: r.Message}
	}
	mc, ns, err := Decode(xr)
	if err != nil {
		return nil, "", invalid(err.Error())
	}
	claimView := mc.Spec.Flux.Container.Image
	v1alpha2.SetDefaults(mc, in.Defaults.PlatformDefaults())
	if rs := admission.Enforce(pol, mc); len(rs) > 0 {
		return nil, "", refused(rs.Error())
	}
	if w := chooseView(mc, claimView, in.Defaults); w != "" {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	return mc, ns, nil
}

// rendered are the rendered objects as desired composed resources, in
// render order, with the hash of the Job's immutable spec as rendered.
type rendered struct {
	keys        []string
	objects     []*composed.Unstructured
	jobSpecHash string
}

// toDesired converts objs into desired composed resources. Of the
// MiniCluster's own objects, the Job keeps the immutable spec of the
// running one when the function would now render another
// (keepRunningJobSpec), and the Job and the services Pod keep their
// deadline (keepRunningDeadline).
func toDesired(objs []render.Object, own map[string]*unstructured.Unstructured) (rendered, error) {
	r := rendered{keys: make([]string, 0, len(objs)), objects: make([]*composed.Unstructured, 0, len(objs))}
	for _, o := range objs {
		u, err := toComposed(o.Object)
		if err != nil {
			return r, errors.Wrapf(err, "cannot convert %s to a composed resource", o)
		}
		for _, f := range o.Beyond {
			if err := unstructured.SetNestedField(u.Object, f.Value, f.Path...); err != nil {
				return r, errors.Wrapf(err, "cannot set %s of %s", strings.Join(f.Path, "."), o)
			}
		}
		stampVersion(u)
		switch o.Name {
		case render.KeyJob:
			if r.jobSpecHash, err = keepRunningJobSpec(u, own[render.KeyJob]); err != nil {
				return r, errors.Wrap(err, "cannot compare the Job's immutable spec with the running one")
			}
			keepRunningDeadline(u, own[render.KeyJob])
		case render.KeyServicesPod:
			keepRunningDeadline(u, own[render.KeyServicesPod])
		}
		r.keys = append(r.keys, o.Name)
		r.objects = append(r.objects, u)
	}
	return r, nil
}

// compose sets the desired composed resources: r, and those of earlier
// pipeline steps, which are kept (r's replace any of the same name). It
// returns the keys of r, and whether the resources of earlier steps are
// ready: they count towards the MiniCluster's readiness as Crossplane
// counts them.
func compose(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, r rendered) ([]string, bool, error) {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return nil, false, errors.Wrap(err, "cannot get desired composed resources")
	}
	earlierReady := true
	for _, d := range desired {
		earlierReady = earlierReady && d.Ready == resource.ReadyTrue
	}
	for i, u := range r.objects {
		// Every composed object is reported ready: the MiniCluster's
		// readiness is reported on the composite (writeStatus).
		desired[resource.Name(r.keys[i])] = &resource.DesiredComposed{Resource: u, Ready: resource.ReadyTrue}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return nil, false, errors.Wrap(err, "cannot set desired composed resources")
	}
	return r.keys, earlierReady, nil
}

// writeStatus writes what observe reported: the composite's status and
// readiness, the conditions and the warnings.
//
// Readiness is the MiniCluster's, reported on the composite; every
// composed object is reported ready. Crossplane takes an explicit
// composite readiness over its composed objects', and it records an event
// for every unready object on every composition run: the Job alone would
// cost one each run until its brokers are up.
func writeStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, r observe.Report) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get desired composite resource")
	}
	// Equivalent to dxr.Resource.SetValue("status", ...), without its JSON
	// round trip: the status is plain strings and integers, which become the
	// same protobuf numbers either way.
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r.Status)
	if err != nil {
		return errors.Wrap(err, "cannot convert the MiniCluster's status")
	}
	// The Job's counts go out when they are 0 too. Crossplane applies the
	// status with server-side apply: an empty job object, after counts the
	// apply owned, leaves job null, which the API server refuses, and the
	// whole status with it (a running cluster whose brokers all went
	// unready kept saying Running, all brokers up).
	st["job"] = map[string]any{
		"ready":     int64(r.Status.Job.Ready),
		"succeeded": int64(r.Status.Job.Succeeded),
		"failed":    int64(r.Status.Job.Failed),
	}
	dxr.Resource.Object["status"] = st
	dxr.Ready = resource.ReadyFalse
	if r.Ready {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set desired composite resource")
	}
	writeConditions(rsp, r.Conditions...)
	for _, w := range r.Warnings {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	return nil
}

// errWaiting: Crossplane has not yet answered the function's requirements.
// It calls again at once with what was required and uses only that
// response, so nothing is reported.
var errWaiting = errors.New("waiting for Crossplane to answer the requirements")

// invalidError is a MiniCluster the function refuses to compose: a Fatal
// result, which keeps every composed resource as it is (a bad update never
// deletes a running cluster), and Valid=False with reason, which says on
// the claim what to do.
type invalidError struct {
	reason, msg string
}

func (e *invalidError) Error() string { return e.msg }

// invalid is a user's mistake (reason InvalidSpec).
func invalid(msg string) error { return &invalidError{reason: reasonInvalidSpec, msg: msg} }

// refused is what the platform's policy refuses (reason Policy): the claim
// asks for more than the platform allows, and the message names the
// policy key, the field and the fix.
func refused(msg string) error {
	if !strings.Contains(msg, "nothing was composed or changed") {
		msg += "; nothing was composed or changed"
	}
	return &invalidError{reason: ReasonPolicy, msg: msg}
}

// fail reports what stopped a composition run.
func fail(rsp *fnv1.RunFunctionResponse, err error) {
	if errors.Is(err, errWaiting) {
		return
	}
	response.Fatal(rsp, err)
	var inv *invalidError
	if errors.As(err, &inv) {
		response.ConditionFalse(rsp, ConditionValid, inv.reason).WithMessage(inv.msg).TargetCompositeAndClaim()
	}
}

// FormatErrors joins field errors into one message, each naming its field.
func FormatErrors(errs field.ErrorList) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return "invalid MiniCluster: " + strings.Join(msgs, "; ")
}

// Decode reads the MiniCluster and the namespace its objects go to from a
// composite resource of either shape:
//
//   - Crossplane v2 (a namespaced XR: metadata.namespace is set): the
//     tenant's MiniCluster is the composite itself, so its name and
//     namespace are the XR's own. Claim labels on it are ignored: on a
//     namespaced XR they are whatever the tenant wrote.
//   - claims (a cluster-scoped XR): the name and namespace of its claim,
//     from the labels Crossplane sets, else spec.claimRef.
//
// The namespace always comes from where the tenant's object lives, so a
// tenant cannot place objects in another namespace.
func Decode(xr map[string]any) (*v1alpha2.MiniCluster, string, error) {
	b, err := json.Marshal(xr)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot encode composite resource")
	}
	mc := &v1alpha2.MiniCluster{}
	if err := json.Unmarshal(b, mc); err != nil {
		return nil, "", errors.Wrap(err, "cannot decode composite resource as a MiniCluster: check the types of its spec fields")
	}
	if ns := mc.GetNamespace(); ns != "" {
		if mc.GetName() == "" {
			return nil, "", errors.Errorf("composite resource in namespace %q has no metadata.name", ns)
		}
		return mc, ns, nil
	}
	labels := mc.GetLabels()
	name, ns := labels[v1alpha2.LabelClaimName], labels[v1alpha2.LabelClaimNamespace]
	if name == "" || ns == "" {
		var ref struct {
			Spec struct {
				ClaimRef *struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"claimRef"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(b, &ref); err == nil && ref.Spec.ClaimRef != nil {
			name, ns = ref.Spec.ClaimRef.Name, ref.Spec.ClaimRef.Namespace
		}
	}
	if name == "" || ns == "" {
		return nil, "", errors.Errorf("composite resource %q has no claim and no namespace: create a MiniCluster in a namespace (the cluster's objects live in the MiniCluster's namespace)", mc.GetName())
	}
	mc.Name = name
	mc.Namespace = ns
	return mc, ns, nil
}
