package burst

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
)

func TestUnsafeKubeconfig(t *testing.T) {
	const prefix = "the kubeconfig must carry its credentials inline, and the provider never reads its own files, runs a program or uses a proxy for it: "
	kc := func(clusters, users string) string {
		return "apiVersion: v1\nkind: Config\nclusters:\n" + clusters + "users:\n" + users +
			"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	}
	const okCluster = "  - {name: c, cluster: {server: \"https://203.0.113.1:6443\", certificate-authority-data: " + "Zm9v" + "}}\n"
	const okUser = "  - {name: u, user: {token: t}}\n"
	cases := map[string]struct {
		reason     string
		kubeconfig string
		want       string
	}{
		"InlineToken": {
			reason:     "A token and CA data inline: nothing to refuse.",
			kubeconfig: kc(okCluster, okUser),
		},
		"InlineClientCertificate": {
			reason:     "A client certificate and key inline: nothing to refuse.",
			kubeconfig: kc(okCluster, "  - {name: u, user: {client-certificate-data: Zm9v, client-key-data: YmFy}}\n"),
		},
		"TokenFileOfAnotherUser": {
			reason:     "A tokenFile of a user the current context does not use is refused too: a context is one edit away.",
			kubeconfig: kc(okCluster, okUser+"  - {name: x, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}\n"),
			want:       prefix + `users[1].user.tokenFile of user "x" reads a file of the provider's own filesystem: put the token itself in token`,
		},
		"ClientCertificateFiles": {
			reason:     "Client certificate and key paths are files of the provider.",
			kubeconfig: kc(okCluster, "  - {name: u, user: {client-certificate: /etc/ssl/a.crt, client-key: /etc/ssl/a.key}}\n"),
			want: prefix + `users[0].user.client-certificate of user "u" reads a file of the provider's own filesystem: put the certificate itself, base64, in client-certificate-data; ` +
				`users[0].user.client-key of user "u" reads a file of the provider's own filesystem: put the key itself, base64, in client-key-data`,
		},
		"CertificateAuthorityFile": {
			reason:     "A CA path is a file of the provider, in any cluster of the file.",
			kubeconfig: kc(okCluster+"  - {name: other, cluster: {server: \"https://203.0.113.2\", certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt}}\n", okUser),
			want:       prefix + `clusters[1].cluster.certificate-authority of cluster "other" reads a file of the provider's own filesystem: put the CA certificate itself, base64, in certificate-authority-data`,
		},
		"Exec": {
			reason:     "An exec plugin runs a program in the provider.",
			kubeconfig: kc(okCluster, "  - {name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: gke-gcloud-auth-plugin}}}\n"),
			want:       prefix + `users[0].user.exec of user "u" runs a program in the provider ("gke-gcloud-auth-plugin"): use a token, e.g. of a ServiceAccount of the target cluster (docs/bursting.md)`,
		},
		"AuthProvider": {
			reason:     "A legacy auth provider is refused.",
			kubeconfig: kc(okCluster, "  - {name: u, user: {auth-provider: {name: oidc}}}\n"),
			want:       prefix + `users[0].user.auth-provider of user "u" runs a program in the provider (auth provider "oidc"): use a token, e.g. of a ServiceAccount of the target cluster (docs/bursting.md)`,
		},
		"Proxy": {
			reason:     "A proxy would see (and could answer) every request.",
			kubeconfig: kc("  - {name: c, cluster: {server: \"https://203.0.113.1\", proxy-url: \"http://198.51.100.1:3128\"}}\n", okUser),
			want:       prefix + `clusters[0].cluster.proxy-url of cluster "c" routes the provider's requests through a proxy: remove it: the provider reaches the server directly`,
		},
		"DuplicateUserNames": {
			reason:     "Two users of one name do not parse; the parser's message, which quotes the entries (token included), is not passed on.",
			kubeconfig: kc(okCluster, "  - {name: u, user: {token: secret-token}}\n  - {name: u, user: {tokenFile: /tmp/t}}\n"),
			want:       errKubeconfigParse,
		},
		"NotAKubeconfig": {
			reason:     "What does not parse is refused as such.",
			kubeconfig: "users: {not: a list}",
			want:       errKubeconfigParse,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if _, err := UnsafeKubeconfig([]byte(tc.kubeconfig)); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUnsafeKubeconfig: -want, +got:\n%s", tc.reason, diff)
			}
			_, err := RESTConfigFromKubeconfig([]byte(tc.kubeconfig))
			if (err != nil) != (tc.want != "") {
				t.Errorf("%s\nRESTConfigFromKubeconfig: %v, want an error: %t", tc.reason, err, tc.want != "")
			}
		})
	}
}

// recorder is a TLS API server of the test's own: it answers every request
// 404 and records its headers and whether a client certificate came.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	Path          string
	Authorization string
	ClientCert    bool
	Headers       http.Header
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{
			Path: req.URL.Path, Authorization: req.Header.Get("Authorization"),
			ClientCert: req.TLS != nil && len(req.TLS.PeerCertificates) > 0, Headers: req.Header.Clone(),
		})
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

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// caPEM is the listener's certificate, which is its own CA.
func (r *recorder) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
}

// clientCertFiles writes a client certificate and key, standing in for
// files of the provider's own (e.g. a kubelet's or a cloud agent's).
func clientCertFiles(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:serviceaccount:crossplane-system:minicluster-burst"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "provider.crt"), filepath.Join(dir, "provider.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// providerToken stands in for the provider's service account token.
const providerToken = "provider-service-account-token-must-never-leave"

// TestNothingOfTheProviderLeaves connects Bursts through a tenant's
// namespaced ProviderConfig whose kubeconfig points at a listener of the
// test's own, with the real client builder (NewClientFor): a kubeconfig that
// would make the provider send its token file, present its client
// certificate, read its CA file, run a program or use a proxy is refused
// and the listener receives nothing; an inline token is all it ever sees
// otherwise. The control case shows that client-go, left alone, does send
// the file's token.
func TestNothingOfTheProviderLeaves(t *testing.T) {
	rec := newRecorder(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(providerToken), 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, rec.caPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := clientCertFiles(t, dir)
	caData := base64.StdEncoding.EncodeToString(rec.caPEM())
	kubeconfig := func(cluster, user string) string {
		return `apiVersion: v1
kind: Config
clusters: [{name: target, cluster: {server: "` + rec.srv.URL + `", ` + cluster + `}}]
users: [{name: x, user: {` + user + `}}]
contexts: [{name: target, context: {cluster: target, user: x}}]
current-context: target
`
	}
	withCA := "certificate-authority-data: " + caData

	cases := map[string]struct {
		reason     string
		kubeconfig string
		field      string // the field the refusal names; "" for a kubeconfig that works
	}{
		"TokenFile": {
			reason:     "The provider's service account token file.",
			kubeconfig: kubeconfig(withCA, "tokenFile: "+tokenFile),
			field:      `users[0].user.tokenFile of user "x"`,
		},
		"ClientCertificateFiles": {
			reason:     "A client certificate and key of the provider's filesystem.",
			kubeconfig: kubeconfig(withCA, "client-certificate: "+certFile+", client-key: "+keyFile),
			field:      `users[0].user.client-certificate of user "x"`,
		},
		"CertificateAuthorityFile": {
			reason:     "A CA file of the provider's filesystem (reading it tells whether it exists, and what it holds).",
			kubeconfig: kubeconfig("certificate-authority: "+caFile, "token: tenant-token"),
			field:      `clusters[0].cluster.certificate-authority of cluster "target"`,
		},
		"Exec": {
			reason:     "A program that would print the provider's token.",
			kubeconfig: kubeconfig(withCA, "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: /bin/sh, args: [-c, 'cat "+tokenFile+"']}"),
			field:      `users[0].user.exec of user "x"`,
		},
		"Proxy": {
			reason:     "A proxy (here the listener itself) would see every request.",
			kubeconfig: kubeconfig(withCA+", proxy-url: "+rec.srv.URL, "token: tenant-token"),
			field:      `clusters[0].cluster.proxy-url of cluster "target"`,
		},
		"InlineToken": {
			reason:     "An inline token works, and it is all the listener sees.",
			kubeconfig: kubeconfig(withCA, "token: tenant-token"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := len(rec.requests())
			local := localClient(t,
				namespacedConfig("cloud", secretCredentials("hpc", "kc")),
				kubeconfigSecret("hpc", "kc", tc.kubeconfig))
			c := &connector{
				kube:      local,
				usage:     resource.ModernTrackerFn(func(context.Context, resource.ModernManaged) error { return nil }),
				clientFor: NewClientFor(testScheme(t)),
			}
			b := newBurst()
			b.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "cloud"})
			ec, err := c.Connect(context.Background(), b)
			if tc.field != "" {
				if err == nil {
					t.Fatalf("%s\nConnect built a client, want a refusal", tc.reason)
				}
				for _, want := range []string{`key "kubeconfig" of Secret hpc/kc`, tc.field} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s\nConnect error:\n  %v\nwant it to name %s", tc.reason, err, want)
					}
				}
				// Give a stray request time to arrive.
				time.Sleep(100 * time.Millisecond)
				if got := rec.requests()[before:]; len(got) != 0 {
					t.Errorf("%s\nthe listener received %d requests from a refused kubeconfig: %+v", tc.reason, len(got), got)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nConnect: %v", tc.reason, err)
			}
			// Any read will do: discovery and the get reach the listener.
			_ = ec.(*external).target.Get(context.Background(), types.NamespacedName{Namespace: "cloud", Name: "x"}, &corev1.Secret{})
			got := rec.requests()[before:]
			if len(got) == 0 {
				t.Fatalf("%s\nthe listener received no request", tc.reason)
			}
			for _, r := range got {
				if r.Authorization != "Bearer tenant-token" || r.ClientCert {
					t.Errorf("%s\n%s: Authorization %q, client certificate %t; want the inline token alone", tc.reason, r.Path, r.Authorization, r.ClientCert)
				}
				for k, vs := range r.Headers {
					if strings.Contains(strings.Join(vs, ","), providerToken) {
						t.Errorf("%s\n%s: header %s carries the provider's token", tc.reason, r.Path, k)
					}
				}
			}
		})
	}

	// Control: what the checks prevent. client-go itself reads the token
	// file and sends it to whatever server the kubeconfig names.
	t.Run("ControlClientGoAlone", func(t *testing.T) {
		before := len(rec.requests())
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig(withCA, "tokenFile: "+tokenFile)))
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: testScheme(t)})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Get(context.Background(), types.NamespacedName{Namespace: "cloud", Name: "x"}, &corev1.Secret{})
		got := rec.requests()[before:]
		if len(got) == 0 || got[0].Authorization != "Bearer "+providerToken {
			t.Fatalf("the control did not leak the token file as expected (requests %+v): the listener would not catch a leak", got)
		}
	})
}
