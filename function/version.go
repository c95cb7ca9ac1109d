package function

import "github.com/crossplane/function-sdk-go/resource/composed"

// AnnotationFunctionVersion names, on every object the function composes,
// the version of the function that composed it: after an upgrade a user
// (and the upgrade e2e test) can tell which MiniClusters the new function
// has reconciled.
const AnnotationFunctionVersion = "minicluster.flux-framework.org/function-version"

// Version is the function's version, set when the package is built (make
// packages: -ldflags "-X github.com/flux-framework/minicluster-crossplane/function.Version=v0.1.0").
// Empty in a plain go build (make build, make render, the tests): then
// nothing is stamped. It is the same for every reconcile of a given
// build, so a MiniCluster's composed objects change once an upgrade, not
// at every reconcile.
var Version string

// stampVersion sets AnnotationFunctionVersion on a composed object's
// metadata (never on a pod template: a Job's template is immutable).
func stampVersion(u *composed.Unstructured) {
	if Version == "" {
		return
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationFunctionVersion] = Version
	u.SetAnnotations(ann)
}
