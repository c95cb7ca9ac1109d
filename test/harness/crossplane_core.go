package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
