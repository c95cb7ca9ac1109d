package function

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// rendered are the rendered objects as desired composed resources, in
// render order, with the hash of the Job's immutable spec as rendered.
type rendered struct {
	keys        []string
	objects     []*composed.Unstructured
	jobSpecHash string
}

// toDesired converts objs into desired composed resources. Of the
// MiniCluster's own objects, the Job keeps the immutable spec of the
// running one when the function would now render another
// (keepRunningJobSpec), and the Job and the services Pod keep their
// deadline (keepRunningDeadline).
func toDesired(objs []render.Object, own map[string]*unstructured.Unstructured) (rendered, error) {
	r := rendered{keys: make([]string, 0, len(objs)), objects: make([]*composed.Unstructured, 0, len(objs))}
	for _, o := range objs {
		u, err := toComposed(o.Object)
		if err != nil {
			return r, errors.Wrapf(err, "cannot convert %s to a composed resource", o)
		}
		for _, f := range o.Beyond {
			if err := unstructured.SetNestedField(u.Object, f.Value, f.Path...); err != nil {
				return r, errors.Wrapf(err, "cannot set %s of %s", strings.Join(f.Path, "."), o)
			}
		}
		stampVersion(u)
		switch o.Name {
		case render.KeyJob:
			if r.jobSpecHash, err = keepRunningJobSpec(u, own[render.KeyJob]); err != nil {
				return r, errors.Wrap(err, "cannot compare the Job's immutable spec with the running one")
			}
			keepRunningDeadline(u, own[render.KeyJob])
		case render.KeyServicesPod:
			keepRunningDeadline(u, own[render.KeyServicesPod])
		}
		r.keys = append(r.keys, o.Name)
		r.objects = append(r.objects, u)
	}
	return r, nil
}

// compose sets the desired composed resources: r, and those of earlier
// pipeline steps, which are kept (r's replace any of the same name). It
// returns the keys of r, and whether the resources of earlier steps are
// ready: they count towards the MiniCluster's readiness as Crossplane
// counts them.
func compose(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, r rendered) ([]string, bool, error) {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return nil, false, errors.Wrap(err, "cannot get desired composed resources")
	}
	earlierReady := true
	for _, d := range desired {
		earlierReady = earlierReady && d.Ready == resource.ReadyTrue
	}
	for i, u := range r.objects {
		// Every composed object is reported ready: the MiniCluster's
		// readiness is reported on the composite (writeStatus).
		desired[resource.Name(r.keys[i])] = &resource.DesiredComposed{Resource: u, Ready: resource.ReadyTrue}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return nil, false, errors.Wrap(err, "cannot set desired composed resources")
	}
	return r.keys, earlierReady, nil
}
