package function

import (
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/podsecurity"
	"github.com/flux-framework/minicluster-crossplane/internal/policy"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// Names of the requirements: the MiniCluster's Namespace, whose labels set
// its Pod Security policy and may open NodePorts, the ServiceAccount its
// pods run as, and each Secret it reads (requiredSecret + name).
const (
	errAdmit = "cannot check the MiniCluster against the platform's policy and the namespace's Pod Security policy"

	requiredNamespace      = "namespace"
	requiredServiceAccount = "serviceaccount"
	requiredSecret         = "secret/"
)

// admit decides what needs the cluster's objects: the ServiceAccount and
// Secrets the claim names (policy.serviceAccounts, policy.secrets), the
// namespace's labels (policy.nodePorts), and the pods the MiniCluster
// composes checked against the namespace's Pod Security labels, with the
// policy's default level where the namespace sets none, as the API
// server's admission plugin would check each pod the Job controller
// creates. warn gives warnings and audit an event, as they do on the API
// server.
//
// Crossplane answers requirements by calling the function again at once,
// in the same reconcile, and uses only the answer's response: until then
// nothing is composed. It asks only until the composite observes its Job,
// so that a running MiniCluster's reconciles cost nothing more, and its
// running pods are never judged by a policy that came after them
// (policy.Check still refuses it a larger size).
func admit(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, pol v1beta1.Policy, platformPullSecrets []string, p *plan.Plan, objs []render.Object, observed map[resource.Name]resource.ObservedComposed) error {
	if _, ok := observed[resource.Name(render.KeyJob)]; ok {
		return nil
	}
	mc := p.MiniCluster
	need := policy.Needs(pol, mc, platformPullSecrets)
	ns := p.Namespace
	sel := func(kind, name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: "v1", Kind: kind, Namespace: ptr.To(ns), Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	}
	nsSel := sel("Namespace", ns)
	nsSel.Namespace = nil // a Namespace is cluster-scoped
	require(rsp, requiredNamespace, nsSel)
	if need.ServiceAccount != "" {
		require(rsp, requiredServiceAccount, sel("ServiceAccount", need.ServiceAccount))
	}
	for _, s := range need.Secrets {
		require(rsp, requiredSecret+s, sel("Secret", s))
	}

	// Only labels are read: a Secret's data never leaves this function.
	labelsOf := func(name string) (labels map[string]string, found, answered bool, err error) {
		rs, answered, err := request.GetRequiredResource(req, name)
		if err != nil || !answered || len(rs) == 0 {
			return nil, false, answered, errors.Wrapf(err, "cannot read the %s Crossplane returned", name)
		}
		labels = rs[0].Resource.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		return labels, true, true, nil
	}
	var c policy.Cluster
	nsLabels, _, answered, err := labelsOf(requiredNamespace)
	if err != nil {
		return errors.Wrap(err, errAdmit)
	}
	all := answered
	c.NamespaceLabels = nsLabels
	if need.ServiceAccount != "" {
		l, _, answered, err := labelsOf(requiredServiceAccount)
		if err != nil {
			return errors.Wrap(err, errAdmit)
		}
		all = all && answered
		c.ServiceAccount = l
	}
	c.Secrets = map[string]map[string]string{}
	for _, s := range need.Secrets {
		l, found, answered, err := labelsOf(requiredSecret + s)
		if err != nil {
			return errors.Wrap(err, errAdmit)
		}
		all = all && answered
		if found {
			c.Secrets[s] = l
		}
	}
	if !all {
		return errWaiting
	}
	if rs := policy.CheckCluster(pol, mc, platformPullSecrets, c); len(rs) > 0 {
		return refused(rs.Error())
	}

	ts := observe.PodSecurityTemplates(p, objs)
	if len(ts) == 0 {
		return nil
	}
	labels, byPolicy := podsecurity.WithDefaultLevel(nsLabels, pol.PodSecurity.DefaultLevel)
	results, labelErrs, err := podsecurity.Check(labels, ts...)
	if err != nil {
		return errors.Wrap(err, errAdmit)
	}
	for _, e := range labelErrs {
		response.Warning(rsp, errors.Errorf("namespace %s: %s: the API server reads an unparsable Pod Security level as restricted and an unparsable version as latest", p.Namespace, e.Error())).TargetCompositeAndClaim()
	}
	for _, r := range results {
		msg := observe.PodSecurityMessage(p, r, byPolicy && r.Mode == podsecurity.ModeEnforce)
		switch r.Mode {
		case podsecurity.ModeEnforce:
			if byPolicy {
				return refused(msg)
			}
			return invalid(msg + "; nothing was composed or changed")
		case podsecurity.ModeWarn:
			response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
		default:
			// The API server only records audit annotations on the request.
			response.Normal(rsp, msg).TargetCompositeAndClaim()
		}
	}
	return nil
}
