package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestNameCollisions: two MiniClusters in one namespace whose composed
// names collide. The second is refused with Valid=False naming the field
// its name comes from; the first one's objects keep their owner and
// contents.
func TestNameCollisions(t *testing.T) { testNameCollisions(t, controlPlane(t)) }

// TestNameCollisionsV2 is TestNameCollisions in the Crossplane v2 shape.
func TestNameCollisionsV2(t *testing.T) { testNameCollisions(t, controlPlaneV2(t)) }

func testNameCollisions(t *testing.T, cp *harness.ControlPlane) {
	const ns, root = "collisions", "flux-sample"
	createNamespace(t, cp, ns)
	// A burst root composes the NodePort Service flux-sample-lead-broker.
	createClaim(t, cp, exampleClaim(t, cp, "examples/bursting-root/claim.yaml", ns, root))
	leadBroker := root + "-lead-broker"
	var before map[string]types.UID
	step(t, "the first MiniCluster composes its objects", func(t *testing.T) {
		eventually(t, 2*time.Minute, "the burst root's objects exist", func() error {
			uids := map[string]types.UID{}
			for name, obj := range map[string]client.Object{root: &corev1.Service{}, leadBroker: &corev1.Service{}, root + "/job": &batchv1.Job{}} {
				key := strings.TrimSuffix(name, "/job")
				if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: key}, obj); err != nil {
					return err
				}
				uids[name] = ownerUID(obj)
			}
			before = uids
			return nil
		})
	})

	cases := map[string]struct {
		reason string
		name   string
		patch  func(map[string]any)
		want   string
	}{
		"LeadBrokerService": {
			reason: "A MiniCluster named like the burst root's lead-broker Service composes a broker Service of that name.",
			name:   leadBroker,
			want:   fmt.Sprintf("Service %s/%s already exists and belongs to MiniCluster %s: its name comes from this MiniCluster's metadata.name", ns, leadBroker, root),
		},
		"HeadlessName": {
			reason: "network.headlessName naming the other MiniCluster's Service.",
			name:   "second",
			patch: func(spec map[string]any) {
				spec["network"] = map[string]any{"headlessName": root}
			},
			want: fmt.Sprintf("Service %s/%s already exists and belongs to MiniCluster %s: its name comes from this MiniCluster's spec.network.headlessName", ns, root, root),
		},
	}
	for name, tc := range cases {
		step(t, name, func(t *testing.T) {
			c := exampleClaim(t, cp, helloWorld, ns, tc.name)
			if tc.patch != nil {
				spec, _ := c.Object["spec"].(map[string]any)
				tc.patch(spec)
			}
			createClaim(t, cp, c)
			eventually(t, 2*time.Minute, tc.name+" is Valid=False (NameTaken) naming its field", func() error {
				got, err := getClaim(t, cp, ns, tc.name)
				if err != nil {
					return err
				}
				if err := wantConditionReason(got, v1alpha2.ConditionValid, "False", v1alpha2.ReasonNameTaken); err != nil {
					return err
				}
				if _, msg := condition(got, v1alpha2.ConditionValid); !strings.HasPrefix(msg, tc.want) {
					return fmt.Errorf("%s\nValid=False says %q, want it to start with %q", tc.reason, msg, tc.want)
				}
				return nil
			})
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: tc.name}, &batchv1.Job{}); !kerrors.IsNotFound(err) {
				t.Errorf("%s\nJob %s: %v, want nothing composed", tc.reason, tc.name, err)
			}
			consistently(t, 5*time.Second, "the first MiniCluster's objects keep their owner", func() error {
				for name, uid := range before {
					var obj client.Object = &corev1.Service{}
					if strings.HasSuffix(name, "/job") {
						obj = &batchv1.Job{}
					}
					if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: strings.TrimSuffix(name, "/job")}, obj); err != nil {
						return err
					}
					if got := ownerUID(obj); got != uid {
						return fmt.Errorf("%s is now controlled by %s, was %s", name, got, uid)
					}
				}
				return nil
			})
		})
	}
}

// ownerUID is the uid of obj's controller, "" if none.
func ownerUID(obj client.Object) types.UID {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	return ""
}
