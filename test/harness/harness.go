package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Well-known names in the control plane.
const (
	// CrossplaneNamespace is where Crossplane keeps its TLS Secrets.
	CrossplaneNamespace = "crossplane-system"
	// FunctionName is the Function the Composition's pipeline names.
	FunctionName = "function-minicluster"
	// FunctionRevisionName is the revision that points Crossplane at the
	// local function process.
	FunctionRevisionName = FunctionName + "-local"
	// XRDName is the MiniCluster XRD.
	XRDName = "xminiclusters.flux-framework.org"
	// ClaimCRDName is the CRD Crossplane makes for MiniCluster claims.
	ClaimCRDName = "miniclusters.flux-framework.org"
	// CompositeCRDName is the CRD Crossplane makes for the composite.
	CompositeCRDName = "xminiclusters.flux-framework.org"
	// CompositionName is the Composition in compositions/composition.yaml.
	CompositionName = "miniclusters.flux-framework.org"

	caSecretName     = "crossplane-root-ca"
	clientSecretName = "crossplane-tls-client"
	serviceCIDR      = "10.0.0.0/24"
	fieldOwner       = "minicluster-e2e-harness"
)

// The kinds the XRD defines.
var (
	ClaimGVK     = schema.GroupVersionKind{Group: "flux-framework.org", Version: "v1alpha2", Kind: "MiniCluster"}
	CompositeGVK = schema.GroupVersionKind{Group: "flux-framework.org", Version: "v1alpha2", Kind: "XMiniCluster"}
)

// ControlPlane is a running control plane.
type ControlPlane struct {
	// nodeTurn holds nodeLockFile while this control plane has a node.
	nodeTurn *os.File
	// kubeMinor is kube-apiserver's minor version (controlplane_workloadapi.go).
	kubeMinor int

	// Dir holds everything the control plane writes; LogDir its logs.
	Dir    string
	LogDir string
	// Kubeconfig is an admin (system:masters) kubeconfig file.
	Kubeconfig string
	// Config is the admin REST config.
	Config *rest.Config
	// Client is an admin client that knows the core Kubernetes kinds and
	// CRDs; use unstructured objects for Crossplane's and the claims.
	Client client.Client
	// FunctionAddress is host:port of the function's gRPC server.
	FunctionAddress string

	opts   Options
	tools  Tools
	tmpDir bool // Dir was made by Start and is removed by Stop unless KeepDir

	ports struct {
		etcd, etcdPeer, apiserver, kcm, xpMetrics, xpHealth, xpWebhook, fn, fnMetrics, fnPprof int
	}
	pki struct {
		ca          *certAuthority
		caFile      string
		saKey       string
		saPub       string
		kcmConfig   string
		xpConfig    string
		xpClientDir string
		fnServerDir string
	}

	etcd, apiserver, kcm, crossplane, function *process
	node                                       *Node
	kueue                                      *Kueue

	mu      sync.Mutex
	stopped bool
	keepDir bool
}

// Start starts a control plane and returns when claims can be created. On
// error everything started so far is stopped; the logs stay in the returned
// error's directory.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	if opts.Name == "" {
		opts.Name = "e2e"
	}
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 5 * time.Minute
	}
	// The wait for another run's node is not start-up time.
	var nodeTurn *os.File
	if opts.Node != nil && os.Geteuid() == 0 {
		if nodeTurn, err = waitForTurn(ctx, opts.Logf); err != nil {
			return nil, err
		}
		defer func() {
			if cp == nil {
				_ = nodeTurn.Close()
			}
		}()
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	if opts.RepoRoot == "" {
		if opts.RepoRoot, err = RepoRoot(); err != nil {
			return nil, err
		}
	}
	cp = &ControlPlane{opts: opts, nodeTurn: nodeTurn}
	if opts.Tools != nil {
		cp.tools = *opts.Tools
	} else if cp.tools, err = FindTools(ctx, opts.RepoRoot); err != nil {
		return nil, err
	}
	if cp.kubeMinor, err = kubeMinor(ctx, cp.tools.KubeAPIServer); err != nil {
		return nil, err
	}
	if opts.Dir != "" {
		cp.Dir = opts.Dir
		if err := os.MkdirAll(cp.Dir, 0o700); err != nil {
			return nil, err
		}
	} else {
		if cp.Dir, err = os.MkdirTemp("", "minicluster-"+opts.Name+"-"); err != nil {
			return nil, err
		}
		cp.tmpDir = true
	}
	cp.LogDir = filepath.Join(cp.Dir, "logs")
	if err := os.MkdirAll(cp.LogDir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cp.keepDir = true
			_ = cp.Stop()
			err = fmt.Errorf("[%s] control plane did not start: %w\nlogs: %s", opts.Name, err, cp.LogDir)
		}
	}()

	begin := time.Now()
	step := func(what string, f func(context.Context) error) error {
		t := time.Now()
		cp.logf("%s...", what)
		if err := f(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		cp.logf("%s: done in %s", what, time.Since(t).Round(10*time.Millisecond))
		return nil
	}
	cp.logf("starting control plane in %s (logs in %s)", cp.Dir, cp.LogDir)

	// The function builds while the control plane starts.
	type build struct {
		path string
		err  error
	}
	built := make(chan build, 1)
	if opts.FunctionBinary != "" {
		built <- build{path: opts.FunctionBinary}
	} else {
		go func() {
			t := time.Now()
			p, err := BuildFunction(ctx, opts.RepoRoot, cp.Dir)
			if err == nil {
				cp.logf("built the function in %s", time.Since(t).Round(10*time.Millisecond))
			}
			built <- build{p, err}
		}()
	}

	if err := step("allocating ports and generating certificates", cp.setupPKI); err != nil {
		return cp, err
	}
	if err := step("starting etcd", cp.startEtcd); err != nil {
		return cp, err
	}
	if err := step("starting kube-apiserver", cp.startAPIServer); err != nil {
		return cp, err
	}
	if err := step("starting kube-controller-manager", cp.startControllerManager); err != nil {
		return cp, err
	}
	if opts.Node != nil {
		if err := step("starting the real node (containerd, CoreDNS, kube-scheduler, kubelet)", cp.startNode); err != nil {
			return cp, err
		}
	}
	if opts.Kueue != nil {
		if err := step("starting Kueue (CRDs, manager, webhooks)", cp.startKueue); err != nil {
			return cp, err
		}
	}
	if err := step("crossplane core init", cp.initCrossplane); err != nil {
		return cp, err
	}
	var b build
	if err := step("waiting for the function build", func(ctx context.Context) error {
		select {
		case b = <-built:
			return b.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}); err != nil {
		return cp, err
	}
	cp.function = newProcess("function", b.path, cp.functionArgs(), nil, cp.Dir, cp.LogDir)
	if err := step("starting the function", cp.StartFunction); err != nil {
		return cp, err
	}
	if err := step("starting crossplane core", cp.startCrossplane); err != nil {
		return cp, err
	}
	if !opts.SkipFunctionRegistration {
		if err := step("registering the function with Crossplane", cp.registerFunction); err != nil {
			return cp, err
		}
	}
	if !opts.SkipInstall {
		if err := step("installing compositions/ (RBAC, XRD, Composition)", cp.Install); err != nil {
			return cp, err
		}
	}
	cp.logf("control plane ready in %s: export KUBECONFIG=%s", time.Since(begin).Round(100*time.Millisecond), cp.Kubeconfig)
	return cp, nil
}

func (cp *ControlPlane) logf(format string, args ...any) {
	cp.opts.Logf("[%s] "+format, append([]any{cp.opts.Name}, args...)...)
}

// now is metav1.Now as RFC 3339, for status conditions.
func now() string { return metav1.Now().UTC().Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }
