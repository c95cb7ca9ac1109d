package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// TestDecide: what a run judges, given what it trusts.
func TestDecide(t *testing.T) {
	services := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Services = []v1alpha2.ServiceContainer{{MiniClusterContainer: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres"}}}
	}
	privilegedServices := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Services = []v1alpha2.ServiceContainer{{MiniClusterContainer: v1alpha2.MiniClusterContainer{Name: "db", Image: "postgres", SecurityContext: v1alpha2.SecurityContext{Privileged: true}}}}
	}
	allOwn := func(keys ...string) func(objs []render.Object) map[string]*unstructured.Unstructured {
		return func(objs []render.Object) map[string]*unstructured.Unstructured {
			out := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				if len(keys) > 0 && !contains(keys, o.Name) {
					continue
				}
				u := object("X", "tenant-a", objectName(o), selfUID)
				if o.Name == render.KeyJob {
					u.SetAnnotations(map[string]string{v1alpha2.AnnotationJobSpecHash: jobHash})
				}
				out[o.Name] = u
			}
			return out
		}
	}
	type want struct {
		lookups []string
		waiting bool
		kept    bool
		refused string // reason
	}
	cases := map[string]struct {
		reason   string
		opts     []func(*v1alpha2.MiniCluster)
		observed func([]render.Object) map[string]*unstructured.Unstructured
		hash     string
		answered bool
		want     want
	}{
		"New": {
			reason: "A new MiniCluster: everything is judged, so the Namespace and every name it composes are looked up, and nothing is decided until they are answered.",
			want:   want{lookups: []string{"namespace", "existing-curve-cert", "existing-entrypoint", "existing-job", "existing-service"}, waiting: true},
		},
		"NewAnswered": {
			reason:   "With the answers: composed.",
			answered: true,
			want:     want{lookups: []string{"namespace", "existing-curve-cert", "existing-entrypoint", "existing-job", "existing-service"}},
		},
		"Steady": {
			reason:   "Everything its own, the Job rendered from the spec it was admitted with: kept, nothing judged or looked up.",
			observed: allOwn(),
			hash:     jobHash,
			want:     want{kept: true},
		},
		"JobOfAnotherSpec": {
			reason:   "Its own Job, with another job-spec hash: judged again (the Namespace is looked up), not looked up by name (it is its own).",
			observed: allOwn(),
			hash:     "fedcba9876543210",
			want:     want{lookups: []string{"namespace"}, waiting: true},
		},
		"ServicesPodGone": {
			reason:   "The Job kept, the services Pod to be composed again: it is judged, and its name looked up.",
			opts:     []func(*v1alpha2.MiniCluster){services},
			observed: allOwn(render.KeyJob, render.KeyService, render.KeyEntrypoint, render.KeyCurveCert),
			hash:     jobHash,
			want:     want{kept: true, lookups: []string{"namespace", "existing-services-pod"}, waiting: true},
		},
		"PrivilegedServicesPodGone": {
			reason:   "A privileged services Pod composed again in an unlabelled namespace: refused by the default level, whatever the Job kept.",
			opts:     []func(*v1alpha2.MiniCluster){privilegedServices},
			observed: allOwn(render.KeyJob, render.KeyService, render.KeyEntrypoint, render.KeyCurveCert),
			hash:     jobHash,
			answered: true,
			want:     want{kept: true, lookups: []string{"namespace", "existing-services-pod"}, refused: ReasonPolicy},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t, tc.opts...)
			objs := render.Render(render.Input{Plan: p, CurveCert: []byte("cert")})
			observed := map[string]*unstructured.Unstructured{}
			if tc.observed != nil {
				observed = tc.observed(objs)
			}
			d := Decide(Input{
				Policy: v1beta1.Policy{}.Effective(), Self: v2Self, Plan: p, Objects: objs, JobSpecHash: tc.hash,
				Trust: Trusted(v2Self, observed),
				Answer: func(string) ([]*unstructured.Unstructured, bool) {
					if !tc.answered {
						return nil, false
					}
					return nil, true
				},
			})
			got := want{waiting: d.Waiting, kept: d.Kept}
			for _, l := range d.Lookups {
				got.lookups = append(got.lookups, l.Name)
			}
			if d.Refused != nil {
				got.refused = d.Refused.Reason
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpSorted); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecideClaimUID: the burst controller's copy is recognised by the uid
// of the tenant's MiniCluster object: the v2 composite's own, or, in the
// claim shape, the claim's, which is looked up.
func TestDecideClaimUID(t *testing.T) {
	burst := func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CurveCertSecret = "flux-sample-curve-cert" }
	secretFor := func(uid string) []*unstructured.Unstructured {
		s := object("Secret", "tenant-a", "flux-sample-curve-cert", "")
		s.SetAnnotations(map[string]string{v1alpha2.AnnotationBurstClaimUID: uid})
		return []*unstructured.Unstructured{s}
	}
	claim := object("MiniCluster", "tenant-a", "flux-sample", "")
	claim.SetUID(types.UID(claimUID))
	cases := map[string]struct {
		reason  string
		self    Self
		secret  []*unstructured.Unstructured
		lookups []string
		refused bool
	}{
		"V2": {
			reason:  "v2: the copy names the MiniCluster, which is the composite.",
			self:    v2Self,
			secret:  secretFor(selfUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "existing-entrypoint", "existing-job", "existing-service"},
		},
		"Claims": {
			reason:  "Claims: the copy names the claim; its uid is looked up.",
			self:    claimSelf,
			secret:  secretFor(claimUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "claim", "existing-entrypoint", "existing-job", "existing-service"},
		},
		"ClaimsCopyForTheComposite": {
			reason:  "Claims: a copy naming the composite's uid was not written for the claim.",
			self:    claimSelf,
			secret:  secretFor(selfUID),
			lookups: []string{"namespace", "secret/flux-sample-curve-cert", "claim", "existing-entrypoint", "existing-job", "existing-service"},
			refused: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t, burst)
			objs := render.Render(render.Input{Plan: p})
			d := Decide(Input{
				Policy: v1beta1.Policy{}.Effective(), Self: tc.self, Plan: p, Objects: objs, Trust: Trusted(tc.self, nil),
				Answer: func(name string) ([]*unstructured.Unstructured, bool) {
					switch name {
					case "secret/flux-sample-curve-cert":
						return tc.secret, true
					case LookupClaim:
						return []*unstructured.Unstructured{claim}, true
					}
					return nil, true
				},
			})
			var lookups []string
			for _, l := range d.Lookups {
				lookups = append(lookups, l.Name)
			}
			if diff := cmp.Diff(tc.lookups, lookups, cmpSorted); diff != "" {
				t.Errorf("%s\nlookups: -want, +got:\n%s", tc.reason, diff)
			}
			if got := d.Refused != nil; got != tc.refused {
				t.Errorf("%s\nrefused %t, want %t: %+v", tc.reason, got, tc.refused, d.Refused)
			}
			if tc.refused && !strings.Contains(d.Refused.Message, "(policy.secrets)") {
				t.Errorf("%s\nrefusal %q, want policy.secrets", tc.reason, d.Refused.Message)
			}
		})
	}
}
