package harness

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// KueueModule is the Kueue module whose manager (cmd/kueue, built by
// hack/tools.sh), CRDs and webhook configurations the harness runs; the
// three must come from the same version.
const KueueModule = "sigs.k8s.io/kueue@v0.19.1"

// KueueNamespace is Kueue's own namespace, as its manifests install it.
const KueueNamespace = "kueue-system"

// EnvKueue overrides where the Kueue manager binary is found.
const EnvKueue = "MC_KUEUE"

// kueueMetricsCertDir is where Kueue's manager reads its metrics serving
// certificate when its internal certificate management is off: a path
// compiled into cmd/kueue (a Secret's mount in its Deployment), with no
// flag or setting to move it. The manager does not start without it.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// KueueOptions configure Kueue beside the control plane (Options.Kueue):
// its manager as a local process, with a kubeconfig, the way Crossplane
// runs here, and what a platform installs with it: its CRDs (with their
// conversion webhooks), its webhook configurations, and its namespace.
//
// As a platform runs it: its admission webhooks on, called by the API
// server at https://127.0.0.1:<port> with a certificate of the control
// plane's CA (Kueue's internal certificate management, which writes a
// Secret for an in-cluster Service, is off), leader election off (one
// replica), and the job integration batch/job. Only the webhooks of the
// integrations it runs are registered: upstream's manifests register every
// integration's, whose objects do not exist here.
type KueueOptions struct {
	// Frameworks are Kueue's job integrations (default: batch/job).
	Frameworks []string
	// ManageJobsWithoutQueueName makes Kueue suspend every Job, not only
	// those with a queue name (default false, Kueue's default).
	ManageJobsWithoutQueueName bool
}

// Kueue is Kueue running beside a control plane.
type Kueue struct {
	// WebhookURL is the base URL of its webhook server.
	WebhookURL string

	proc *process
	// createdCertDirs are the directories of kueueMetricsCertDir that
	// Start created, removed again by stop (deepest first).
	createdCertDirs []string
	createdCerts    []string
}

// Kueue returns Kueue, or nil when the control plane runs none.
func (cp *ControlPlane) Kueue() *Kueue { return cp.kueue }

// FindKueue locates the Kueue manager: MC_KUEUE, else `hack/tools.sh path
// kueue`.
func FindKueue(ctx context.Context, repoRoot string) (string, error) {
	var missing []string
	p := findTool(ctx, repoRoot, EnvKueue, "kueue", &missing)
	if p == "" {
		return "", fmt.Errorf("%w: %s (install it with: hack/tools.sh install kueue)", ErrToolsMissing, strings.Join(missing, ", "))
	}
	return p, nil
}

// startKueue installs Kueue's CRDs and namespace, starts its manager and
// registers its webhooks, and returns when the API server calls them (a
// dry-run ResourceFlavor passes its validating webhook).
func (cp *ControlPlane) startKueue(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("kueue: its manager reads a metrics certificate from %s, a path it fixes, which only root can write here", kueueMetricsCertDir)
	}
	opts := *cp.opts.Kueue
	if len(opts.Frameworks) == 0 {
		opts.Frameworks = []string{"batch/job"}
	}
	bin, err := FindKueue(ctx, cp.opts.RepoRoot)
	if err != nil {
		return err
	}
	mod, err := moduleDir(ctx, KueueModule)
	if err != nil {
		return fmt.Errorf("kueue's manifests: %w", err)
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	webhookPort, health, metrics, visibility := ports[0], ports[1], ports[2], ports[3]
	k := &Kueue{WebhookURL: "https://127.0.0.1:" + strconv.Itoa(webhookPort)}
	cp.kueue = k

	dir := filepath.Join(cp.Dir, "kueue")
	serving, err := cp.pki.ca.issue(certSpec{
		commonName: "kueue-webhook-service",
		dnsNames:   []string{"localhost", "kueue-webhook-service." + KueueNamespace + ".svc"},
		ips:        []net.IP{net.ParseIP("127.0.0.1")},
		server:     true,
	})
	if err != nil {
		return err
	}
	certDir := filepath.Join(dir, "webhook-certs")
	if err := writeFiles(certDir, map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM}); err != nil {
		return err
	}
	if err := k.writeMetricsCert(serving); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kueue.kubeconfig")
	if _, err := cp.writeKubeconfig(kubeconfig, "kueue", "system:masters"); err != nil {
		return err
	}
	config := map[string]any{
		"apiVersion":                 "config.kueue.x-k8s.io/v1beta2",
		"kind":                       "Configuration",
		"namespace":                  KueueNamespace,
		"health":                     map[string]any{"healthProbeBindAddress": "127.0.0.1:" + strconv.Itoa(health)},
		"metrics":                    map[string]any{"bindAddress": "127.0.0.1:" + strconv.Itoa(metrics)},
		"webhook":                    map[string]any{"port": webhookPort, "host": "127.0.0.1", "certDir": certDir},
		"leaderElection":             map[string]any{"leaderElect": false},
		"internalCertManagement":     map[string]any{"enable": false},
		"clientConnection":           map[string]any{"qps": 50, "burst": 100},
		"manageJobsWithoutQueueName": opts.ManageJobsWithoutQueueName,
		"integrations":               map[string]any{"frameworks": opts.Frameworks},
		// Off (VisibilityOnDemand=false below), but kept off Kueue's
		// default port, which another process may hold.
		"visibilityServer": map[string]any{"bindAddress": "127.0.0.1", "bindPort": visibility},
	}
	b, err := yaml.Marshal(config)
	if err != nil {
		return err
	}
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, b, 0o600); err != nil {
		return err
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	if err := cp.installKueueCRDs(ctx, mod, k.WebhookURL); err != nil {
		return err
	}

	args := []string{
		"--config=" + configFile,
		// The on-demand visibility API is an aggregated APIService whose
		// server reads its certificate from /visibility (another fixed
		// path); nothing here uses it.
		"--feature-gates=VisibilityOnDemand=false",
	}
	if cp.opts.Debug {
		args = append(args, "--zap-log-level=5")
	}
	k.proc = newProcess("kueue", bin, args, []string{"KUBECONFIG=" + kubeconfig}, cp.Dir, cp.LogDir)
	if err := k.proc.start(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	if err := cp.waitFor(ctx, k.proc, 2*time.Minute, "kueue /readyz", healthz(hc, "http://127.0.0.1:"+strconv.Itoa(health)+"/readyz")); err != nil {
		return err
	}
	if err := cp.registerKueueWebhooks(ctx, mod, k.WebhookURL, opts.Frameworks); err != nil {
		return err
	}
	// The API server reaches the webhooks once a dry-run create passes
	// the ResourceFlavor webhook (its registration is read from an
	// informer, so the first calls may not go through it yet).
	rf := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
		"metadata": map[string]any{"name": "harness-probe"},
	}}
	return cp.waitFor(ctx, k.proc, time.Minute, "Kueue's webhooks to answer the API server", func(ctx context.Context) (bool, error) {
		err := cp.Client.Create(ctx, rf.DeepCopy(), client.DryRunAll)
		return err == nil, err
	})
}

// writeMetricsCert writes the serving certificate into
// kueueMetricsCertDir, unless one is there, recording what it created.
func (k *Kueue) writeMetricsCert(kp *keyPair) error {
	if _, err := os.Stat(filepath.Join(kueueMetricsCertDir, "tls.crt")); err == nil {
		return nil
	}
	for d := kueueMetricsCertDir; d != "/etc"; d = filepath.Dir(d) {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			k.createdCertDirs = append(k.createdCertDirs, d)
		}
	}
	if err := os.MkdirAll(kueueMetricsCertDir, 0o700); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"tls.crt": kp.certPEM, "tls.key": kp.keyPEM} {
		p := filepath.Join(kueueMetricsCertDir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return err
		}
		k.createdCerts = append(k.createdCerts, p)
	}
	return nil
}

// stop stops the manager and removes what writeMetricsCert created.
func (k *Kueue) stop() []string {
	var errs []string
	if k.proc != nil {
		if err := k.proc.stop(20 * time.Second); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, f := range k.createdCerts {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err.Error())
		}
	}
	for _, d := range k.createdCertDirs { // deepest first
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err.Error())
		}
	}
	return errs
}

// Restart stops Kueue's manager (SIGTERM) and starts it again.
func (k *Kueue) Restart(ctx context.Context) error {
	if err := k.proc.stop(20 * time.Second); err != nil {
		return err
	}
	return k.proc.start()
}

// installKueueCRDs applies the CRDs of Kueue's module, with the conversion
// webhook its kustomization patches in for the kinds served at two
// versions, and waits until they are established.
func (cp *ControlPlane) installKueueCRDs(ctx context.Context, mod, webhookURL string) error {
	files, err := filepath.Glob(filepath.Join(mod, "config", "components", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s/config/components/crd/bases (%v)", mod, err)
	}
	var names []string
	for _, f := range files {
		objs, err := ReadObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
			if _, err := os.Stat(filepath.Join(mod, "config", "components", "crd", "patches", "webhook_in_"+plural+".yaml")); err == nil && kueueConvertedCRD(plural) {
				if err := unstructured.SetNestedField(o.Object, map[string]any{
					"strategy": "Webhook",
					"webhook": map[string]any{
						"clientConfig": map[string]any{
							"url":      webhookURL + "/convert",
							"caBundle": caBundle(cp.pki.ca.certPEM),
						},
						"conversionReviewVersions": []any{"v1"},
					},
				}, "spec", "conversion"); err != nil {
					return err
				}
			}
			if err := cp.Apply(ctx, o); err != nil {
				return err
			}
			names = append(names, o.GetName())
		}
	}
	for _, n := range names {
		if err := cp.waitCRD(ctx, n, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// kueueConvertedCRD: the kinds whose conversion webhook Kueue's
// config/components/crd/kustomization.yaml enables (resourceflavors' patch
// is there but commented out).
func kueueConvertedCRD(plural string) bool {
	switch plural {
	case "localqueues", "clusterqueues", "cohorts", "workloads", "multikueueclusters":
		return true
	}
	return false
}

// caBundle is PEM as the base64 string a caBundle field holds in
// unstructured content (the API server decodes []byte fields from base64).
func caBundle(pem []byte) string { return base64.StdEncoding.EncodeToString(pem) }

// registerKueueWebhooks registers the Mutating- and
// ValidatingWebhookConfigurations of Kueue's module (named kueue-…, as its
// kustomization names them), pointed at its webhook server on loopback,
// keeping the webhooks of Kueue's own kinds and of the enabled
// integrations.
func (cp *ControlPlane) registerKueueWebhooks(ctx context.Context, mod, webhookURL string, frameworks []string) error {
	objs, err := ReadObjects(filepath.Join(mod, "config", "components", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	enabled := map[string]bool{"kueue.x-k8s.io": true}
	for _, f := range frameworks {
		switch f {
		case "batch/job":
			enabled["batch/jobs"] = true
		case "pod":
			enabled["/pods"] = true
		default: // another integration: every webhook of its API group
			enabled[strings.SplitN(f, "/", 2)[0]] = true
		}
	}
	for _, o := range objs {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		kept := hooks[:0]
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			if !kueueWebhookEnabled(m, enabled) {
				continue
			}
			path, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
			m["clientConfig"] = map[string]any{"url": webhookURL + path, "caBundle": caBundle(cp.pki.ca.certPEM)}
			kept = append(kept, m)
		}
		if err := unstructured.SetNestedSlice(o.Object, kept, "webhooks"); err != nil {
			return err
		}
		o.SetName("kueue-" + o.GetName())
		if err := cp.Apply(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// kueueWebhookEnabled: the webhook's rules name Kueue's own group, or a
// resource of an enabled integration.
func kueueWebhookEnabled(hook map[string]any, enabled map[string]bool) bool {
	rules, _, _ := unstructured.NestedSlice(hook, "rules")
	for _, r := range rules {
		rm, _ := r.(map[string]any)
		groups, _, _ := unstructured.NestedStringSlice(rm, "apiGroups")
		resources, _, _ := unstructured.NestedStringSlice(rm, "resources")
		for _, g := range groups {
			if enabled[g] {
				return true
			}
			for _, res := range resources {
				if enabled[g+"/"+res] {
					return true
				}
			}
		}
	}
	return false
}

// waitCRD waits until a CRD is established.
func (cp *ControlPlane) waitCRD(ctx context.Context, name string, timeout time.Duration) error {
	return cp.waitFor(ctx, nil, timeout, "CRD "+name+" to be established", func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, errors.New("not established")
	})
}
