package function

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/pod-security-admission/api"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/podsecurity"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// requiredNamespace names the requirement for the MiniCluster's Namespace,
// whose labels set its Pod Security policy.
const requiredNamespace = "namespace"

// podSecurity checks the pods the MiniCluster composes against its
// namespace's Pod Security labels, as the API server's admission plugin
// would check each pod the Job controller creates, and returns why enforce
// refuses them ("" when it does not). warn gives warnings and audit an
// event, as they do on the API server.
//
// Crossplane answers the requirement on the next call: until then nothing
// is known and nothing is held back. It asks only until the composite
// observes its Job, as foreignJob does, so that a running MiniCluster's
// reconciles cost nothing more, and its running pods are never judged by a
// policy that came after them.
func podSecurity(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, objs []render.Object, observed map[resource.Name]resource.ObservedComposed) (string, error) {
	if _, ok := observed[resource.Name(render.KeyJob)]; ok {
		return "", nil
	}
	ts := templates(p, objs)
	if len(ts) == 0 {
		return "", nil
	}
	require(rsp, requiredNamespace, &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Namespace",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: p.Namespace},
	})
	found, answered, err := request.GetRequiredResource(req, requiredNamespace)
	if err != nil {
		return "", errors.Wrap(err, "cannot read the Namespace Crossplane returned")
	}
	if !answered || len(found) == 0 {
		return "", nil
	}
	results, labelErrs, err := podsecurity.Check(found[0].Resource.GetLabels(), ts...)
	if err != nil {
		return "", err
	}
	for _, e := range labelErrs {
		response.Warning(rsp, errors.Errorf("namespace %s: %s: the API server reads an unparsable Pod Security level as restricted and an unparsable version as latest", p.Namespace, e.Error())).TargetCompositeAndClaim()
	}
	for _, r := range results {
		msg := podSecurityMessage(p, r)
		switch r.Mode {
		case podsecurity.ModeEnforce:
			return msg + "; nothing was composed or changed", nil
		case podsecurity.ModeWarn:
			response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
		default:
			// The API server only records audit annotations on the request.
			response.Normal(rsp, msg).TargetCompositeAndClaim()
		}
	}
	return "", nil
}

// podSecurityMessage names the policy and the label that sets it, each
// violation, and the claim fields that fix it.
func podSecurityMessage(p *plan.Plan, r podsecurity.Result) string {
	verb := map[string]string{podsecurity.ModeEnforce: "refuses", podsecurity.ModeWarn: "warns about", podsecurity.ModeAudit: "audits"}[r.Mode]
	vs := make([]string, 0, len(r.Violations))
	for _, v := range r.Violations {
		vs = append(vs, v.Pods+": "+v.String())
	}
	label := map[string]string{podsecurity.ModeEnforce: api.EnforceLevelLabel, podsecurity.ModeWarn: api.WarnLevelLabel, podsecurity.ModeAudit: api.AuditLevelLabel}[r.Mode]
	msg := fmt.Sprintf("namespace %s sets Pod Security %s (label %s), which %s the MiniCluster's pods: %s", p.Namespace, r.Policy(), label, verb, strings.Join(vs, "; "))
	if r.Level == api.LevelRestricted && !plan.Restricted(p.MiniCluster) {
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
		for k := range c.Volumes {
			if _, ok := t.Volumes[k]; !ok {
				t.Volumes[k] = p.Index(i).Child("volumes").Key(k)
			}
		}
	}
}
