// Package function is the MiniCluster composition function, the adapter
// between Crossplane and the domain: it reads the composite resource and
// what Crossplane observed, asks Crossplane for the cluster objects a
// decision needs (required resources), and calls the domain in order:
// internal/schema and v1alpha2.SetDefaults, internal/policy, plan.New,
// render.Render, and observe.Observe for the status. It composes the Flux
// cluster's objects in the MiniCluster's namespace: the claim's (claim
// shape) or the namespaced composite's own (Crossplane v2 shape).
//
// The files follow run's steps: input.go reads the function input and the
// MiniCluster (decode.go: from either shape of composite), admit.go has
// the admission room decide, desired.go composes the rendered objects,
// observe.go reads what the status needs and status.go writes it;
// refuse.go reports what stops a run, and requirements.go names everything
// the function asks Crossplane for.
package function

import (
	"context"
	"crypto/rand"
	"io"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/internal/admission"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
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
