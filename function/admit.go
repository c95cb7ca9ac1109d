package function

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/pod-security-admission/api"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
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

	ts := templates(p, objs)
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
		msg := podSecurityMessage(p, r, byPolicy && r.Mode == podsecurity.ModeEnforce)
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

// podSecurityMessage names the policy and the label (or the platform's
// policy key) that sets it, each violation, and the claim fields that fix
// it.
func podSecurityMessage(p *plan.Plan, r podsecurity.Result, byPolicy bool) string {
	verb := map[string]string{podsecurity.ModeEnforce: "refuses", podsecurity.ModeWarn: "warns about", podsecurity.ModeAudit: "audits"}[r.Mode]
	vs := make([]string, 0, len(r.Violations))
	for _, v := range r.Violations {
		vs = append(vs, v.Pods+": "+v.String())
	}
	label := map[string]string{podsecurity.ModeEnforce: api.EnforceLevelLabel, podsecurity.ModeWarn: api.WarnLevelLabel, podsecurity.ModeAudit: api.AuditLevelLabel}[r.Mode]
	msg := fmt.Sprintf("namespace %s sets Pod Security %s (label %s), which %s the MiniCluster's pods: %s", p.Namespace, r.Policy(), label, verb, strings.Join(vs, "; "))
	if byPolicy {
		msg = fmt.Sprintf("refused by the platform's policy (policy.podSecurity.defaultLevel: %s, for namespace %s, which has no %s label): Pod Security %s refuses the MiniCluster's pods: %s; "+
			"to run them as they are, ask your platform team to label the namespace %s=privileged (or the level they need)",
			r.Level, p.Namespace, api.EnforceLevelLabel, r.Policy(), strings.Join(vs, "; "), api.EnforceLevelLabel)
	}
	if r.Level == api.LevelRestricted && !p.Restricted {
		msg += ". A MiniCluster whose containers run as a uid other than 0 (spec.pod.securityContext.runAsUser, or each container's securityContext.runAsUser) and that asks for nothing privileged gets pods that pass restricted"
	}
	return msg
}

// templates are the pod templates the MiniCluster composes (the Job's, and
// the services Pod's if composed), each part mapped to the claim field it
// comes from.
func templates(p *plan.Plan, objs []render.Object) []podsecurity.Template {
	s := &p.MiniCluster.Spec
	var out []podsecurity.Template
	for _, o := range objs {
		switch obj := o.Object.(type) {
		case *batchv1.Job:
			t := podsecurity.Template{
				Name: "the broker pods", Meta: obj.Spec.Template.ObjectMeta, Spec: obj.Spec.Template.Spec,
				Pod:        field.NewPath("spec", "pod"),
				Containers: map[string]*field.Path{s.Flux.Container.Name: field.NewPath("spec", "flux", "container")},
				Volumes:    map[string]*field.Path{},
			}
			mapContainers(&t, v1alpha2.Containers(s.Containers), field.NewPath("spec", "containers"), p.MiniCluster.Name)
			out = append(out, t)
		case *corev1.Pod:
			t := podsecurity.Template{
				Name: "the services Pod", Meta: obj.ObjectMeta, Spec: obj.Spec,
				Pod:        field.NewPath("spec", "pod"),
				Containers: map[string]*field.Path{},
				Volumes:    map[string]*field.Path{},
			}
			mapContainers(&t, v1alpha2.Containers(s.Services), field.NewPath("spec", "services"), "")
			out = append(out, t)
		}
	}
	return out
}

// mapContainers maps each container and each volume it declares to its
// claim path. The Flux runner's container takes the MiniCluster's name.
func mapContainers(t *podsecurity.Template, cs []*v1alpha2.MiniClusterContainer, p *field.Path, runnerName string) {
	for i, c := range cs {
		name := c.Name
		if c.RunFlux && runnerName != "" {
			name = runnerName
		}
		t.Containers[name] = p.Index(i)
		if sc := c.SecurityContext; len(sc.AddCapabilities) > 0 && (sc.Capabilities == nil || len(sc.Capabilities.Add) == 0) {
			if t.AddCapabilities == nil {
				t.AddCapabilities = map[string]bool{}
			}
			t.AddCapabilities[name] = true
		}
		for k := range c.Volumes {
			if _, ok := t.Volumes[k]; !ok {
				t.Volumes[k] = p.Index(i).Child("volumes").Key(k)
			}
		}
	}
}
