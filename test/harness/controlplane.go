package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	cp.apiserver.args = append(cp.apiserver.args, cp.workloadAPIFlags(true)...)
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
	cp.kcm.args = append(cp.kcm.args, cp.workloadAPIFlags(false)...)
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
	if cp.ServesWorkloadAPI() {
		c = append(c, podGroupProtection)
	}
	return c
}
