package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// invalidCases are the MiniClusters Validate refuses, from the tables
// beside the checks that refuse them.
func invalidCases() map[string]invalidCase {
	return merged(namesInvalid(), containersInvalid(), volumesInvalid(), fluxInvalid(), burstingInvalid(),
		podInvalid(), brokerConfigInvalid(), nulInvalid(), filesInvalid())
}

// validCases are the MiniClusters Validate accepts, from the tables beside
// the checks they pass.
func validCases() map[string]validCase {
	return merged(planValid(), namesValid(), containersValid(), volumesValid(), fluxValid(), burstingValid(),
		podValid(), brokerConfigValid(), certValid())
}

// planValid: sizes and the Job.
func planValid() map[string]validCase {
	return map[string]validCase{
		"HelloWorld": {
			reason: "The defaulted hello-world MiniCluster is valid.",
			args:   mc(),
		},
		"SizeOne": {
			reason: "One pod is a cluster.",
			args:   raw(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Size = nil }), func(m *v1alpha2.MiniCluster) { v1alpha2.SetDefaults(m, v1alpha2.PlatformDefaults{}) }),
		},
		"ElasticSizes": {
			reason: "minSize <= size <= maxSize.",
			args: mc(withSpec(func(s *v1alpha2.MiniClusterSpec) {
				s.MinSize = 2
				s.MaxSize = 8
			})),
		},
		"MinSizeEqualsSize": {
			reason: "The quorum may be every broker.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MinSize = 4 })),
		},
		"TasksZero": {
			reason: "tasks: 0 means one task per node.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.Tasks = ptr(int32(0)) })),
		},
		"BackoffLimitZero": {
			reason: "A Job may never retry.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.BackoffLimit = ptr(int32(0)) })),
		},
	}
}

func TestValidateInvalid(t *testing.T) {
	cases := invalidCases()
	if len(cases) < 35 {
		t.Fatalf("want at least 35 invalid cases, have %d", len(cases))
	}
	checkInvalid(t, cases)
}

// TestValidateErrorsNameTheirField: the function turns these errors into a
// Fatal result the user reads on the claim, so every message must start with
// the field to fix and say more than "Required value".
func TestValidateErrorsNameTheirField(t *testing.T) {
	for name, tc := range invalidCases() {
		t.Run(name, func(t *testing.T) {
			for _, e := range validate(tc.args) {
				if e.Field == "" {
					t.Errorf("%s\nerror without a field: %v", tc.reason, e)
					continue
				}
				if !strings.HasPrefix(e.Field, "spec.") && !strings.HasPrefix(e.Field, "metadata.") {
					t.Errorf("%s\nerror field %q is not a path of the claim", tc.reason, e.Field)
				}
				if !strings.Contains(e.Error(), e.Field) {
					t.Errorf("%s\nerror %q does not name its field %q", tc.reason, e.Error(), e.Field)
				}
				if e.Type != field.ErrorTypeNotSupported && e.Detail == "" {
					t.Errorf("%s\nerror %q does not say what to do", tc.reason, e.Error())
				}
			}
		})
	}
}

// TestValidateDeterministic: the errors become the Fatal result's message;
// map-driven checks must report them in the same order every time, or the
// claim's condition changes on every reconcile.
func TestValidateDeterministic(t *testing.T) {
	m := mc(
		withRunner(func(c *v1alpha2.MiniClusterContainer) {
			c.Environment = map[string]string{"1A": "", "2B": "", "3C": "", "4D": ""}
			c.Secrets = map[string]v1alpha2.Secret{"S1": {}, "S2": {}, "S3": {}}
			c.Volumes = map[string]v1alpha2.ContainerVolume{"a": {}, "b": {}, "c": {}, "D": {}}
		}),
		withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"A-1": "", "B-2": "", "C-3": ""} }),
		withPod(func(p *v1alpha2.PodSpec) {
			p.Labels = map[string]string{"a b": "", "c d": "", "e f": ""}
			p.NodeAffinity = map[string][]string{"x": nil, "y": nil, "z": nil}
		}),
	)
	first := validate(m).ToAggregate().Error()
	for i := 0; i < 50; i++ {
		if got := validate(m).ToAggregate().Error(); got != first {
			t.Fatalf("validate(...) is not deterministic\n-first, +later:\n%s", cmp.Diff(first, got))
		}
	}
}

func TestValidateValid(t *testing.T) {
	checkValid(t, validCases())
}

// TestBrokerQuorum: the lead waits for a quorum of brokers before it runs the
// job; hosts beyond this cluster's pods must not be part of it, or the lead
// would wait for them forever.
func TestBrokerQuorum(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   *v1alpha2.MiniCluster
		want   int32
	}{
		"Default": {
			reason: "Every host is a pod of this cluster: Flux's default, all of them.",
			args:   mc(),
			want:   0,
		},
		"MinSize": {
			reason: "minSize is the quorum.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.MinSize = 2 })),
			want:   2,
		},
		"BrokerConfigOwnHosts": {
			reason: "A brokerConfig that lists this cluster's pods only keeps Flux's default.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" } ]`)
			})),
			want: 0,
		},
		"BrokerConfigMoreHosts": {
			reason: "Hosts past this cluster's pods may never come: the lead waits for its own.",
			args: mc(withFlux(func(f *v1alpha2.FluxSpec) {
				f.BrokerConfig = bootstrap(`hosts = [ { host = "flux-sample-[0-3]" }, { host = "login" } ]`)
			})),
			want: 4,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(tc.args, Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("%s\nNew(...): %v", tc.reason, errs)
			}
			if p.BrokerQuorum != tc.want {
				t.Errorf("%s\nBrokerQuorum = %d, want %d", tc.reason, p.BrokerQuorum, tc.want)
			}
		})
	}
}

// TestFinished: what a finished cluster still composes follows from the
// phase its status says, whatever spec.cleanup.
func TestFinished(t *testing.T) {
	type want struct{ finished, cleanedUp bool }
	cases := map[string]struct {
		reason  string
		phase   string
		cleanup bool
		want    want
	}{
		"New":               {reason: "A new MiniCluster has no phase yet.", want: want{}},
		"Pending":           {reason: "A pending cluster has not finished.", phase: v1alpha2.PhasePending, cleanup: true, want: want{}},
		"Queued":            {reason: "A queued cluster has not finished.", phase: v1alpha2.PhaseQueued, cleanup: true, want: want{}},
		"Running":           {reason: "A running cluster has not finished.", phase: v1alpha2.PhaseRunning, cleanup: true, want: want{}},
		"Succeeded":         {reason: "A succeeded cluster has finished; without spec.cleanup its Job stays.", phase: v1alpha2.PhaseSucceeded, want: want{finished: true}},
		"Failed":            {reason: "A failed cluster has finished too.", phase: v1alpha2.PhaseFailed, want: want{finished: true}},
		"SucceededCleanup":  {reason: "spec.cleanup on a finished cluster removes its pods.", phase: v1alpha2.PhaseSucceeded, cleanup: true, want: want{finished: true, cleanedUp: true}},
		"FailedWithCleanup": {reason: "spec.cleanup applies to a failed cluster as well.", phase: v1alpha2.PhaseFailed, cleanup: true, want: want{finished: true, cleanedUp: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := New(mc(func(m *v1alpha2.MiniCluster) {
				m.Spec.Cleanup = tc.cleanup
				m.Status.Phase = tc.phase
			}), Facts{Namespace: "default"})
			if len(errs) > 0 {
				t.Fatalf("New(...): %v", errs)
			}
			if diff := cmp.Diff(tc.want, want{finished: p.Finished, cleanedUp: p.CleanedUp}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nNew(...) Finished, CleanedUp: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
