// Package render turns a defaulted, valid MiniCluster into the Kubernetes
// objects that run it: the entrypoint ConfigMap, the CURVE Secret, the
// Services, the optional services Pod and the Indexed Job. It knows nothing
// of Crossplane, so the function, the CLI and tests share it.
//
// Output is deterministic: every list built from a map is sorted and nothing
// depends on time, so rendering the same input twice gives the same bytes.
package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Names of the composed resources, stable across renders: Crossplane matches
// desired and observed resources by them.
const (
	KeyEntrypoint  = "entrypoint"
	KeyCurveCert   = "curve-cert"
	KeyService     = "service"
	KeyJob         = "job"
	KeyServicesPod = "services-pod"
	KeyLeadBroker  = "lead-broker"
	KeyWorkload    = "workload"
	KeyPodGroup    = "podgroup"
	// KeyContainerServicePrefix + container name: a per-container Service.
	KeyContainerServicePrefix = "service-"
)

// Input is what one render depends on: a checked plan (every user mistake
// was found while it was made, so rendering cannot fail) and the CURVE
// certificate.
type Input struct {
	*plan.Plan
	// CurveCert is the certificate text for the <name>-curve-cert Secret.
	// Unused when the claim names its own Secret (flux.curveCertSecret).
	CurveCert []byte
}

// Object is one composed object and its stable resource name.
type Object struct {
	Name   string
	Object runtime.Object
	// Beyond are fields of Object that its Go type cannot hold: the
	// project's k8s.io/api is older than the API server's newest fields
	// (JoinGang). They are set on the object as the API server reads it.
	Beyond []Field
}

// Field is one field of an object as the API server reads it: the path of
// its keys, and its value.
type Field struct {
	Path  []string
	Value any
}

// Render returns every object of the MiniCluster, always in this order so
// that output and diffs of it are stable.
func Render(in Input) []Object {
	mc := in.MiniCluster
	objs := []Object{{Name: KeyEntrypoint, Object: ConfigMap(in)}}
	if mc.Spec.Flux.CurveCertSecret == "" {
		objs = append(objs, Object{Name: KeyCurveCert, Object: CurveSecret(in)})
	}
	objs = append(objs, Object{Name: KeyService, Object: BrokerService(in)})
	for _, svc := range ContainerServices(in) {
		objs = append(objs, Object{Name: KeyContainerServicePrefix + svc.Name, Object: svc})
	}
	if in.ComposesLeadBroker {
		objs = append(objs, Object{Name: KeyLeadBroker, Object: LeadBrokerService(in)})
	}
	if in.CleanedUp {
		// spec.cleanup: once the cluster has finished its pods go away
		// (Crossplane deletes what is no longer composed), and the rest
		// stays with the MiniCluster's final status.
		return objs
	}
	if len(mc.Spec.Services) > 0 && !in.Finished {
		// The services Pod is no Job's pod: nothing but Crossplane's
		// deleting what is no longer composed stops it once the brokers
		// it serves are done.
		objs = append(objs, Object{Name: KeyServicesPod, Object: ServicesPod(in)})
	}
	if in.Gang == nil {
		return append(objs, Object{Name: KeyJob, Object: Job(in)})
	}
	return append(objs,
		Object{Name: KeyWorkload, Object: Workload(in)},
		Object{Name: KeyPodGroup, Object: PodGroup(in)},
		Object{Name: KeyJob, Object: Job(in), Beyond: []Field{JoinGang(in)}})
}

// String describes an object for messages.
func (o Object) String() string { return fmt.Sprintf("%s (%T)", o.Name, o.Object) }
