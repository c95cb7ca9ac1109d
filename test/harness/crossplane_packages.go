package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Installing from packages: an OCI registry on loopback to push the
// project's .xpkg files to, and what a package runtime does for the
// revisions Crossplane's package manager creates from them. With
// --package-runtime=External, Crossplane pulls and unpacks packages,
// resolves dependencies and establishes the packages' objects (CRDs, XRDs,
// Compositions), but runs nothing: it leaves the TLS server Secret,
// status.tlsServerSecretName, status.endpoint and the RuntimeHealthy and
// RuntimeActive conditions of Function and Provider revisions to an
// external runtime. A Function or Provider revision establishes its CRDs
// only once it has the TLS Secret, and the package is Healthy only once its
// revision is RevisionHealthy (the package manager) and RuntimeHealthy (the
// runtime). The harness plays that runtime with local processes
// (PrepareRuntime, ReportRuntime, ServeFunctionRevision).

// Registry is an OCI registry on 127.0.0.1 (crane registry serve), in
// memory. Clients built on go-containerregistry (crossplane xpkg push,
// Crossplane's package manager) speak plain HTTP to a loopback registry
// without any flag or ImageConfig: name.Registry.Scheme is "http" for
// localhost and 127.0.0.0/8.
type Registry struct {
	// Addr is host:port, the registry part of image references.
	Addr string
	proc *process
}

// StartRegistry starts `crane registry serve` on a free loopback port,
// logging to logDir/registry.log, and waits until it answers /v2/.
func StartRegistry(ctx context.Context, crane, logDir string) (*Registry, error) {
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	r := &Registry{Addr: "127.0.0.1:" + strconv.Itoa(ports[0])}
	r.proc = newProcess("registry", crane, []string{"registry", "serve", "--address", r.Addr}, nil, logDir, logDir)
	if err := r.proc.start(); err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	if err := pollUntil(ctx, r.proc, 30*time.Second, "the registry at "+r.Addr, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Addr+"/v2/", nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer rsp.Body.Close() //nolint:errcheck // read-only
		_, _ = io.Copy(io.Discard, rsp.Body)
		return rsp.StatusCode == http.StatusOK, fmt.Errorf("GET /v2/: %s", rsp.Status)
	}); err != nil {
		_ = r.proc.stop(5 * time.Second)
		return nil, err
	}
	return r, nil
}

// Stop stops the registry; what was pushed is gone.
func (r *Registry) Stop() error { return r.proc.stop(5 * time.Second) }

// ServeFunctionRevision makes the local function process the runtime of a
// FunctionRevision that Crossplane's package manager created from a
// package: PrepareRuntime with the function's own serving certificate,
// then ReportRuntime with the function's address as status.endpoint. The
// revision is not paused: the package manager keeps reconciling it (it
// never writes the endpoint, the TLS Secret name or the runtime
// conditions), and its status.capabilities come from the package's
// crossplane.yaml, not from here.
func (cp *ControlPlane) ServeFunctionRevision(ctx context.Context, name string) error {
	if err := cp.PrepareRuntime(ctx, "FunctionRevision", name); err != nil {
		return err
	}
	return cp.ReportRuntime(ctx, "FunctionRevision", name, cp.FunctionAddress)
}

// ServeFunctionRevisionWith starts binary as a new function process and
// makes it the runtime of a FunctionRevision, as the Deployment runtime
// starts a new pod for the new revision of an upgraded Function: the
// process listens on a free loopback port with the function's serving
// certificate, then PrepareRuntime and ReportRuntime name its address as
// the revision's status.endpoint. The local function process
// (FunctionAddress) keeps running until StopFunction; the caller stops the
// returned process.
func (cp *ControlPlane) ServeFunctionRevisionWith(ctx context.Context, name, binary string) (*Process, string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	args := []string{
		"--address=" + addr,
		"--tls-server-certs-dir=" + cp.pki.fnServerDir,
		"--metrics-address=127.0.0.1:" + strconv.Itoa(ports[1]),
	}
	if cp.opts.Debug {
		args = append(args, "--debug")
	}
	p := newProcess("function-"+name, binary, args, nil, cp.Dir, cp.LogDir)
	if err := p.start(); err != nil {
		return nil, "", err
	}
	d := net.Dialer{Timeout: time.Second}
	if err := cp.waitFor(ctx, p, time.Minute, "function "+name+" to listen on "+addr, func(ctx context.Context) (bool, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, err
		}
		_ = c.Close()
		return true, nil
	}); err != nil {
		_ = p.stop(5 * time.Second)
		return nil, "", err
	}
	cp.logf("started function %s (pid %d) on %s, log %s", name, p.pid(), addr, p.logPath)
	if err := cp.PrepareRuntime(ctx, "FunctionRevision", name); err != nil {
		_ = p.stop(5 * time.Second)
		return nil, "", err
	}
	if err := cp.ReportRuntime(ctx, "FunctionRevision", name, addr); err != nil {
		_ = p.stop(5 * time.Second)
		return nil, "", err
	}
	return &Process{p: p}, addr, nil
}

// PrepareRuntime does for a FunctionRevision or ProviderRevision (kind)
// what Crossplane's Deployment runtime does before it starts the package's
// pod: it creates the TLS server Secret <package>-tls-server in
// crossplane-system, signed by Crossplane's root CA, and names it in the
// revision's status.tlsServerSecretName. Until then the package manager
// refuses to establish the package's objects (its CRDs): with the External
// runtime a revision stays RevisionHealthy=False, "waiting for package
// runtime controller to set revision's webhook TLS secret". For a
// FunctionRevision the Secret holds the local function's own serving
// certificate.
func (cp *ControlPlane) PrepareRuntime(ctx context.Context, kind, name string) error {
	rev, err := cp.getRevision(ctx, kind, name)
	if err != nil {
		return err
	}
	pkg := rev.GetLabels()["pkg.crossplane.io/package"]
	if pkg == "" {
		return fmt.Errorf("%s %s has no pkg.crossplane.io/package label", kind, name)
	}
	data := map[string][]byte{}
	if kind == "FunctionRevision" {
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
			b, err := os.ReadFile(filepath.Join(cp.pki.fnServerDir, k))
			if err != nil {
				return err
			}
			data[k] = b
		}
	} else {
		caSecret := &corev1.Secret{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: CrossplaneNamespace, Name: caSecretName}, caSecret); err != nil {
			return err
		}
		ca, err := parseCA(caSecret.Data[corev1.TLSCertKey], caSecret.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return err
		}
		kp, err := ca.issue(certSpec{
			commonName: pkg,
			dnsNames:   []string{pkg, pkg + "." + CrossplaneNamespace, pkg + "." + CrossplaneNamespace + ".svc"},
			ips:        []net.IP{net.ParseIP("127.0.0.1")},
			server:     true,
		})
		if err != nil {
			return err
		}
		data = map[string][]byte{corev1.TLSCertKey: kp.certPEM, corev1.TLSPrivateKeyKey: kp.keyPEM, "ca.crt": ca.certPEM}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: pkg + "-tls-server"},
		Type:       corev1.SecretTypeTLS,
		Data:       data,
	}
	if err := cp.Client.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create the TLS server Secret of %s: %w", pkg, err)
	}
	return cp.updateRevisionStatus(ctx, kind, name, func(rev *unstructured.Unstructured) error {
		return unstructured.SetNestedField(rev.Object, secret.Name, "status", "tlsServerSecretName")
	})
}

// ReportRuntime sets RuntimeHealthy=True and RuntimeActive=True on a
// FunctionRevision or ProviderRevision (kind), and status.endpoint when
// endpoint is not empty, keeping every other condition: what the
// Deployment runtime reports once the package's pod is ready. Call it once
// the process standing in for the revision's runtime is up.
func (cp *ControlPlane) ReportRuntime(ctx context.Context, kind, name, endpoint string) error {
	return cp.updateRevisionStatus(ctx, kind, name, func(rev *unstructured.Unstructured) error {
		if endpoint != "" {
			if err := unstructured.SetNestedField(rev.Object, endpoint, "status", "endpoint"); err != nil {
				return err
			}
		}
		set := map[string]map[string]any{
			"RuntimeHealthy": {"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": now()},
			"RuntimeActive":  {"type": "RuntimeActive", "status": "True", "reason": "ActiveRuntime", "lastTransitionTime": now()},
		}
		cs, _, _ := unstructured.NestedSlice(rev.Object, "status", "conditions")
		out := make([]any, 0, len(cs)+len(set))
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				if t, _ := m["type"].(string); set[t] != nil {
					continue
				}
			}
			out = append(out, c)
		}
		for _, t := range []string{"RuntimeHealthy", "RuntimeActive"} {
			out = append(out, set[t])
		}
		return unstructured.SetNestedSlice(rev.Object, out, "status", "conditions")
	})
}

func (cp *ControlPlane) getRevision(ctx context.Context, kind, name string) (*unstructured.Unstructured, error) {
	rev := &unstructured.Unstructured{}
	rev.SetAPIVersion("pkg.crossplane.io/v1")
	rev.SetKind(kind)
	err := cp.Client.Get(ctx, client.ObjectKey{Name: name}, rev)
	return rev, err
}

// updateRevisionStatus reads a revision, changes its status with f and
// writes the status back, reading again when the package manager updated
// the revision meanwhile (it writes whole statuses, with the conditions and
// fields it read, so nothing set here is lost).
func (cp *ControlPlane) updateRevisionStatus(ctx context.Context, kind, name string, f func(*unstructured.Unstructured) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		rev, err := cp.getRevision(ctx, kind, name)
		if err == nil {
			if err = f(rev); err != nil {
				return err
			}
			err = cp.Client.Status().Update(ctx, rev)
		}
		if !kerrors.IsConflict(err) {
			if err != nil {
				return fmt.Errorf("cannot update the status of %s %s: %w", kind, name, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cannot update the status of %s %s: %w", kind, name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
