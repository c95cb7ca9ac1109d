package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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

func (cp *ControlPlane) functionArgs() []string {
	args := []string{
		"--address=" + cp.FunctionAddress,
		"--tls-server-certs-dir=" + cp.pki.fnServerDir,
		"--metrics-address=127.0.0.1:" + strconv.Itoa(cp.ports.fnMetrics),
		"--pprof-address=127.0.0.1:" + strconv.Itoa(cp.ports.fnPprof),
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
