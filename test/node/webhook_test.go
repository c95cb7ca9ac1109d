package node_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// refusingWebhook is a validating admission webhook, served over HTTPS from
// the test process on 127.0.0.1 (the API server runs on this machine), that
// refuses every request with message. It returns the server and the names
// (or generateNames) of the pods it refused.
func refusingWebhook(t *testing.T, message string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var refused []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/validate" {
			http.NotFound(w, r)
			return
		}
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		var pod corev1.Pod
		if err := json.Unmarshal(review.Request.Object.Raw, &pod); err == nil {
			name := pod.Name
			if name == "" {
				name = pod.GenerateName
			}
			mu.Lock()
			refused = append(refused, name)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Response: &admissionv1.AdmissionResponse{
				UID:     review.Request.UID,
				Allowed: false,
				Result:  &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: message},
			},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), refused...)
	}
}

// webhookConfiguration sends the creation of pods in ns, and only there,
// to url, trusting the certificate of srv; a webhook that cannot be
// reached refuses the pod.
func webhookConfiguration(name, ns, url string, srv *httptest.Server) *admissionregistrationv1.ValidatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(5)
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "cost-center.minicluster.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      &url,
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{""},
					APIVersions: []string{"v1"},
					Resources:   []string{"pods"},
					Scope:       &scope,
				},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// TestStuckAdmissionWebhook: a validating admission webhook refuses the
// MiniCluster's pods; the Job cannot create them, and the MiniCluster says
// what the webhook said.
func TestStuckAdmissionWebhook(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "stuck-webhook")
	const refusal = "pods here need a cost-center label"
	srv, refused := refusingWebhook(t, refusal)
	name := "stuck-webhook-" + ns

	// The API server takes only https webhook URLs.
	insecure := webhookConfiguration(name, ns, "http"+strings.TrimPrefix(srv.URL, "https")+"/validate", srv)
	if out, err := kubectlObject(t, cp, insecure, "create", "--dry-run=server"); err == nil || !strings.Contains(err.Error(), "'https' is the only allowed URL scheme") {
		t.Fatalf("an http webhook URL: want it refused for its scheme, got %q, %v", out, err)
	}

	// Registered after srv.Close, so run before it: the configuration goes
	// before the server, and nothing is left refusing pods.
	t.Cleanup(func() {
		if _, err := kubectl(t, cp, "delete", "validatingwebhookconfiguration", name, "--ignore-not-found"); err != nil {
			t.Log(err)
		}
	})
	if _, err := kubectlObject(t, cp, webhookConfiguration(name, ns, srv.URL+"/validate", srv), "create"); err != nil {
		t.Fatal(err)
	}
	eventually(t, sayWithin, "the API server asks the webhook, which refuses a pod", refusedPod(t, cp, ns, "", refusal))

	mustKubectl(t, cp, "apply", "-f", stuckManifest(t, ns, func(map[string]any) {}))
	wantStuck(t, cp, ns, jobFailedCreate(t, cp, ns),
		v1alpha2.ReasonFailedCreate, "0 of 2 brokers up; the Job cannot create its pods: ",
		`admission webhook "cost-center.minicluster.test" denied the request: `+refusal)

	var brokers int
	for _, n := range refused() {
		if strings.HasPrefix(n, "flux-sample-") {
			brokers++
		}
	}
	if brokers == 0 {
		t.Errorf("the webhook refused no broker pod, only %q", refused())
	}
}

// kubectlObject runs kubectl with args and -f, the file obj is written to.
func kubectlObject(t *testing.T, cp *harness.ControlPlane, obj any, args ...string) (string, error) {
	t.Helper()
	f := writeObject(t, obj)
	return kubectl(t, cp, append(args, "-f", f)...)
}
