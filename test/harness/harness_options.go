package harness

import (
	"time"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// Options configure a control plane. The zero value works from within the
// repository.
type Options struct {
	// Name labels progress messages and the temporary directory
	// (default "e2e").
	Name string
	// Dir is the working directory (certificates, etcd data, logs). It is
	// created if needed. Default: a new temporary directory.
	Dir string
	// RepoRoot is the repository root (default: found from the working
	// directory).
	RepoRoot string
	// Tools are the binaries to run (default: FindTools).
	Tools *Tools
	// FunctionBinary is a built ./cmd/function (default: built into Dir).
	FunctionBinary string
	// Logf prints progress (default: timestamped lines on stderr).
	Logf func(format string, args ...any)
	// SkipInstall leaves out the repository's RBAC, XRD and Composition.
	SkipInstall bool
	// Shape is the XRD and Composition Install applies: ShapeClaims
	// (compositions/, the default) or ShapeV2 (compositions/v2/, where the
	// namespaced MiniCluster is the composite).
	Shape driver.Shape
	// SkipFunctionRegistration leaves out the paused Function and
	// FunctionRevision that point Crossplane at the local function: the
	// function process still runs, for a test that installs the Function
	// from its package and then wires the package manager's revision to it
	// (ServeFunctionRevision). Use it with SkipInstall: the Composition
	// needs a registered function.
	SkipFunctionRegistration bool
	// Debug turns on debug logging of Crossplane and the function (in
	// their log files).
	Debug bool
	// AuditWrites makes kube-apiserver log every write (level Metadata:
	// user, verb, object, request URI) to AuditLogPath, for AuditWrites.
	AuditWrites bool
	// CrossplaneFlags are added to `crossplane core start`'s flags, e.g.
	// --poll-interval=10m.
	CrossplaneFlags []string
	// StartTimeout bounds Start (default 5 minutes).
	StartTimeout time.Duration
	// Policy, when set, is the function input's policy Install puts in
	// the Composition, as a platform team would write it in YAML (nil: the
	// shipped Composition's, the secure default). A map rather than
	// v1beta1.Policy, whose omitempty lists cannot say [] ("forbid
	// nothing"). SetPolicy changes it on a running control plane.
	Policy map[string]any
	// Node, when set, adds a real node beside the control plane: kubelet,
	// kube-scheduler, containerd, CoreDNS (node.go). It needs root.
	Node *NodeOptions
	// Kueue, when set, runs Kueue beside the control plane (kueue.go):
	// its CRDs, its manager and its admission webhooks. It needs root.
	Kueue *KueueOptions
}

// Options returns the options the control plane started with.
func (cp *ControlPlane) Options() Options { return cp.opts }
