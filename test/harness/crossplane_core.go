package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crossplaneEnv is the environment of crossplane core init and start: out
// of cluster, with its own (system:masters) identity.
func (cp *ControlPlane) crossplaneEnv() []string {
	return []string{
		"KUBECONFIG=" + cp.pki.xpConfig,
		"POD_NAMESPACE=" + CrossplaneNamespace,
		"WEBHOOK_ENABLED=false",
		"TLS_CA_SECRET_NAME=" + caSecretName,
		"TLS_CLIENT_SECRET_NAME=" + clientSecretName,
		"CRDS_PATH=" + cp.tools.CrossplaneCRDs,
	}
}

// initCrossplane runs `crossplane core init`: Crossplane's CRDs, its Lock,
// its root CA and client certificate (Secrets crossplane-root-ca and
// crossplane-tls-client). Then it writes the mTLS material both ends of
// the function call need, exactly as a cluster would have it:
//   - Crossplane's client directory (--tls-client-certs-dir) holds tls.crt,
//     tls.key and ca.crt from the crossplane-tls-client Secret (read by
//     certificates.LoadMTLSConfig in core start);
//   - the function's server directory (--tls-server-certs-dir) holds a
//     server certificate signed by the crossplane-root-ca CA (what the
//     package manager would put in the function's TLS Secret) with an IP
//     SAN of 127.0.0.1, because Crossplane dials status.endpoint and
//     verifies the server's name against it, and ca.crt to verify
//     Crossplane's client certificate.
func (cp *ControlPlane) initCrossplane(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	logPath := filepath.Join(cp.LogDir, "crossplane.log")
	var err error
	// init creates the CRDs and then the Lock; when the Lock's CRD is not
	// established yet the first run fails, and a second one succeeds.
	for attempt := 1; attempt <= 3; attempt++ {
		if err = run(ctx, "crossplane core init", cp.tools.Crossplane, []string{"core", "init"}, cp.crossplaneEnv(), logPath); err == nil {
			break
		}
		if strings.Contains(err.Error(), `no matches for kind "Lock"`) {
			cp.logf("crossplane core init: the Lock CRD it just created is not served yet; running it again")
		} else {
			cp.logf("crossplane core init attempt %d failed, retrying: %v", attempt, lastLines(err.Error(), 1))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	if err != nil {
		return err
	}

	secret := func(name string) (map[string][]byte, error) {
		s := &corev1.Secret{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: CrossplaneNamespace, Name: name}, s); err != nil {
			return nil, fmt.Errorf("cannot read the Secret crossplane core init made: %w", err)
		}
		return s.Data, nil
	}
	cs, err := secret(clientSecretName)
	if err != nil {
		return err
	}
	cas, err := secret(caSecretName)
	if err != nil {
		return err
	}
	cp.pki.xpClientDir = filepath.Join(cp.Dir, "crossplane-tls-client")
	cp.pki.fnServerDir = filepath.Join(cp.Dir, "function-tls-server")
	return writeFunctionMTLS(cs, cas, cp.pki.xpClientDir, cp.pki.fnServerDir)
}

// writeFunctionMTLS writes Crossplane's client directory from its client
// Secret, and the function's server directory with a certificate signed by
// the CA of Crossplane's root CA Secret.
func writeFunctionMTLS(clientSecret, caSecret map[string][]byte, clientDir, serverDir string) error {
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
		if len(clientSecret[k]) == 0 {
			return fmt.Errorf("secret %s has no %s", clientSecretName, k)
		}
	}
	if err := writeFiles(clientDir, map[string][]byte{
		corev1.TLSCertKey: clientSecret[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: clientSecret[corev1.TLSPrivateKeyKey], "ca.crt": clientSecret["ca.crt"],
	}); err != nil {
		return err
	}
	ca, err := parseCA(caSecret[corev1.TLSCertKey], caSecret[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("secret %s: %w", caSecretName, err)
	}
	kp, err := ca.issue(certSpec{
		commonName: FunctionName,
		dnsNames:   []string{"localhost", FunctionName, FunctionName + "." + CrossplaneNamespace, FunctionName + "." + CrossplaneNamespace + ".svc"},
		ips:        []net.IP{net.ParseIP("127.0.0.1")},
		server:     true,
	})
	if err != nil {
		return err
	}
	return writeFiles(serverDir, map[string][]byte{
		corev1.TLSCertKey: kp.certPEM, corev1.TLSPrivateKeyKey: kp.keyPEM, "ca.crt": ca.certPEM,
	})
}

func (cp *ControlPlane) crossplaneArgs() []string {
	args := []string{
		"core", "start",
		"--webhook-enabled=false",
		"--package-runtime=External",
		"--tls-client-certs-dir=" + cp.pki.xpClientDir,
		"--metrics-port=" + strconv.Itoa(cp.ports.xpMetrics),
		"--health-probe-port=" + strconv.Itoa(cp.ports.xpHealth),
		"--webhook-port=" + strconv.Itoa(cp.ports.xpWebhook),
		"--xpkg-cache-dir=" + filepath.Join(cp.Dir, "xpkg-cache"),
	}
	if cp.opts.Debug {
		args = append(args, "--debug")
	}
	return append(args, cp.opts.CrossplaneFlags...)
}

func (cp *ControlPlane) startCrossplane(ctx context.Context) error {
	// The package cache (--xpkg-cache-dir) must exist: in a cluster it is an
	// emptyDir volume, and Crossplane creates files in it but not the
	// directory. Without it every package pull fails with "cannot parse
	// package ...: io: read/write on closed pipe" (the cache write fails and
	// closes the pipe the parser reads through).
	if err := os.MkdirAll(filepath.Join(cp.Dir, "xpkg-cache"), 0o700); err != nil {
		return err
	}
	if cp.crossplane == nil {
		cp.crossplane = newProcess("crossplane", cp.tools.Crossplane, cp.crossplaneArgs(), cp.crossplaneEnv(), cp.Dir, cp.LogDir)
	}
	if err := cp.crossplane.start(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", cp.ports.xpHealth)
	return cp.waitFor(ctx, cp.crossplane, 2*time.Minute, "crossplane /readyz", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer rsp.Body.Close() //nolint:errcheck // read-only
		b, _ := io.ReadAll(rsp.Body)
		return rsp.StatusCode == http.StatusOK, fmt.Errorf("%s: %s", rsp.Status, b)
	})
}

// RestartCrossplane stops Crossplane core (SIGTERM, as a rolling update
// would) and starts it again with the same flags.
func (cp *ControlPlane) RestartCrossplane(ctx context.Context) error {
	t := time.Now()
	if err := cp.crossplane.stop(30 * time.Second); err != nil {
		return err
	}
	if err := cp.startCrossplane(ctx); err != nil {
		return err
	}
	cp.logf("restarted crossplane in %s", time.Since(t).Round(10*time.Millisecond))
	return nil
}

func (cp *ControlPlane) functionArgs() []string {
	args := []string{
		"--address=" + cp.FunctionAddress,
		"--tls-server-certs-dir=" + cp.pki.fnServerDir,
		"--metrics-address=127.0.0.1:" + strconv.Itoa(cp.ports.fnMetrics),
	}
	if cp.opts.Debug {
		args = append(args, "--debug")
	}
	return args
}

// StartFunction starts the function process (again, after StopFunction)
// on the same address, and waits until it accepts connections.
func (cp *ControlPlane) StartFunction(ctx context.Context) error {
	if err := cp.function.start(); err != nil {
		return err
	}
	d := net.Dialer{Timeout: time.Second}
	return cp.waitFor(ctx, cp.function, time.Minute, "the function to listen on "+cp.FunctionAddress, func(ctx context.Context) (bool, error) {
		c, err := d.DialContext(ctx, "tcp", cp.FunctionAddress)
		if err != nil {
			return false, err
		}
		_ = c.Close()
		return true, nil
	})
}

// StopFunction stops the function process (SIGTERM).
func (cp *ControlPlane) StopFunction() error { return cp.function.stop(10 * time.Second) }

// RestartFunction stops and starts the function process, as a new function
// pod would replace the old one.
func (cp *ControlPlane) RestartFunction(ctx context.Context) error {
	t := time.Now()
	if err := cp.StopFunction(); err != nil {
		return err
	}
	if err := cp.StartFunction(ctx); err != nil {
		return err
	}
	cp.logf("restarted the function in %s", time.Since(t).Round(10*time.Millisecond))
	return nil
}

// registerFunction tells Crossplane where the function runs. With the
// External package runtime Crossplane runs no function pods; it dials the
// status.endpoint of the Function's active FunctionRevision (labelled
// pkg.crossplane.io/package=<function>) and, before it uses a Composition,
// checks that revision's status.capabilities contain "composition". Both
// objects are paused so the package manager never tries to pull the
// package or to replace the revision.
func (cp *ControlPlane) registerFunction(ctx context.Context) error {
	const pkg = "xpkg.crossplane.io/flux-framework/function-minicluster:v0.1.0"
	paused := map[string]any{"crossplane.io/paused": "true"}
	fn := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1",
		"kind":       "Function",
		"metadata":   map[string]any{"name": FunctionName, "annotations": paused},
		"spec":       map[string]any{"package": pkg},
	}}
	rev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1",
		"kind":       "FunctionRevision",
		"metadata": map[string]any{
			"name":        FunctionRevisionName,
			"annotations": paused,
			"labels":      map[string]any{"pkg.crossplane.io/package": FunctionName},
		},
		"spec": map[string]any{"desiredState": "Active", "image": pkg, "revision": int64(1)},
	}}
	// The CRDs were just created by core init; retry until they serve.
	if err := cp.waitFor(ctx, cp.crossplane, time.Minute, "the Function and FunctionRevision to be created", func(ctx context.Context) (bool, error) {
		for _, o := range []*unstructured.Unstructured{fn, rev} {
			if err := cp.Apply(ctx, o.DeepCopy()); err != nil {
				return false, err
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	status := map[string]any{"status": map[string]any{
		"endpoint":     cp.FunctionAddress,
		"capabilities": []any{"composition"},
		"conditions": []any{
			map[string]any{"type": "RevisionHealthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": now()},
			map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision", "lastTransitionTime": now()},
			map[string]any{"type": "RuntimeActive", "status": "True", "reason": "ActiveRuntime", "lastTransitionTime": now()},
		},
	}}
	b, err := json.Marshal(status)
	if err != nil {
		return err
	}
	if err := cp.Client.Status().Patch(ctx, rev, client.RawPatch(types.MergePatchType, b)); err != nil {
		return fmt.Errorf("cannot set the FunctionRevision's status: %w", err)
	}
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("pkg.crossplane.io/v1")
	got.SetKind("FunctionRevision")
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: FunctionRevisionName}, got); err != nil {
		return err
	}
	if ep, _, _ := unstructured.NestedString(got.Object, "status", "endpoint"); ep != cp.FunctionAddress {
		return fmt.Errorf("FunctionRevision %s has status.endpoint %q, want %q", FunctionRevisionName, ep, cp.FunctionAddress)
	}
	return nil
}
