// Package function is the MiniCluster composition function: it decodes the
// composite resource, applies defaults, validates, and composes the Flux
// cluster's Kubernetes objects in the MiniCluster's namespace: the claim's
// (claim shape) or the namespaced composite's own (Crossplane v2 shape).
package function

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/policy"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// Condition types the function sets on the composite and its claim.
const (
	// ConditionValid is false while the claim has an error the function
	// refuses to compose.
	ConditionValid = "Valid"
	// ConditionScaled is false while spec.size exceeds the maximum size.
	ConditionScaled = "Scaled"

	// ReasonPolicy is the reason of Valid=False when the platform's
	// policy refuses the claim.
	ReasonPolicy = "Policy"
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
}

// Option configures a Function.
type Option func(*Function)

// WithLogger sets the logger.
func WithLogger(l logging.Logger) Option { return func(f *Function) { f.log = l } }

// WithRandom sets the entropy source of CURVE keys (tests make it
// deterministic).
func WithRandom(r io.Reader) Option { return func(f *Function) { f.rand = r } }

// New returns a Function.
func New(o ...Option) *Function {
	f := &Function{log: logging.NewNopLogger(), rand: rand.Reader}
	for _, fn := range o {
		fn(f)
	}
	return f
}

// RunFunction composes the objects of one MiniCluster.
func (f *Function) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, TTL)

	in := &v1beta1.Input{}
	if req.GetInput() != nil {
		if err := request.GetInput(req, in); err != nil {
			response.Fatal(rsp, errors.Wrap(err, "cannot get function input from the Composition's pipeline step"))
			return rsp, nil
		}
	}

	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composite resource"))
		return rsp, nil
	}
	log := f.log.WithValues("xr", oxr.Resource.GetName())
	if ttl := ttlFor(oxr.Resource.UnstructuredContent()); ttl != TTL {
		rsp.Meta.Ttl = durationpb.New(ttl)
	}

	// The rules the XRD states, exactly as the API server applies them
	// (defaults included); plan.New adds what a schema cannot say.
	if errs := f.specs.check(ctx, req.GetObserved().GetComposite().GetResource().GetFields()["spec"], oxr.Resource.UnstructuredContent()); len(errs) > 0 {
		fatal(rsp, errors.New(FormatErrors(errs)))
		return rsp, nil
	}

	mc, ns, err := Decode(oxr.Resource.UnstructuredContent())
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	if msg := pinnedRevision(oxr.Resource.UnstructuredContent()); msg != "" {
		refuse(rsp, msg)
		return rsp, nil
	}
	if errs := in.Defaults.ValidateFluxViews(); len(errs) > 0 {
		response.Fatal(rsp, errors.New("invalid function input in the Composition's pipeline step: "+strings.TrimPrefix(FormatErrors(errs), "invalid MiniCluster: ")))
		return rsp, nil
	}
	claimView := mc.Spec.Flux.Container.Image
	v1alpha2.SetDefaults(mc, in.Defaults.PlatformDefaults())
	pol := in.Policy.Effective()
	if rs := policy.Enforce(pol, mc); len(rs) > 0 {
		refuse(rsp, rs.Error())
		return rsp, nil
	}
	if w := chooseView(mc, claimView, in.Defaults); w != "" {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	if msg := queueConflict(mc); msg != "" {
		fatal(rsp, errors.New("invalid MiniCluster: "+msg))
		return rsp, nil
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composed resources"))
		return rsp, nil
	}
	// A MiniCluster Kueue admitted keeps the size it was admitted with
	// (kueue.go says why): it is planned at that size.
	admittedSize := keepAdmittedSize(mc, observedJob(observed))
	p, errs := plan.New(mc, plan.Facts{Namespace: ns, ImagePullSecrets: in.Defaults.ImagePullSecrets})
	if len(errs) > 0 {
		fatal(rsp, errors.New(FormatErrors(errs)))
		return rsp, nil
	}
	platform := append(append([]v1alpha2.Toleration(nil), in.Defaults.Tolerations...), pol.Tolerations.Enforced...)
	if rs := policy.Check(pol, mc, platform, runningPods(observed)); len(rs) > 0 {
		refuse(rsp, rs.Error())
		return rsp, nil
	}

	cert, err := f.curveCert(mc, observed)
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}

	if admittedSize != "" {
		response.ConditionFalse(rsp, ConditionScaled, ReasonAdmittedByKueue).WithMessage(admittedSize).TargetCompositeAndClaim()
	} else if p.Clamped() {
		msg := fmt.Sprintf("spec.size %d exceeds the maximum size %d fixed when this MiniCluster was created (the broker configuration declares %d hosts): running %d pods; lower spec.size, or re-create the MiniCluster with a larger spec.maxSize", p.RequestedSize, p.MaximumSize, p.MaximumSize, p.Size)
		response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
		response.ConditionFalse(rsp, ConditionScaled, "SizeAboveMaximum").WithMessage(msg).TargetCompositeAndClaim()
	} else {
		response.ConditionTrue(rsp, ConditionScaled, "Available").TargetCompositeAndClaim()
	}

	objs := render.Render(render.Input{Plan: p, CurveCert: cert})
	if msg, jobTaken, err := foreignObjects(req, rsp, p, objs, observed, string(oxr.Resource.GetUID())); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	} else if msg != "" {
		reason := "NameTaken"
		if jobTaken {
			reason = "JobExists" // typically the Flux Operator's, after a migration
		}
		response.Fatal(rsp, errors.New(msg))
		response.ConditionFalse(rsp, ConditionValid, reason).WithMessage(msg).TargetCompositeAndClaim()
		return rsp, nil
	}
	for _, w := range Warnings(mc) {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}

	// spec.cleanup: once the cluster has finished, its pods go away (the
	// Job and the services Pod are no longer composed, so Crossplane deletes
	// them) while the claim keeps its final phase.
	finished := mc.Status.Phase
	cleanedUp := mc.Spec.Cleanup && (finished == v1alpha2.PhaseSucceeded || finished == v1alpha2.PhaseFailed)
	if cleanedUp {
		kept := objs[:0]
		for _, o := range objs {
			if o.Name != render.KeyJob && o.Name != render.KeyServicesPod {
				kept = append(kept, o)
			}
		}
		objs = kept
		response.Normalf(rsp, "MiniCluster finished (%s); spec.cleanup removed its pods", finished).TargetCompositeAndClaim()
	}

	if a, err := admit(req, rsp, pol, in.Defaults.ImagePullSecrets, p, objs, observed); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot check the MiniCluster against the platform's policy and the namespace's Pod Security policy"))
		return rsp, nil
	} else if a.waiting {
		// Crossplane calls again at once with what was required; this
		// response is not used.
		return rsp, nil
	} else if a.policy {
		refuse(rsp, a.refused)
		return rsp, nil
	} else if a.refused != "" {
		fatal(rsp, errors.New(a.refused))
		return rsp, nil
	}

	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composed resources"))
		return rsp, nil
	}
	// Desired resources of earlier pipeline steps are kept, and count
	// towards the MiniCluster's readiness as Crossplane counts them; the
	// ones composed here replace any of the same name.
	job := observedJob(observed)
	clusterReady := true
	for _, o := range objs {
		u, err := toComposed(o.Object)
		if err != nil {
			response.Fatal(rsp, errors.Wrapf(err, "cannot convert %s to a composed resource", o))
			return rsp, nil
		}
		stampVersion(u)
		if o.Name == render.KeyJob {
			labelJobQueue(&u.Unstructured, QueueName(mc))
			if err := keepRunningJobSpec(u, observed[resource.Name(o.Name)]); err != nil {
				response.Fatal(rsp, errors.Wrap(err, "cannot compare the Job's immutable spec with the running one"))
				return rsp, nil
			}
		}
		if ready(o.Name, observed[resource.Name(o.Name)], job, p.ReadyQuorum) != resource.ReadyTrue {
			clusterReady = false
		}
		desired[resource.Name(o.Name)] = &resource.DesiredComposed{Resource: u, Ready: resource.ReadyTrue}
	}
	for _, d := range desired {
		if d.Ready != resource.ReadyTrue {
			clusterReady = false
		}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composed resources"))
		return rsp, nil
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composite resource"))
		return rsp, nil
	}
	st := status(p, observed, job)
	if cleanedUp {
		st.Phase = finished
	}
	if err := st.observeBrokers(req, rsp, p, job, oxr.Resource.UnstructuredContent()); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	// How the cluster ended (the Job's reason and message) has no status
	// field: it goes into the Finished condition.
	st.ReportFinished(rsp, oxr.Resource.UnstructuredContent())
	// Equivalent to dxr.Resource.SetValue("status", ...), without its JSON
	// round trip: the status is plain strings and integers, which become the
	// same protobuf numbers either way.
	dxr.Resource.Object["status"] = st.Object()
	// Readiness is the MiniCluster's, reported on the composite; every
	// composed object is reported ready. Crossplane takes an explicit
	// composite readiness over its composed objects', and it records an
	// event for every unready object on every composition run: the Job
	// alone would cost one each run until its brokers are up.
	dxr.Ready = resource.ReadyFalse
	if clusterReady {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composite resource"))
		return rsp, nil
	}

	response.ConditionTrue(rsp, ConditionValid, "Valid").TargetCompositeAndClaim()
	log.Debug("Composed MiniCluster", "namespace", ns, "size", p.Size, "maximumSize", p.MaximumSize, "phase", st.Phase)
	return rsp, nil
}

// fatal reports a problem the user must fix: as a Fatal result, which keeps
// every composed resource as it is (a bad update never deletes a running
// cluster), and as a condition on the claim that says what to do.
func fatal(rsp *fnv1.RunFunctionResponse, err error) {
	response.Fatal(rsp, err)
	response.ConditionFalse(rsp, ConditionValid, "InvalidSpec").WithMessage(err.Error()).TargetCompositeAndClaim()
}

// refuse reports what the platform's policy refuses, as fatal does, with
// the reason Policy: the claim asks for more than the platform allows, and
// the message names the policy key, the field and the fix.
func refuse(rsp *fnv1.RunFunctionResponse, msg string) {
	if !strings.Contains(msg, "nothing was composed or changed") {
		msg += "; nothing was composed or changed"
	}
	response.Fatal(rsp, errors.New(msg))
	response.ConditionFalse(rsp, ConditionValid, ReasonPolicy).WithMessage(msg).TargetCompositeAndClaim()
}

// pinnedRevision refuses a MiniCluster that picks its own revision of the
// Composition. The XRDs enforce the Composition, whose function input is
// the platform's policy; a revision pinned by hand (compositionUpdatePolicy
// Manual with a compositionRevisionRef) or picked by labels
// (compositionRevisionSelector, e.g. an old revision's hash) would run the
// Composition's input of another time, such as a policy since tightened.
// Crossplane keeps these fields at the top of a claim's spec (and copies
// them to its composite), and under spec.crossplane of a v2 composite.
func pinnedRevision(xr map[string]any) string {
	for _, base := range [][]string{{"spec"}, {"spec", "crossplane"}} {
		path := strings.Join(base, ".")
		if p, _, _ := unstructured.NestedString(xr, append(base, "compositionUpdatePolicy")...); p == "Manual" {
			return fmt.Sprintf("%s.compositionUpdatePolicy: refused by the platform's policy (the Composition the XRD enforces): Manual keeps a revision of the Composition, and of its policy, that the platform may since have replaced; remove it (Automatic follows the platform's Composition)", path)
		}
		if sel, ok, _ := unstructured.NestedFieldNoCopy(xr, append(base, "compositionRevisionSelector")...); ok && sel != nil {
			return fmt.Sprintf("%s.compositionRevisionSelector: refused by the platform's policy (the Composition the XRD enforces): a selector can pick an earlier revision of the Composition, and of its policy; remove it", path)
		}
	}
	return ""
}

// runningPods is the number of pods the observed Job runs (its
// parallelism), 0 when there is no Job yet.
func runningPods(observed map[resource.Name]resource.ObservedComposed) int32 {
	if _, ok := observed[resource.Name(render.KeyJob)]; !ok {
		return 0
	}
	if job := observedJob(observed); job != nil && job.Spec.Parallelism != nil && *job.Spec.Parallelism > 0 {
		return *job.Spec.Parallelism
	}
	return 1
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
