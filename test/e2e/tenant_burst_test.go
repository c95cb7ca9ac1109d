package e2e_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

var (
	providerConfigGVK        = schema.GroupVersionKind{Group: "bursting.flux-framework.org", Version: "v1alpha1", Kind: "ProviderConfig"}
	clusterProviderConfigGVK = schema.GroupVersionKind{Group: "bursting.flux-framework.org", Version: "v1alpha1", Kind: "ClusterProviderConfig"}
)

// headerRecorder is a TLS API server of the test's own, standing in for
// any server a tenant's kubeconfig may name: it answers 404 and records
// every request's headers.
type headerRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []http.Header
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	t.Helper()
	r := &headerRecorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := req.Header.Clone()
		h.Set("X-Test-Path", req.URL.Path)
		if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
			h.Set("X-Test-Client-Certificate", req.TLS.PeerCertificates[0].Subject.CommonName)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, h)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	r.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *headerRecorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.reqs...)
}

// kubeconfig is a kubeconfig for the recorder, with the given cluster and
// user fields (YAML flow mappings' contents).
func (r *headerRecorder) kubeconfig(cluster, user string) string {
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}))
	if cluster != "" {
		cluster = ", " + cluster
	}
	return `apiVersion: v1
kind: Config
clusters: [{name: target, cluster: {server: "` + r.srv.URL + `", certificate-authority-data: ` + ca + cluster + `}}]
users: [{name: tenant, user: {` + user + `}}]
contexts: [{name: target, context: {cluster: target, user: tenant}}]
current-context: target
`
}

// providerOwnRules stand in for what Crossplane's RBAC manager grants a
// provider's service account besides compositions/burst-rbac.yaml: its
// own CRDs and events.
var providerOwnRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"bursting.flux-framework.org"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// TestTenantBurst tries, as a tenant who may create only MiniClusters,
// Bursts, ProviderConfigs and Secrets in its namespace, every way the burst
// provider used to let it reach beyond it: a kubeconfig that reads the
// provider's token file (or runs a program, or names a proxy), a
// namespaced ProviderConfig with the provider's own identity, a Burst with
// no providerConfigRef (the implicit ClusterProviderConfig default), a
// ClusterProviderConfig that does not allow its namespace, a target
// namespace of kube-system, and a Secret of another namespace; and, as a
// second tenant who may create only MiniClusters in a Burst's target
// namespace, a MiniCluster of the burst claim's name made before the
// Burst, with or without the labels the Burst puts on its own, to get the
// root's certificate. Each is refused, with
// Synced=False naming the field (or object) and the fix where the API
// server does not refuse it first; no request reaches the listener the
// kubeconfigs name but with the tenant's own inline token; nothing is
// written in kube-system, nor a certificate next to the second tenant's
// MiniCluster. The provider runs as the service account
// compositions/burst-rbac.yaml binds, with that ClusterRole's rights and
// no more, and still bursts the tenant's root into its own namespace
// through the ClusterProviderConfig the platform team made for it.
func TestTenantBurst(t *testing.T) {
	cp := controlPlane(t)
	const (
		ns     = "burst-tenant"
		other  = "burst-other"
		user   = "alice"
		root   = "flux-sample"
		nodeIP = "203.0.113.30"
	)
	rec := newHeaderRecorder(t)
	// The provider's "own" token, in a file of the machine the provider
	// runs on: a kubeconfig naming it would make the provider send it.
	tokenFile := filepath.Join(t.TempDir(), "token")
	const providerToken = "provider-own-token-must-never-reach-the-listener"
	if err := os.WriteFile(tokenFile, []byte(providerToken), 0o600); err != nil {
		t.Fatal(err)
	}
	var tenant client.Client
	var nodePort int32

	step(t, "platform: the provider as burst-rbac.yaml's service account, a tenant namespace, a ClusterProviderConfig for it", func(t *testing.T) {
		installProviderCRDs(t, cp)
		for _, n := range []string{ns, other} {
			createNamespace(t, cp, n)
		}
		allowNodePorts(t, cp, ns)
		var err error
		tenant, err = cp.AsTenant(ctx(t), ns, user, harness.TenantRules, harness.BurstTenantRules)
		if err != nil {
			t.Fatal(err)
		}
		// Another namespace's kubeconfig Secret, for the listener.
		if err := cp.Client.Create(ctx(t), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "admin-kubeconfig"},
			StringData: map[string]string{"kubeconfig": rec.kubeconfig("", "token: other-namespace-token")},
		}); err != nil {
			t.Fatal(err)
		}
		for name, spec := range map[string]map[string]any{
			// The platform lends the provider's identity to ns, writing in
			// its own namespace only (no targetNamespaces).
			"tenant-local": {"credentials": map[string]any{"source": "InjectedIdentity"}, "allowedNamespaces": []any{ns}},
			// And to someone else.
			"someone-else": {"credentials": map[string]any{"source": "InjectedIdentity"}, "allowedNamespaces": []any{"someone-else"}},
			// And to namespaces labelled for another team (the provider
			// gets the Burst's namespace to match it: the ClusterRole's
			// get on namespaces).
			"other-team": {"credentials": map[string]any{"source": "InjectedIdentity"}, "namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "other"}}},
		} {
			cpc := &unstructured.Unstructured{}
			cpc.SetGroupVersionKind(clusterProviderConfigGVK)
			cpc.SetName(name)
			setField(t, cpc, spec, "spec")
			if err := cp.Client.Create(ctx(t), cpc); err != nil {
				t.Fatal(err)
			}
		}
	})
	// Not a step: a step's cleanups run when it ends, and the provider must
	// run until the test does.
	startProviderAsServiceAccount(t, cp)

	step(t, "the tenant may not create a ClusterProviderConfig", func(t *testing.T) {
		cpc := &unstructured.Unstructured{}
		cpc.SetGroupVersionKind(clusterProviderConfigGVK)
		cpc.SetName("mine")
		setField(t, cpc, map[string]any{"credentials": map[string]any{"source": "InjectedIdentity"}, "allowedNamespaces": []any{ns}}, "spec")
		if err := tenant.Create(ctx(t), cpc); !kerrors.IsForbidden(err) {
			t.Fatalf("tenant created a ClusterProviderConfig: %v, want Forbidden", err)
		}
	})

	step(t, "the API server refuses a namespaced ProviderConfig with the provider's identity, and a Burst with no providerConfigRef", func(t *testing.T) {
		for _, source := range []string{"InjectedIdentity", "None"} {
			err := tenant.Create(ctx(t), providerConfig(t, ns, "mine-"+strings.ToLower(source), map[string]any{"source": source}))
			if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), "ask them for a ClusterProviderConfig that allows this namespace") {
				t.Errorf("ProviderConfig with source %s: %v, want Invalid naming the fix", source, err)
			}
		}
		b := tenantBurst(t, ns, "no-config", nil, ns)
		err := tenant.Create(ctx(t), b)
		if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.providerConfigRef is required") {
			t.Errorf("Burst without spec.providerConfigRef: %v, want Invalid saying to set it", err)
		}
	})

	// Each way, through the tenant's own ProviderConfig and Secret (or
	// the ClusterProviderConfigs), must end in Synced=False saying this.
	refused := map[string]struct {
		kubeconfig string // a Secret of the tenant's, if set
		secretRef  map[string]any
		configRef  map[string]any
		target     string
		msg        []string
	}{
		"tokenfile": {
			kubeconfig: rec.kubeconfig("", "tokenFile: "+tokenFile),
			msg:        []string{`key "kubeconfig" of Secret ` + ns + `/tokenfile`, `users[0].user.tokenFile of user "tenant" reads a file of the provider's own filesystem: put the token itself in token`},
		},
		"exec": {
			kubeconfig: rec.kubeconfig("", "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: /bin/sh, args: [-c, 'cat "+tokenFile+"']}"),
			msg:        []string{`key "kubeconfig" of Secret ` + ns + `/exec`, `users[0].user.exec of user "tenant" runs a program in the provider`},
		},
		"proxy": {
			kubeconfig: rec.kubeconfig("proxy-url: "+rec.srv.URL, "token: tenant-token"),
			msg:        []string{`key "kubeconfig" of Secret ` + ns + `/proxy`, `clusters[0].cluster.proxy-url of cluster "target" routes the provider's requests through a proxy`},
		},
		"client-cert-file": {
			kubeconfig: rec.kubeconfig("", "client-certificate: /etc/kubernetes/pki/admin.crt, client-key: /etc/kubernetes/pki/admin.key"),
			msg:        []string{`users[0].user.client-certificate of user "tenant" reads a file of the provider's own filesystem: put the certificate itself, base64, in client-certificate-data`},
		},
		"other-namespace-secret": {
			secretRef: map[string]any{"namespace": other, "name": "admin-kubeconfig", "key": "kubeconfig"},
			msg:       []string{"cannot get Secret " + ns + "/admin-kubeconfig", "always read from the ProviderConfig's own namespace"},
		},
		"not-allowed": {
			configRef: map[string]any{"kind": "ClusterProviderConfig", "name": "someone-else"},
			msg:       []string{"ClusterProviderConfig someone-else (spec.providerConfigRef) does not allow Bursts of namespace " + ns, "ask the platform team"},
		},
		"other-team": {
			configRef: map[string]any{"kind": "ClusterProviderConfig", "name": "other-team"},
			msg:       []string{"ClusterProviderConfig other-team (spec.providerConfigRef) does not allow Bursts of namespace " + ns, "spec.namespaceSelector"},
		},
		"kube-system": {
			configRef: map[string]any{"kind": "ClusterProviderConfig", "name": "tenant-local"},
			target:    "kube-system",
			msg:       []string{`spec.forProvider.targetNamespace "kube-system": ClusterProviderConfig tenant-local lists no spec.targetNamespaces, so its Bursts write only in their own namespace (` + ns + `)`},
		},
	}

	step(t, "the tenant's root MiniCluster, its lead broker on a node", func(t *testing.T) {
		c := exampleClaim(t, cp, "examples/bursting-root/claim.yaml", ns, root)
		// A node port Kubernetes picks: the shared control plane may run
		// other roots.
		unstructured.RemoveNestedField(c.Object, "spec", "flux", "bursting", "leadBrokerService")
		if err := tenant.Create(ctx(t), c); err != nil {
			t.Fatalf("the tenant cannot create its root MiniCluster: %v", err)
		}
		nodePort, _ = waitRoot(t, cp, ns, root)
		if _, err := cp.CreateNode(ctx(t), "tenant-burst-node", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: nodeIP}); err != nil {
			t.Fatal(err)
		}
		bindLeadPod(t, cp, ns, root, "", "tenant-burst-node")
	})

	step(t, "a tenant of the target namespace who made MiniCluster burst-0 first, with or without the Burst's labels, gets no certificate: the Burst is Synced=False naming it", func(t *testing.T) {
		const target, name = "burst-target", "to-target"
		createNamespace(t, cp, target)
		// Another tenant, of the target namespace, who may create
		// MiniClusters there and nothing else.
		mallory, err := cp.AsTenant(ctx(t), target, "mallory", harness.TenantRules)
		if err != nil {
			t.Fatal(err)
		}
		// From before any Burst exists: a copy written and deleted
		// between two looks is seen too.
		copies := watchSecret(t, cp, target, "burst-0-curve-cert")
		noCert := func() error {
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: target, Name: "burst-0-curve-cert"}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("Secret %s/burst-0-curve-cert: %v, want not found", target, err)
			}
			return nil
		}
		// The root's certificate next to mallory's MiniCluster is the leak
		// itself: fail on it at once, whatever else the Burst says.
		noCopyEver := func(t *testing.T) {
			t.Helper()
			if events, open := copies(); len(events) > 0 || !open {
				t.Fatalf("the watch on Secret %s/burst-0-curve-cert saw %v (open %t): want no such Secret, ever, and the watch open", target, events, open)
			}
		}

		// The platform lets the tenant's namespace burst into the target.
		cpc := &unstructured.Unstructured{}
		cpc.SetGroupVersionKind(clusterProviderConfigGVK)
		cpc.SetName("tenant-target")
		setField(t, cpc, map[string]any{"credentials": map[string]any{"source": "InjectedIdentity"}, "allowedNamespaces": []any{ns}, "targetNamespaces": []any{target}}, "spec")
		if err := cp.Client.Create(ctx(t), cpc); err != nil {
			t.Fatal(err)
		}

		// First as any MiniCluster, then with the labels the controller
		// puts on its own burst MiniCluster for this Burst, which mallory
		// may write as she likes: neither is the Burst's.
		for _, forged := range []bool{false, true} {
			// Under the name the Burst writes, mounting the Secret it would
			// copy the root's certificate into: with it, mallory's brokers
			// would join the root's Flux instance.
			c := newClaim(target, "burst-0")
			setField(t, c, map[string]any{
				"containers": []any{map[string]any{"image": "ubuntu:noble"}},
				"flux":       map[string]any{"curveCertSecret": "burst-0-curve-cert"}, //nolint:gosec // G101: a Secret's name, not its content
			}, "spec")
			if forged {
				c.SetLabels(map[string]string{burstLabel: name, burstLabel + "-namespace": ns})
			}
			if err := mallory.Create(ctx(t), c); err != nil {
				t.Fatalf("mallory cannot create MiniCluster %s/burst-0 (labels %v): %v", target, c.GetLabels(), err)
			}
			t.Cleanup(func() { _ = mallory.Delete(context.Background(), newClaim(target, "burst-0")) })
			made := mallorysView(c)
			unchanged := func() error {
				got, err := getClaim(t, cp, target, "burst-0")
				if err != nil {
					return fmt.Errorf("mallory's MiniCluster: %w", err)
				}
				if diff := cmp.Diff(made, mallorysView(got)); diff != "" {
					return fmt.Errorf("mallory's MiniCluster changed: -made, +now:\n%s", diff)
				}
				return nil
			}

			if err := tenant.Create(ctx(t), tenantBurst(t, ns, name, map[string]any{"kind": "ClusterProviderConfig", "name": "tenant-target"}, target)); err != nil {
				t.Fatal(err)
			}
			var synced string
			eventually(t, time.Minute, fmt.Sprintf("Burst %s is Synced=False naming mallory's MiniCluster (labels %v)", name, c.GetLabels()), func() error {
				noCopyEver(t)
				b := &unstructured.Unstructured{}
				b.SetGroupVersionKind(burstGVK)
				if err := tenant.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
					return err
				}
				st, msg := harness.Condition(b, "Synced")
				if want := "MiniCluster " + target + "/burst-0 exists in the target cluster but was not made by this Burst"; st != "False" || !strings.Contains(msg, want) {
					return fmt.Errorf("Synced %q (%s), want False saying %q", st, msg, want)
				}
				synced = msg
				return nil
			})
			// Several reconciles (2 s polls, and backoff) later, still nothing.
			consistently(t, 10*time.Second, "no certificate Secret in "+target+", and mallory's MiniCluster as mallory made it", func() error {
				return errors.Join(noCert(), unchanged())
			})
			noCopyEver(t)
			if fix := "delete it, or choose another cluster name (spec.forProvider.cluster) or target namespace (spec.forProvider.targetNamespace)"; !strings.Contains(synced, fix) {
				t.Errorf("Synced=False says %q, want it to name the fix %q", synced, fix)
			}
			if forged && !strings.Contains(synced, "labels do not make a MiniCluster the Burst's") {
				t.Errorf("Synced=False says %q, want it to say that the labels do not count", synced)
			}

			// The refused Burst can go, and leaves mallory's MiniCluster alone.
			b := &unstructured.Unstructured{}
			b.SetGroupVersionKind(burstGVK)
			b.SetNamespace(ns)
			b.SetName(name)
			if err := tenant.Delete(ctx(t), b); err != nil {
				t.Fatal(err)
			}
			eventually(t, time.Minute, "Burst "+name+" is gone", func() error {
				if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(b), b); !kerrors.IsNotFound(err) {
					return fmt.Errorf("Burst %s: %v, want not found", name, err)
				}
				return nil
			})
			if err := errors.Join(noCert(), unchanged()); err != nil {
				t.Error(err)
			}

			// Mallory's MiniCluster goes, for the next try.
			if err := mallory.Delete(ctx(t), newClaim(target, "burst-0")); err != nil {
				t.Fatal(err)
			}
			eventually(t, 2*time.Minute, "mallory's MiniCluster "+target+"/burst-0 is gone", func() error {
				if _, err := getClaim(t, cp, target, "burst-0"); !kerrors.IsNotFound(err) {
					return fmt.Errorf("MiniCluster %s/burst-0: %v, want not found", target, err)
				}
				return nil
			})
		}
		noCopyEver(t)
	})

	step(t, "every way beyond the tenant's namespace is refused: Synced=False naming the field and the fix", func(t *testing.T) {
		for name, r := range refused {
			configRef := r.configRef
			if configRef == nil {
				secretRef := r.secretRef
				if r.kubeconfig != "" {
					if err := tenant.Create(ctx(t), &corev1.Secret{
						ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
						StringData: map[string]string{"kubeconfig": r.kubeconfig},
					}); err != nil {
						t.Fatal(err)
					}
					// Whatever namespace it names, it is the tenant's.
					secretRef = map[string]any{"namespace": "kube-system", "name": name, "key": "kubeconfig"}
				}
				if err := tenant.Create(ctx(t), providerConfig(t, ns, name, map[string]any{"source": "Secret", "secretRef": secretRef})); err != nil {
					t.Fatalf("ProviderConfig %s: %v", name, err)
				}
				configRef = map[string]any{"kind": "ProviderConfig", "name": name}
			}
			target := r.target
			if target == "" {
				target = ns
			}
			if err := tenant.Create(ctx(t), tenantBurst(t, ns, name, configRef, target)); err != nil {
				t.Fatalf("Burst %s: %v", name, err)
			}
		}
		for name, r := range refused {
			eventually(t, time.Minute, "Burst "+name+" is Synced=False saying why", func() error {
				b := &unstructured.Unstructured{}
				b.SetGroupVersionKind(burstGVK)
				if err := tenant.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
					return err
				}
				st, msg := harness.Condition(b, "Synced")
				if st != "False" {
					return fmt.Errorf("Synced %q (%s), want False", st, msg)
				}
				for _, m := range r.msg {
					if !strings.Contains(msg, m) {
						return fmt.Errorf("Synced=False says %q, want it to contain %q", msg, m)
					}
				}
				return nil
			})
		}
		// Several reconciles of each (backoff) later, still nothing.
		consistently(t, 5*time.Second, "the listener receives no request", func() error {
			if got := rec.requests(); len(got) != 0 {
				return fmt.Errorf("%d requests, the first %v", len(got), got[0])
			}
			return nil
		})
		secrets := &corev1.SecretList{}
		if err := cp.Client.List(ctx(t), secrets, client.InNamespace("kube-system"), client.HasLabels{burstLabel}); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			t.Errorf("Secret kube-system/%s made by a Burst", s.Name)
		}
		if _, err := getClaim(t, cp, "kube-system", "burst-0"); !kerrors.IsNotFound(err) {
			t.Errorf("MiniCluster kube-system/burst-0: %v, want not found", err)
		}
	})

	step(t, "an inline token is all the listener ever sees", func(t *testing.T) {
		if err := tenant.Create(ctx(t), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inline"},
			StringData: map[string]string{"kubeconfig": rec.kubeconfig("", "token: tenant-token")},
		}); err != nil {
			t.Fatal(err)
		}
		if err := tenant.Create(ctx(t), providerConfig(t, ns, "inline", map[string]any{
			"source": "Secret", "secretRef": map[string]any{"namespace": ns, "name": "inline", "key": "kubeconfig"},
		})); err != nil {
			t.Fatal(err)
		}
		if err := tenant.Create(ctx(t), tenantBurst(t, ns, "inline", map[string]any{"kind": "ProviderConfig", "name": "inline"}, "flux-burst")); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the listener receives the provider's requests", func() error {
			if len(rec.requests()) == 0 {
				return fmt.Errorf("no request yet")
			}
			return nil
		})
		for _, h := range rec.requests() {
			if a := h.Get("Authorization"); a != "Bearer tenant-token" || h.Get("X-Test-Client-Certificate") != "" {
				t.Errorf("%s: Authorization %q, client certificate %q; want the tenant's inline token alone", h.Get("X-Test-Path"), a, h.Get("X-Test-Client-Certificate"))
			}
			for k, vs := range h {
				if strings.Contains(strings.Join(vs, ","), providerToken) {
					t.Errorf("%s: header %s carries the provider's token", h.Get("X-Test-Path"), k)
				}
			}
		}
		t.Logf("the listener received %d requests, each with the tenant's token alone", len(rec.requests()))
	})

	step(t, "through the platform's ClusterProviderConfig, the tenant bursts into its own namespace (the provider holding burst-rbac.yaml's rights only)", func(t *testing.T) {
		if err := tenant.Create(ctx(t), tenantBurst(t, ns, "local", map[string]any{"kind": "ClusterProviderConfig", "name": "tenant-local"}, ns)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "MiniCluster "+ns+"/burst-0 is made and the Burst is Synced", func() error {
			if err := wantBurstClaim(t, cp, ns, "burst-0", nodeIP, nodePort, root, 4, nil); err != nil {
				return err
			}
			return wantBurst(t, cp, ns, "local", map[string]any{"address": nodeIP, "claim": ns + "/burst-0"}, "Synced")
		})
		// job-index is opt-in: the root did not ask, so its pods keep
		// their labels.
		pods := &corev1.PodList{}
		if err := cp.Client.List(ctx(t), pods, client.InNamespace(ns), client.HasLabels{"job-index"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			t.Errorf("pod %s/%s labelled job-index without opting in", ns, p.Name)
		}
	})

	step(t, "the tenant deletes its Bursts, the refused ones too; the provider deletes what it made", func(t *testing.T) {
		names := []string{"local", "inline"}
		for name := range refused {
			names = append(names, name)
		}
		for _, name := range names {
			b := &unstructured.Unstructured{}
			b.SetGroupVersionKind(burstGVK)
			b.SetNamespace(ns)
			b.SetName(name)
			if err := tenant.Delete(ctx(t), b); err != nil {
				t.Fatalf("Burst %s: %v", name, err)
			}
		}
		eventually(t, 2*time.Minute, "every Burst and MiniCluster "+ns+"/burst-0 are gone", func() error {
			var left []string
			for _, name := range names {
				b := &unstructured.Unstructured{}
				b.SetGroupVersionKind(burstGVK)
				if err := cp.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, b); !kerrors.IsNotFound(err) {
					st, msg := harness.Condition(b, "Synced")
					left = append(left, fmt.Sprintf("Burst %s (%v; Synced %s %s)", name, err, st, msg))
				}
			}
			if _, err := getClaim(t, cp, ns, "burst-0"); !kerrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("MiniCluster burst-0 (%v)", err))
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		if err := tenant.Delete(ctx(t), newClaim(ns, root)); err != nil {
			t.Fatal(err)
		}
	})
}

// mallorysView is what of a MiniCluster mallory wrote, and the burst
// controller would change if it took it for its own: its Burst labels and
// the spec's size, flux and containers (Crossplane's own fields excluded).
func mallorysView(c *unstructured.Unstructured) map[string]any {
	l := c.GetLabels()
	spec, _, _ := unstructured.NestedMap(c.Object, "spec")
	return map[string]any{
		"labels":     []string{l[burstLabel], l[burstLabel+"-namespace"]},
		"size":       spec["size"],
		"flux":       spec["flux"],
		"containers": spec["containers"],
	}
}

// watchSecret watches Secret ns/name from now until the test ends. The
// returned func gives what the watch saw so far (event type and the
// Secret's labels and annotations, never its data) and whether it is still
// open: a watch the API server ended can no longer tell that no such
// Secret was written.
func watchSecret(t *testing.T, cp *harness.ControlPlane, ns, name string) func() ([]string, bool) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	// From any resource version the API server's watch cache holds: a
	// watch from the latest one waits for that cache to reach it, which
	// for Secrets, rarely written here, it may not do in time (the watch
	// then ends at once with "Too large resource version"). The cache
	// delivers every later event all the same, and as the initial state
	// an ADDED event for each Secret of the name that exists: none should.
	w, err := cs.CoreV1().Secrets(ns).Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: "0"})
	if err != nil {
		cancel()
		t.Fatalf("cannot watch Secret %s/%s: %v", ns, name, err)
	}
	var mu sync.Mutex
	var seen []string
	open := true
	go func() {
		for ev := range w.ResultChan() {
			what := fmt.Sprintf("%s %T", ev.Type, ev.Object)
			switch o := ev.Object.(type) {
			case *corev1.Secret:
				what = fmt.Sprintf("%s Secret %s/%s (labels %v, annotations %v)", ev.Type, o.Namespace, o.Name, o.Labels, o.Annotations)
			case *metav1.Status:
				what = fmt.Sprintf("%s: %s", ev.Type, o.Message)
			}
			mu.Lock()
			seen = append(seen, what)
			mu.Unlock()
		}
		mu.Lock()
		open = false
		mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
	})
	return func() ([]string, bool) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...), open
	}
}

// providerConfig is a namespaced ProviderConfig with the given credentials.
func providerConfig(t *testing.T, ns, name string, credentials map[string]any) *unstructured.Unstructured {
	t.Helper()
	pc := &unstructured.Unstructured{}
	pc.SetGroupVersionKind(providerConfigGVK)
	pc.SetNamespace(ns)
	pc.SetName(name)
	setField(t, pc, credentials, "spec", "credentials")
	return pc
}

// tenantBurst is a Burst of cluster burst-0 of root flux-sample, into
// target, with configRef (none if nil).
func tenantBurst(t *testing.T, ns, name string, configRef map[string]any, target string) *unstructured.Unstructured {
	t.Helper()
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(burstGVK)
	b.SetNamespace(ns)
	b.SetName(name)
	if configRef != nil {
		setField(t, b, configRef, "spec", "providerConfigRef")
	}
	setField(t, b, map[string]any{
		"root": "flux-sample", "cluster": "burst-0", "targetNamespace": target,
		"template": map[string]any{"containers": []any{map[string]any{"image": "ubuntu:noble"}}},
	}, "spec", "forProvider")
	return b
}

// startProviderAsServiceAccount runs cmd/provider as the service account
// compositions/burst-rbac.yaml binds, with a token of it: the rights it
// has are that ClusterRole's and its own CRDs' (which Crossplane's RBAC
// manager would grant), so a rule the provider needs and the file lacks
// fails the test.
func startProviderAsServiceAccount(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	dir := t.TempDir()
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := harness.BuildBinary(c, cp.Options().RepoRoot, "./cmd/provider", dir, "provider")
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, cp, "crossplane-system")
	if err := cp.ApplyFile(ctx(t), "compositions/burst-rbac.yaml"); err != nil {
		t.Fatal(err)
	}
	const sa = "minicluster-burst"
	own := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: sa + "-own-crds"}, Rules: providerOwnRules}
	ownBinding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa + "-own-crds"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: own.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "crossplane-system", Name: sa}},
	}
	for _, o := range []client.Object{own, ownBinding, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: sa}}} {
		if err := cp.Client.Create(ctx(t), o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts("crossplane-system").CreateToken(ctx(t), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc.AuthInfos = map[string]*clientcmdapi.AuthInfo{sa: {Token: tr.Status.Token}}
	for _, kctx := range kc.Contexts {
		kctx.AuthInfo = sa
	}
	path := filepath.Join(dir, "provider.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	p, err := cp.StartProvider(ctx(t), bin, path, "--debug", "--poll=2s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Log(err)
		}
	})
}
