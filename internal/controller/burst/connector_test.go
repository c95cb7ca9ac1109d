package burst

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
)

const inlineKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://203.0.113.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// tokenFileKubeconfig names the path of a token, not a credential.
//
//nolint:gosec // G101: a path to a token, not a credential
const tokenFileKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://203.0.113.1:6443"}}]
users:
  - {name: u, user: {token: t}}
  - {name: x, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

func kubeconfigSecret(ns, name, data string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"kubeconfig": []byte(data)}}
}

func secretCredentials(ns, name string) v1alpha1.ProviderCredentials {
	return v1alpha1.ProviderCredentials{
		Source: xpv2.CredentialsSourceSecret,
		CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
			SecretReference: xpv2.SecretReference{Namespace: ns, Name: name}, Key: "kubeconfig",
		}},
	}
}

func namespacedConfig(name string, cr v1alpha1.ProviderCredentials) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name}, Spec: v1alpha1.ProviderConfigSpec{Credentials: cr}}
}

func clusterConfig(name string, spec v1alpha1.ClusterProviderConfigSpec) *v1alpha1.ClusterProviderConfig {
	if spec.Credentials.Source == "" {
		spec.Credentials.Source = xpv2.CredentialsSourceInjectedIdentity
	}
	return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func namespaceObj(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestConnect checks who a Burst may reach its target as, and where: every
// refusal says which field and what to do, and nothing is built or tracked
// for a refused Burst.
func TestConnect(t *testing.T) {
	type want struct {
		Target     string // "local" (the provider's identity), "remote", "nothing" or "" (error)
		Kubeconfig string // what the target client was built from
		Tracked    bool
		Refused    bool
		Msg        []string // fragments of the error
	}
	pcRef := func(kind, name string) func(*v1alpha1.Burst) {
		return func(b *v1alpha1.Burst) {
			b.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: kind, Name: name})
		}
	}
	cases := map[string]struct {
		reason string
		burst  []func(*v1alpha1.Burst)
		objs   []client.Object
		want   want
	}{
		"NoProviderConfigRef": {
			reason: "There is no implicit default: a Burst without spec.providerConfigRef is refused, even with a ClusterProviderConfig named default that allows it.",
			objs:   []client.Object{clusterConfig("default", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"hpc"}, TargetNamespaces: []string{"cloud"}})},
			want:   want{Refused: true, Msg: []string{"spec.providerConfigRef is not set", "there is no default"}},
		},
		"UnknownKind": {
			reason: "A reference of another kind is refused.",
			burst:  []func(*v1alpha1.Burst){pcRef("Secret", "x")},
			want:   want{Refused: true, Msg: []string{`spec.providerConfigRef.kind "Secret"`}},
		},
		"NamespacedSecret": {
			reason: "A namespaced ProviderConfig's kubeconfig Secret of its namespace builds the target client.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud")},
			objs:   []client.Object{namespacedConfig("cloud", secretCredentials("hpc", "kc")), kubeconfigSecret("hpc", "kc", inlineKubeconfig)},
			want:   want{Target: "remote", Kubeconfig: inlineKubeconfig, Tracked: true},
		},
		"NamespacedSecretOfAnotherNamespace": {
			reason: "A namespaced ProviderConfig's secretRef.namespace is ignored: the Secret is read from the ProviderConfig's namespace, so kube-system's is never read.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud")},
			objs:   []client.Object{namespacedConfig("cloud", secretCredentials("kube-system", "admin")), kubeconfigSecret("kube-system", "admin", inlineKubeconfig)},
			want:   want{Tracked: true, Refused: true, Msg: []string{"cannot get Secret hpc/admin", "always read from the ProviderConfig's own namespace"}},
		},
		"NamespacedSecretOfAnotherNamespaceSameName": {
			reason: "With a Secret of that name in its own namespace, that one is used, not kube-system's.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud")},
			objs: []client.Object{namespacedConfig("cloud", secretCredentials("kube-system", "admin")),
				kubeconfigSecret("kube-system", "admin", tokenFileKubeconfig), kubeconfigSecret("hpc", "admin", inlineKubeconfig)},
			want: want{Target: "remote", Kubeconfig: inlineKubeconfig, Tracked: true},
		},
		"NamespacedInjectedIdentity": {
			reason: "A namespaced ProviderConfig never lends the provider's own identity (the CRD refuses it; this is the second line).",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "mine")},
			objs:   []client.Object{namespacedConfig("mine", v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity})},
			want:   want{Refused: true, Msg: []string{"ProviderConfig hpc/mine: credentials.source InjectedIdentity is refused for a namespaced ProviderConfig", "ClusterProviderConfig that allows this namespace"}},
		},
		"NamespacedNone": {
			reason: "None, InjectedIdentity's alias, is refused the same.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "mine")},
			objs:   []client.Object{namespacedConfig("mine", v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone})},
			want:   want{Refused: true, Msg: []string{"credentials.source None is refused"}},
		},
		"NamespacedTokenFile": {
			reason: "A kubeconfig naming a tokenFile, in any user, is refused before any client exists, naming the key, the Secret and the field.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud")},
			objs:   []client.Object{namespacedConfig("cloud", secretCredentials("hpc", "kc")), kubeconfigSecret("hpc", "kc", tokenFileKubeconfig)},
			want: want{Tracked: true, Refused: true, Msg: []string{
				`cannot use the kubeconfig in key "kubeconfig" of Secret hpc/kc (spec.credentials.secretRef of ProviderConfig hpc/cloud)`,
				`users[1].user.tokenFile of user "x" reads a file of the provider's own filesystem: put the token itself in token`,
			}},
		},
		"NamespacedMissingKey": {
			reason: "A Secret without the key says so.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud")},
			objs:   []client.Object{namespacedConfig("cloud", secretCredentials("hpc", "kc")), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "kc"}}},
			want:   want{Tracked: true, Refused: true, Msg: []string{`Secret hpc/kc has no key "kubeconfig"`}},
		},
		"MissingProviderConfig": {
			reason: "A missing ProviderConfig names the reference.",
			burst:  []func(*v1alpha1.Burst){pcRef("ProviderConfig", "nope")},
			want:   want{Refused: true, Msg: []string{"cannot get ProviderConfig hpc/nope (spec.providerConfigRef)"}},
		},
		"ClusterInjectedIdentity": {
			reason: "A ClusterProviderConfig that allows the namespace and the target lends the provider's identity: the local cluster.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs:   []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"other", "hpc"}, TargetNamespaces: []string{"cloud"}})},
			want:   want{Target: "local", Tracked: true},
		},
		"ClusterNotAllowed": {
			reason: "A ClusterProviderConfig that does not list the namespace refuses it.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs:   []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"other"}, TargetNamespaces: []string{"cloud"}})},
			want:   want{Refused: true, Msg: []string{"ClusterProviderConfig local (spec.providerConfigRef) does not allow Bursts of namespace hpc", "spec.allowedNamespaces"}},
		},
		"ClusterAllowsNone": {
			reason: "A ClusterProviderConfig with neither allowedNamespaces nor namespaceSelector serves no namespace.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs:   []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{}), namespaceObj("hpc", nil)},
			want:   want{Refused: true, Msg: []string{"does not allow Bursts of namespace hpc"}},
		},
		"ClusterSelectorMatches": {
			reason: "A namespaceSelector admits a namespace whose labels match.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs: []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bursting": "allowed"}}, TargetNamespaces: []string{"cloud"},
			}), namespaceObj("hpc", map[string]string{"bursting": "allowed"})},
			want: want{Target: "local", Tracked: true},
		},
		"ClusterSelectorDoesNotMatch": {
			reason: "A namespaceSelector refuses a namespace whose labels do not match.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs: []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bursting": "allowed"}}, TargetNamespaces: []string{"cloud"},
			}), namespaceObj("hpc", map[string]string{"bursting": "no"})},
			want: want{Refused: true, Msg: []string{"does not allow Bursts of namespace hpc", "spec.namespaceSelector"}},
		},
		"ClusterTargetNotAllowed": {
			reason: "A target namespace the ClusterProviderConfig does not list (kube-system) is refused, naming the ones it allows.",
			burst: []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local"), func(b *v1alpha1.Burst) {
				b.Spec.ForProvider.TargetNamespace = "kube-system"
			}},
			objs: []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"hpc"}, TargetNamespaces: []string{"cloud", "flux-burst"}})},
			want: want{Refused: true, Msg: []string{`spec.forProvider.targetNamespace "kube-system" is not one of ClusterProviderConfig local's spec.targetNamespaces (cloud, flux-burst)`}},
		},
		"ClusterDefaultTargetIsOwnNamespace": {
			reason: "Without targetNamespaces a Burst writes only in its own namespace.",
			burst: []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local"), func(b *v1alpha1.Burst) {
				b.Spec.ForProvider.TargetNamespace = "hpc"
			}},
			objs: []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"hpc"}})},
			want: want{Target: "local", Tracked: true},
		},
		"ClusterDefaultTargetRefusesOthers": {
			reason: "Without targetNamespaces any other target namespace is refused.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local")},
			objs:   []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"hpc"}})},
			want:   want{Refused: true, Msg: []string{`spec.forProvider.targetNamespace "cloud": ClusterProviderConfig local lists no spec.targetNamespaces, so its Bursts write only in their own namespace (hpc)`}},
		},
		"ClusterSecret": {
			reason: "A ClusterProviderConfig's Secret is read where the platform team says.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "remote")},
			objs: []client.Object{clusterConfig("remote", v1alpha1.ClusterProviderConfigSpec{
				Credentials: secretCredentials("crossplane-system", "cloud"), AllowedNamespaces: []string{"hpc"}, TargetNamespaces: []string{"cloud"},
			}), kubeconfigSecret("crossplane-system", "cloud", inlineKubeconfig)},
			want: want{Target: "remote", Kubeconfig: inlineKubeconfig, Tracked: true},
		},
		"MissingClusterProviderConfig": {
			reason: "A missing ClusterProviderConfig says whom to ask.",
			burst:  []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "nope")},
			want:   want{Refused: true, Msg: []string{"cannot get ClusterProviderConfig nope (spec.providerConfigRef): ask the platform team"}},
		},
		"RefusedWhileDeleting": {
			reason: "A refused Burst being deleted gets a client that does nothing, so it can go.",
			burst: []func(*v1alpha1.Burst){pcRef("ClusterProviderConfig", "local"), func(b *v1alpha1.Burst) {
				b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
				b.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
			}},
			objs: []client.Object{clusterConfig("local", v1alpha1.ClusterProviderConfigSpec{AllowedNamespaces: []string{"other"}})},
			want: want{Target: "nothing"},
		},
		"MissingSecretWhileDeleting": {
			reason: "A Burst whose Secret does not exist never connected: it can be deleted.",
			burst: []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud"), func(b *v1alpha1.Burst) {
				b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
				b.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
			}},
			objs: []client.Object{namespacedConfig("cloud", secretCredentials("hpc", "kc"))},
			want: want{Target: "nothing", Tracked: true},
		},
		"RefusedKubeconfigWhileDeleting": {
			reason: "A Burst whose kubeconfig is refused can be deleted too, without using it.",
			burst: []func(*v1alpha1.Burst){pcRef("ProviderConfig", "cloud"), func(b *v1alpha1.Burst) {
				b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
				b.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
			}},
			objs: []client.Object{namespacedConfig("cloud", secretCredentials("hpc", "kc")), kubeconfigSecret("hpc", "kc", tokenFileKubeconfig)},
			want: want{Target: "nothing", Tracked: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Plain fakes: the test tells the two apart by comparing
			// them, which localClient's interceptor, a struct of funcs,
			// does not allow.
			local := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(tc.objs...).Build()
			remote := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
			var got want
			c := &connector{
				kube: local,
				usage: resource.ModernTrackerFn(func(context.Context, resource.ModernManaged) error {
					got.Tracked = true
					return nil
				}),
				clientFor: func(kc []byte) (client.Client, error) {
					got.Kubeconfig = string(kc)
					return remote, nil
				},
			}
			b := newBurst()
			for _, f := range tc.burst {
				f(b)
			}
			ec, err := c.Connect(context.Background(), b)
			if err != nil {
				got.Refused = isRefusal(err)
				for _, m := range tc.want.Msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("%s\nConnect error:\n  %v\nwant it to contain:\n  %s", tc.reason, err, m)
					}
				}
				got.Msg = tc.want.Msg
			} else if len(tc.want.Msg) > 0 {
				t.Errorf("%s\nConnect succeeded, want an error containing %q", tc.reason, tc.want.Msg)
			}
			switch e := ec.(type) {
			case *external:
				switch e.target {
				case local:
					got.Target = "local"
				case remote:
					got.Target = "remote"
				}
			case nothing:
				got.Target = "nothing"
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nConnect: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func isRefusal(err error) bool {
	r := (*refusal)(nil)
	return errors.As(err, &r)
}
