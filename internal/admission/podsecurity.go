package admission

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/podsecurity"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// PodSecurityMessage names the policy and the label (or the platform's
// policy key) that sets it, each violation, and the claim fields that fix
// it.
func PodSecurityMessage(p *plan.Plan, r podsecurity.Result, byPolicy bool) string {
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

// PodSecurityTemplates are the pod templates the MiniCluster composes (the Job's, and
// the services Pod's if composed), each part mapped to the claim field it
// comes from.
func PodSecurityTemplates(p *plan.Plan, objs []render.Object) []podsecurity.Template {
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
