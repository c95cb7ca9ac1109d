package admission

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/podsecurity"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// Reasons of the Valid=False condition a refusal sets, in the room's
// vocabulary: the reasons are v1alpha2's (the API's contract), as the
// strings a Refused carries.
const (
	// ReasonPolicy: the platform's policy refuses what the MiniCluster
	// asks for.
	ReasonPolicy = string(v1alpha2.ReasonPolicy)
	// ReasonInvalidSpec: the MiniCluster cannot run as it is (here: the
	// namespace's own Pod Security label refuses its pods).
	ReasonInvalidSpec = string(v1alpha2.ReasonInvalidSpec)
	// ReasonForeignObject: Crossplane observes objects that are not this
	// MiniCluster's.
	ReasonForeignObject = string(v1alpha2.ReasonForeignObject)
	// ReasonUnclaimed: a claim-shape composite no claim made.
	ReasonUnclaimed = string(v1alpha2.ReasonUnclaimed)
	// ReasonNameTaken: an object of a name the MiniCluster composes
	// exists and is not its own.
	ReasonNameTaken = string(v1alpha2.ReasonNameTaken)
	// ReasonJobExists: ReasonNameTaken for the Job (typically the Flux
	// Operator's, after a migration).
	ReasonJobExists = string(v1alpha2.ReasonJobExists)
	// ReasonGangUnavailable: the Composition requires gang scheduling
	// (scheduling.gang: Required) and the cluster does not serve it.
	ReasonGangUnavailable = string(v1alpha2.ReasonGangUnavailable)
)

// nothingComposed ends every refusal: a refused MiniCluster composes
// nothing, and Crossplane keeps what exists as it is.
const nothingComposed = "; nothing was composed or changed"

// Refused is a MiniCluster the room refuses: the reason of Valid=False,
// and a message that names the policy key or the object, the field and
// the fix.
type Refused struct {
	Reason, Message string
}

func (r *Refused) Error() string { return r.Message }

// policyRefused is a refusal of the platform's policy.
func policyRefused(msg string) *Refused {
	if !strings.Contains(msg, nothingComposed) {
		msg += nothingComposed
	}
	return &Refused{Reason: ReasonPolicy, Message: msg}
}

// Names of the lookups: what the room asks of the cluster.
const (
	// LookupNamespace is the MiniCluster's Namespace: its labels set the
	// Pod Security level and may open NodePorts.
	LookupNamespace = "namespace"
	// LookupServiceAccount is the ServiceAccount the pods run as.
	LookupServiceAccount = "serviceaccount"
	// LookupSecret + a name is a Secret the MiniCluster reads.
	LookupSecret = "secret/"
	// LookupExisting + a composition resource name (render.Key*) is an
	// existing object of the name that resource takes.
	LookupExisting = "existing-"
	// LookupClaim is the claim of a claim-shape composite: its uid tells
	// the burst controller's certificate copy for it.
	LookupClaim = "claim"
)

// Lookup is one object the room needs from the cluster to decide.
type Lookup struct {
	// Name of the lookup (Lookup*), under which its answer comes back.
	Name string
	// APIVersion, Kind, Namespace ("" for a cluster-scoped kind) and
	// Object, the object's name.
	APIVersion, Kind, Namespace, Object string
}

// Input is everything one decision needs.
type Input struct {
	// Policy, Effective.
	Policy v1beta1.Policy
	// Defaults of the platform: the tolerations and pull secrets it adds
	// to every pod.
	Defaults v1beta1.Defaults
	// Self is the MiniCluster's composite.
	Self Self
	// Plan and Objects are what this run would compose.
	Plan    *plan.Plan
	Objects []render.Object
	// JobSpecHash is the hash of the immutable spec of the Job as
	// rendered now (the function's job-spec-hash annotation).
	JobSpecHash string
	// Gang is whether the brokers start as a gang (GangScheduling): the
	// lookups it needs are asked with the room's, and its refusal is the
	// room's.
	Gang Gang
	// Trust is what the room trusts of the observed objects (Trusted).
	Trust Trust
	// Answer is what the cluster answered to a lookup, by its name:
	// answered is false until it has, and found may then be empty.
	Answer func(lookup string) (found []*unstructured.Unstructured, answered bool)

	// answers are those of this decision's lookups.
	answers map[string][]*unstructured.Unstructured
}

// Decision is the room's verdict for one run.
type Decision struct {
	// Refused, when the MiniCluster may not be composed; nil to compose.
	Refused *Refused
	// Lookups the room needs, asked in every run that judges something
	// (Crossplane answers by calling again with what was asked).
	Lookups []Lookup
	// Waiting: some lookup is not answered yet; nothing is decided, and
	// nothing may be composed.
	Waiting bool
	// Kept: the MiniCluster's own running Job was admitted with this very
	// spec (its job-spec hash is what the spec renders) and keeps
	// running as it was admitted, whatever the policy says now.
	Kept bool
	// Warnings and Audits the namespace's Pod Security warn and audit
	// labels give, as the API server would.
	Warnings, Audits []string
}

// Decide judges everything this run would compose, in one pass, and
// trusts nothing for existing. Crossplane observes what the composite's
// references name, so first every observed object must be this
// MiniCluster's own (Trusted); then its size, which may change while it
// runs. Only its own Job, rendered from the spec it was admitted with,
// is kept as it runs: a policy change never tears down what runs, and
// nothing else gets that pass. Every object composed new in this run (all
// of them for a new MiniCluster; the services Pod or a Service that is
// gone; a Job whose spec the admitted one no longer renders) is judged by
// the whole policy, against the cluster's objects it names, for names
// another object holds, and by Pod Security, before anything is composed.
func Decide(in Input) Decision {
	d := decide(in)
	d.Lookups = append(append([]Lookup(nil), in.Gang.Lookups...), d.Lookups...)
	d.Waiting = d.Waiting || in.Gang.Waiting
	if d.Refused == nil && !d.Waiting {
		d.Refused = in.Gang.Refused
	}
	return d
}

func decide(in Input) Decision {
	var d Decision
	if r := in.Trust.ForeignRefused(in.Self); r != nil {
		d.Refused = r
		return d
	}
	pol, mc := in.Policy, in.Plan.MiniCluster
	if rs := CheckSize(pol, mc, in.Trust.running()); len(rs) > 0 {
		d.Refused = policyRefused(rs.Error())
		return d
	}
	d.Kept = in.keptJob()
	judged := in.judged(d.Kept)
	if len(judged) == 0 {
		return d
	}
	platform := append(append([]v1alpha2.Toleration(nil), in.Defaults.Tolerations...), pol.Tolerations.Enforced...)
	if rs := Check(pol, mc, platform); len(rs) > 0 {
		d.Refused = policyRefused(rs.Error())
		return d
	}

	exempt := Exempt{PullSecrets: in.Defaults.ImagePullSecrets, OwnCertificate: renders(in.Objects, render.KeyCurveCert)}
	need := Needs(pol, mc, exempt)
	ns := in.Plan.Namespace
	d.Lookups = append(d.Lookups, Lookup{Name: LookupNamespace, APIVersion: "v1", Kind: "Namespace", Object: ns})
	if need.ServiceAccount != "" {
		d.Lookups = append(d.Lookups, Lookup{Name: LookupServiceAccount, APIVersion: "v1", Kind: "ServiceAccount", Namespace: ns, Object: need.ServiceAccount})
	}
	for _, s := range need.Secrets {
		d.Lookups = append(d.Lookups, Lookup{Name: LookupSecret + s, APIVersion: "v1", Kind: "Secret", Namespace: ns, Object: s})
	}
	claimLookup := !in.Self.Namespaced && readsCertificateCopy(mc, exempt)
	if claimLookup {
		d.Lookups = append(d.Lookups, Lookup{Name: LookupClaim, APIVersion: v1alpha2.SchemeGroupVersion.String(), Kind: v1alpha2.ClaimKind, Namespace: ns, Object: in.Self.MiniCluster})
	}
	for _, o := range judged {
		if _, own := in.Trust.Own[o.Name]; own {
			continue // this MiniCluster's, judged for what it would become
		}
		gvk := o.Object.GetObjectKind().GroupVersionKind()
		d.Lookups = append(d.Lookups, Lookup{Name: LookupExisting + o.Name, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Object: objectName(o)})
	}
	answers := map[string][]*unstructured.Unstructured{}
	for _, l := range d.Lookups {
		found, answered := in.Answer(l.Name)
		if !answered {
			d.Waiting = true
		}
		answers[l.Name] = found
	}
	if d.Waiting {
		return d
	}
	in.answers = answers

	if r := in.nameTaken(judged); r != nil {
		d.Refused = r
		return d
	}
	c := Cluster{CompositeUID: in.Self.UID, NamespaceLabels: in.labelsOf(LookupNamespace), Secrets: map[string]Secret{}}
	switch {
	case in.Self.Namespaced:
		c.ClaimUID = in.Self.UID // the tenant's MiniCluster is the composite
	case claimLookup:
		if found := in.answers[LookupClaim]; len(found) > 0 {
			c.ClaimUID = string(found[0].GetUID())
		}
	}
	if c.NamespaceLabels == nil {
		c.NamespaceLabels = map[string]string{}
	}
	if need.ServiceAccount != "" {
		c.ServiceAccount = in.labelsOf(LookupServiceAccount)
	}
	for _, s := range need.Secrets {
		if found := in.answers[LookupSecret+s]; len(found) > 0 {
			sec := Secret{Labels: found[0].GetLabels(), ForClaimUID: found[0].GetAnnotations()[v1alpha2.AnnotationBurstClaimUID]}
			if owner := metav1.GetControllerOf(found[0]); owner != nil {
				sec.ControllerUID = string(owner.UID)
			}
			c.Secrets[s] = sec
		}
	}
	if rs := CheckCluster(pol, mc, exempt, c); len(rs) > 0 {
		d.Refused = policyRefused(rs.Error())
		return d
	}
	in.podSecurity(&d, judged, c.NamespaceLabels)
	return d
}

// keptJob tells whether the MiniCluster's own Job runs the spec it was
// admitted with: the hash of what this spec renders is the one the
// function put on the Job when it composed it. Only Crossplane writes the
// Job, with what the function rendered; a Job from another spec (a
// function upgrade that renders pods differently, a Job of another time)
// is judged again.
func (in Input) keptJob() bool {
	o, ok := in.Trust.Own[render.KeyJob]
	return ok && in.JobSpecHash != "" && o.GetAnnotations()[v1alpha2.AnnotationJobSpecHash] == in.JobSpecHash
}

// judged are the objects of this run the room judges: every rendered
// object but those this MiniCluster already has, and its Job unless kept.
func (in Input) judged(kept bool) []render.Object {
	var out []render.Object
	for _, o := range in.Objects {
		_, own := in.Trust.Own[o.Name]
		if own && (o.Name != render.KeyJob || kept) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// renders tells whether objs hold the composition resource key.
func renders(objs []render.Object, key string) bool {
	for _, o := range objs {
		if o.Name == key {
			return true
		}
	}
	return false
}

func objectName(o render.Object) string {
	if m, ok := o.Object.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// labelsOf are the labels of the object a lookup found, nil when it found
// none.
func (in Input) labelsOf(lookup string) map[string]string {
	found := in.answers[lookup]
	if len(found) == 0 {
		return nil
	}
	l := found[0].GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	return l
}

// nameTaken refuses objects of this run whose names an object that is
// not this MiniCluster's holds: the Flux Operator's Job of a MiniCluster
// of the same name, after this project's XRD took over the operator's
// CRD; another MiniCluster's object whose name this one's derives to (a
// bursting a composes Service a-lead-broker while another MiniCluster is
// named a-lead-broker); or an object made by hand. Crossplane would apply
// over it, failing on a second controller or taking over a hand-made
// object, and say so only in events. The Job comes first, with reason
// JobExists: after a migration it is the one that matters.
func (in Input) nameTaken(judged []render.Object) *Refused {
	var msgs []string
	jobTaken := false
	for _, o := range judged {
		for _, existing := range in.answers[LookupExisting+o.Name] {
			owner := metav1.GetControllerOf(existing)
			if owner != nil && owner.UID == types.UID(in.Self.UID) {
				continue // ours: its composite lost track of it, and finds it again
			}
			c := Conflict{
				Kind: existing.GetKind(), Name: existing.GetName(), Namespace: in.Plan.Namespace, Owner: owner,
				ComposedFor: existing.GetLabels()[labelComposite],
				ClaimName:   existing.GetLabels()[v1alpha2.LabelClaimName],
				Field:       NameField(in.Plan.MiniCluster, o.Name),
			}
			if c.Kind == "" {
				c.Kind = o.Object.GetObjectKind().GroupVersionKind().Kind
			}
			if o.Name == render.KeyJob {
				msgs = append([]string{c.Message(in.Plan.MiniCluster.Name)}, msgs...)
				jobTaken = true
				continue
			}
			msgs = append(msgs, c.Message(in.Plan.MiniCluster.Name))
		}
	}
	switch {
	case len(msgs) == 0:
		return nil
	case jobTaken:
		return &Refused{Reason: ReasonJobExists, Message: strings.Join(msgs, "; ")}
	}
	return &Refused{Reason: ReasonNameTaken, Message: strings.Join(msgs, "; ")}
}

// labelComposite is the label Crossplane puts on every object it
// composes, naming the composite resource.
const labelComposite = "crossplane.io/composite"

// podSecurity checks the pods of the judged objects against the
// namespace's Pod Security labels, with the policy's default level where
// the namespace sets none, as the API server's admission plugin checks
// each pod the Job controller creates; warn gives warnings and audit
// events, as they do on the API server.
func (in Input) podSecurity(d *Decision, judged []render.Object, nsLabels map[string]string) {
	ts := PodSecurityTemplates(in.Plan, judged)
	if len(ts) == 0 {
		return
	}
	labels, byPolicy := podsecurity.WithDefaultLevel(nsLabels, in.Policy.PodSecurity.DefaultLevel)
	results, labelErrs, err := podsecurity.Check(labels, ts...)
	if err != nil {
		d.Refused = &Refused{Reason: ReasonInvalidSpec, Message: fmt.Sprintf("cannot check the MiniCluster's pods against Pod Security: %v%s", err, nothingComposed)}
		return
	}
	for _, e := range labelErrs {
		d.Warnings = append(d.Warnings, fmt.Sprintf("namespace %s: %s: the API server reads an unparsable Pod Security level as restricted and an unparsable version as latest", in.Plan.Namespace, e.Error()))
	}
	for _, r := range results {
		msg := PodSecurityMessage(in.Plan, r, byPolicy && r.Mode == podsecurity.ModeEnforce)
		switch r.Mode {
		case podsecurity.ModeEnforce:
			if byPolicy {
				d.Refused = policyRefused(msg)
			} else {
				d.Refused = &Refused{Reason: ReasonInvalidSpec, Message: msg + nothingComposed}
			}
			return
		case podsecurity.ModeWarn:
			d.Warnings = append(d.Warnings, msg)
		default:
			// The API server only records audit annotations on the request.
			d.Audits = append(d.Audits, msg)
		}
	}
}
