// Package harness runs a real control plane for end-to-end tests: etcd,
// kube-apiserver and kube-controller-manager, Crossplane core (out of
// cluster, External package runtime) and the MiniCluster composition
// function as local processes, all on 127.0.0.1 with free ports, in one
// temporary directory. It installs the repository's RBAC, XRD and
// Composition, so a test can create MiniCluster claims right away.
//
// Nothing is global: every ControlPlane has its own directory, ports,
// certificates and processes, so a test may run several at once (e.g. the
// lead and burst clusters of a bursting test).
//
// There is no kubelet and no scheduler: pods stay Pending. MarkPodsReady
// plays the kubelet's part for a Job's pods so the real job controller
// reports them ready.
package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// Node, when set, adds a real node beside the control plane: kubelet,
	// kube-scheduler, containerd, CoreDNS (node.go). It needs root.
	Node *NodeOptions
}

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
		etcd, etcdPeer, apiserver, kcm, xpMetrics, xpHealth, xpWebhook, fn, fnMetrics int
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

// writeKubeconfig writes a kubeconfig for a client certificate of user in
// groups, issued by the control plane's CA, and returns its REST config.
func (cp *ControlPlane) writeKubeconfig(file, user string, groups ...string) (*rest.Config, error) {
	server := "https://127.0.0.1:" + strconv.Itoa(cp.ports.apiserver)
	ca := cp.pki.ca
	kp, err := ca.issue(certSpec{commonName: user, organization: groups, client: true})
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["minicluster-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM}
	cfg.Contexts["minicluster-e2e"] = &clientcmdapi.Context{Cluster: "minicluster-e2e", AuthInfo: user}
	cfg.CurrentContext = "minicluster-e2e"
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return nil, err
	}
	return &rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{CAData: ca.certPEM, CertData: kp.certPEM, KeyData: kp.keyPEM}}, nil
}

// setupPKI allocates ports and writes every certificate, key and kubeconfig.
func (cp *ControlPlane) setupPKI(_ context.Context) error {
	ports, err := freePorts(9)
	if err != nil {
		return err
	}
	p := &cp.ports
	p.etcd, p.etcdPeer, p.apiserver, p.kcm, p.xpMetrics, p.xpHealth, p.xpWebhook, p.fn, p.fnMetrics =
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7], ports[8]
	cp.FunctionAddress = "127.0.0.1:" + strconv.Itoa(p.fn)

	dir := filepath.Join(cp.Dir, "pki")
	ca, err := newCA("minicluster-e2e-ca")
	if err != nil {
		return err
	}
	cp.pki.ca = ca
	serving, err := ca.issue(certSpec{
		commonName: "kube-apiserver",
		dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		server:     true,
	})
	if err != nil {
		return err
	}
	// The API server's identity when it calls a kubelet (logs, exec,
	// port-forward): the real node's kubelet authorizes it by group.
	kubeletClient, err := ca.issue(certSpec{commonName: "kube-apiserver-kubelet-client", organization: []string{"system:masters"}, client: true})
	if err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		return err
	}
	if err := writeFiles(dir, map[string][]byte{
		"ca.crt": ca.certPEM, "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
		"sa.key": saKey, "sa.pub": saPub,
		"apiserver-kubelet-client.crt": kubeletClient.certPEM, "apiserver-kubelet-client.key": kubeletClient.keyPEM,
	}); err != nil {
		return err
	}
	cp.pki.caFile = filepath.Join(dir, "ca.crt")
	cp.pki.saKey = filepath.Join(dir, "sa.key")
	cp.pki.saPub = filepath.Join(dir, "sa.pub")

	kubeconfig := cp.writeKubeconfig
	cp.Kubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	if cp.Config, err = kubeconfig(cp.Kubeconfig, "admin", "system:masters"); err != nil {
		return err
	}
	cp.Config.QPS, cp.Config.Burst = 50, 100
	// The controller manager and Crossplane get identities of their own, so
	// the API server's audit and logs tell them apart.
	cp.pki.kcmConfig = filepath.Join(dir, "kube-controller-manager.kubeconfig")
	if _, err := kubeconfig(cp.pki.kcmConfig, "system:kube-controller-manager", "system:masters"); err != nil {
		return err
	}
	cp.pki.xpConfig = filepath.Join(dir, "crossplane.kubeconfig")
	if _, err := kubeconfig(cp.pki.xpConfig, "crossplane", "system:masters"); err != nil {
		return err
	}
	return nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	p := cp.ports
	client := fmt.Sprintf("http://127.0.0.1:%d", p.etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)
	cp.etcd = newProcess("etcd", cp.tools.Etcd, []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(cp.Dir, "etcd-data"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer, "--initial-cluster-state=new",
		"--snapshot-count=10000",
	}, nil, cp.Dir, cp.LogDir)
	if err := cp.etcd.start(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	return cp.waitFor(ctx, cp.etcd, time.Minute, "etcd /health", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer rsp.Body.Close() //nolint:errcheck // read-only
		b, _ := io.ReadAll(rsp.Body)
		return rsp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`), fmt.Errorf("%s: %s", rsp.Status, b)
	})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	pki := filepath.Join(cp.Dir, "pki")
	cp.apiserver = newProcess("kube-apiserver", cp.tools.KubeAPIServer, []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.ports.apiserver),
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", cp.ports.etcd),
		"--cert-dir=" + filepath.Join(cp.Dir, "apiserver-certs"),
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + cp.pki.caFile,
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.saPub,
		"--service-account-signing-key-file=" + cp.pki.saKey,
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--kubelet-client-certificate=" + filepath.Join(pki, "apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + filepath.Join(pki, "apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--v=1",
	}, nil, cp.Dir, cp.LogDir)
	audit, err := cp.auditArgs()
	if err != nil {
		return err
	}
	cp.apiserver.args = append(cp.apiserver.args, audit...)
	if err := cp.runAPIServer(ctx, "kube-apiserver /readyz"); err != nil {
		return err
	}
	// Warnings (e.g. "CompositeResourceDefinition v1 is deprecated", which
	// claims still need) go to the progress log once each.
	cp.Config.WarningHandlerWithContext = &warningLogger{cp: cp, seen: map[string]bool{}}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	cp.Client = c
	return err
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	cp.kcm = newProcess("kube-controller-manager", cp.tools.KubeControllerManager, []string{
		"--kubeconfig=" + cp.pki.kcmConfig,
		"--authentication-kubeconfig=" + cp.pki.kcmConfig,
		"--authorization-kubeconfig=" + cp.pki.kcmConfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.ports.kcm),
		"--cert-dir=" + filepath.Join(cp.Dir, "kcm-certs"),
		"--controllers=" + strings.Join(cp.controllers(), ","),
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--service-account-private-key-file=" + cp.pki.saKey,
		"--root-ca-file=" + cp.pki.caFile,
		"--v=1",
	}, nil, cp.Dir, cp.LogDir)
	if err := cp.kcm.start(); err != nil {
		return err
	}
	if err := cp.waitFor(ctx, cp.kcm, time.Minute, "kube-controller-manager /healthz", httpsHealthy(cp.ports.kcm)); err != nil {
		return err
	}
	// Pods need their namespace's default ServiceAccount: waiting for the
	// one in "default" shows the controllers really run.
	return cp.waitFor(ctx, cp.kcm, time.Minute, "the default ServiceAccount", func(ctx context.Context) (bool, error) {
		err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, err
	})
}

// controllers are the kube-controller-manager controllers the control plane
// runs. Jobs make pods, the garbage collector deletes what a deleted
// composite owned, namespaces can be deleted, and new namespaces get their
// default ServiceAccount (which pods need). A real node needs more: CoreDNS
// answers from EndpointSlices, the node lifecycle controller lifts the
// not-ready taint, projected volumes need the root CA ConfigMap, finished
// pods of deleted nodes are collected, quotas are enforced only with their
// controller, and claims bind to volumes only with theirs. Without a node they would only add writes to the load
// figures.
func (cp *ControlPlane) controllers() []string {
	c := []string{"job-controller", "garbage-collector-controller", "namespace-controller", "serviceaccount-controller"}
	if cp.opts.Node != nil {
		c = append(c, "endpointslice-controller", "node-lifecycle-controller", "root-ca-certificate-publisher-controller",
			"pod-garbage-collector-controller", "resourcequota-controller", "persistentvolume-binder-controller")
	}
	return c
}

// waitFor polls cond every 250ms until it is true, the timeout passes, or p
// (if not nil) exits. The error names what was awaited and the last reason.
func (cp *ControlPlane) waitFor(ctx context.Context, p *process, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if p != nil {
			if err := p.alive(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s (last: %v)", timeout, what, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Stop stops every process, newest first, and removes the directory Start
// created unless KeepDir was called. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return nil
	}
	cp.stopped = true
	cp.mu.Unlock()
	var errs []string
	stop := func(ps ...*process) {
		for _, p := range ps {
			if p == nil {
				continue
			}
			if err := p.stop(20 * time.Second); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	// Nothing makes pods once Crossplane and the controllers are gone; the
	// node then drains through the API server before it stops.
	stop(cp.crossplane, cp.function, cp.kcm)
	if cp.node != nil {
		errs = append(errs, cp.node.stop()...)
	}
	stop(cp.apiserver, cp.etcd)
	if cp.nodeTurn != nil {
		_ = cp.nodeTurn.Close() // the next run's node may start
	}
	if cp.tmpDir && !cp.keepDir {
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, err.Error())
		}
	} else if cp.Dir != "" {
		cp.logf("stopped; logs kept in %s", cp.LogDir)
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the control plane: %s", strings.Join(errs, "; "))
	}
	return nil
}

// KeepDir keeps the control plane's directory (and its logs) after Stop;
// tests call it when they fail.
func (cp *ControlPlane) KeepDir() { cp.mu.Lock(); cp.keepDir = true; cp.mu.Unlock() }

// LogFiles returns the log file of every process.
func (cp *ControlPlane) LogFiles() []string {
	files, _ := filepath.Glob(filepath.Join(cp.LogDir, "*.log"))
	sort.Strings(files)
	return files
}

// DumpLogs writes the path and the last lines of every log to w.
func (cp *ControlPlane) DumpLogs(w io.Writer, lines int) {
	for _, f := range cp.LogFiles() {
		_, _ = fmt.Fprintf(w, "---- %s (last %d lines)\n%s\n", f, lines, tail(f, lines))
	}
}

// Pids returns the process id of every running process, by name.
func (cp *ControlPlane) Pids() map[string]int {
	m := map[string]int{}
	ps := []*process{cp.etcd, cp.apiserver, cp.kcm, cp.crossplane, cp.function}
	if n := cp.node; n != nil {
		ps = append(ps, n.containerd, n.coredns, n.scheduler, n.kubelet)
	}
	for _, p := range ps {
		if p != nil && p.pid() != 0 && p.alive() == nil {
			m[p.name] = p.pid()
		}
	}
	return m
}

// Options returns the options the control plane started with.
func (cp *ControlPlane) Options() Options { return cp.opts }

// now is metav1.Now as RFC 3339, for status conditions.
func now() string { return metav1.Now().UTC().Format(time.RFC3339) }

// warningLogger logs each distinct API server warning once.
type warningLogger struct {
	cp   *ControlPlane
	mu   sync.Mutex
	seen map[string]bool
}

func (w *warningLogger) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[text] {
		return
	}
	w.seen[text] = true
	w.cp.logf("API server warning: %s", text)
}

// runAPIServer starts kube-apiserver and waits until /readyz says so.
func (cp *ControlPlane) runAPIServer(ctx context.Context, what string) error {
	if err := cp.apiserver.start(); err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return err
	}
	hc.Timeout = 5 * time.Second
	return cp.waitFor(ctx, cp.apiserver, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.Config.Host+"/readyz", nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer rsp.Body.Close() //nolint:errcheck // read-only
		b, _ := io.ReadAll(rsp.Body)
		return rsp.StatusCode == http.StatusOK, fmt.Errorf("%s: %s", rsp.Status, lastLines(string(b), 5))
	})
}
