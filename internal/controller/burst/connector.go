package burst

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
)

// Tracker records that a Burst uses its provider config.
type Tracker interface {
	Track(ctx context.Context, mg resource.ModernManaged) error
}

// ClientFor builds a client for a target cluster from a kubeconfig.
type ClientFor func(kubeconfig []byte) (client.Client, error)

// connector turns a Burst into an external client for its target cluster.
type connector struct {
	kube client.Client
	// fresh reads past the manager's cache: see external.fresh.
	fresh     client.Reader
	usage     Tracker
	clientFor ClientFor
}

// Connect resolves the Burst's provider config and decides whether the
// Burst may use it, before anything reaches a target:
//
//   - spec.providerConfigRef must be set: there is no implicit default
//     (which would hand every namespace whatever the platform team called
//     "default", typically the provider's own identity);
//   - a namespaced ProviderConfig reaches a cluster only with a kubeconfig
//     Secret of its own namespace: secretRef.namespace is overridden with
//     the ProviderConfig's namespace, as Crossplane's own providers do
//     (crossplane-runtime's ExtractSecret takes it as written), and
//     InjectedIdentity/None are refused (the CRD refuses them too);
//   - a ClusterProviderConfig serves only the namespaces its
//     allowedNamespaces or namespaceSelector admit, and lets them write
//     only its targetNamespaces (by default the Burst's own namespace);
//   - a kubeconfig is refused if it would make the provider read its own
//     files, run a program or use a proxy (UnsafeKubeconfig).
//
// A refused Burst that is being deleted (refused, or naming a config or
// Secret that does not exist) gets a client that reports nothing in the
// target, so it can go: the provider does nothing with an identity the
// Burst may not use, not even delete. Whatever such a Burst made while it
// was allowed stays in the target, labelled bursting.flux-framework.org/burst.
func (c *connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return nil, errors.New(errNotBurst)
	}
	cr, err := c.resolve(ctx, b)
	if refused := (*refusal)(nil); errors.As(err, &refused) && meta.WasDeleted(b) {
		return nothing{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := c.usage.Track(ctx, b); err != nil {
		return nil, errors.Wrap(err, "cannot track provider config usage")
	}
	if cr.secret == nil {
		return &external{local: c.kube, fresh: c.fresh, target: c.kube}, nil
	}
	kubeconfig, err := c.kubeconfig(ctx, cr)
	if refused := (*refusal)(nil); errors.As(err, &refused) && meta.WasDeleted(b) {
		return nothing{}, nil
	}
	if err != nil {
		return nil, err
	}
	target, err := c.clientFor(kubeconfig)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot build a client for the target cluster from the kubeconfig in key %q of Secret %s/%s (%s)", cr.secret.Key, cr.secret.Namespace, cr.secret.Name, cr.from)
	}
	return &external{local: c.kube, fresh: c.fresh, target: target}, nil
}

// credentials are how a Burst may reach its target: with the provider's
// own identity (secret nil) or a kubeconfig in a Secret.
type credentials struct {
	secret *xpv2.SecretKeySelector
	from   string // the config field that named the Secret, for messages
}

// A refusal is a Connect error that says the Burst may not do what it asks
// (as opposed to something missing or unreachable): a fix of the Burst, its
// config or its Secret is needed, not a retry.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// missing wraps the error of reading a config or Secret the Burst names: a
// refusal if it does not exist (the Burst's configuration is wrong, and a
// Burst that never could connect made nothing to delete), else an error to
// retry.
func missing(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if kerrors.IsNotFound(err) {
		return &refusal{msg: msg + ": " + err.Error()}
	}
	return errors.Wrap(err, msg)
}

// resolve reads the Burst's provider config and checks that the Burst may
// use it as it asks.
func (c *connector) resolve(ctx context.Context, b *v1alpha1.Burst) (*credentials, error) {
	ref := b.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return nil, refuse("spec.providerConfigRef is not set: name a ProviderConfig of namespace %s with a kubeconfig Secret (kind: ProviderConfig), or a ClusterProviderConfig the platform team made for this namespace (kind: ClusterProviderConfig); there is no default", b.Namespace)
	}
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := c.kube.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, pc); err != nil {
			return nil, missing(err, "cannot get ProviderConfig %s/%s (spec.providerConfigRef)", b.Namespace, ref.Name)
		}
		return namespacedCredentials(pc)
	case v1alpha1.ClusterProviderConfigKind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return nil, missing(err, "cannot get ClusterProviderConfig %s (spec.providerConfigRef): ask the platform team for one that allows namespace %s, or use a ProviderConfig of this namespace with a kubeconfig Secret", ref.Name, b.Namespace)
		}
		if err := c.admits(ctx, pc, b.Namespace); err != nil {
			return nil, err
		}
		if err := mayWrite(pc, b); err != nil {
			return nil, err
		}
		return clusterCredentials(pc)
	default:
		return nil, refuse("spec.providerConfigRef.kind %q is neither ProviderConfig nor ClusterProviderConfig", ref.Kind)
	}
}

// namespacedCredentials are a namespaced ProviderConfig's: a Secret of its
// own namespace, whatever secretRef.namespace says, and never the
// provider's own identity.
func namespacedCredentials(pc *v1alpha1.ProviderConfig) (*credentials, error) {
	from := fmt.Sprintf("spec.credentials.secretRef of ProviderConfig %s/%s", pc.Namespace, pc.Name)
	switch cr := pc.Spec.Credentials; cr.Source {
	case xpv2.CredentialsSourceSecret:
		if cr.SecretRef == nil {
			return nil, refuse("ProviderConfig %s/%s: credentials.source Secret needs credentials.secretRef, the name and key of a Secret of namespace %s holding the target cluster's kubeconfig", pc.Namespace, pc.Name, pc.Namespace)
		}
		sel := *cr.SecretRef
		sel.Namespace = pc.Namespace
		return &credentials{secret: &sel, from: from}, nil
	case xpv2.CredentialsSourceInjectedIdentity, xpv2.CredentialsSourceNone:
		return nil, refuse("ProviderConfig %s/%s: credentials.source %s is refused for a namespaced ProviderConfig: it would lend the provider's own identity to whoever may write ProviderConfigs in namespace %s. Use credentials.source Secret with a kubeconfig Secret of this namespace, or ask the platform team for a ClusterProviderConfig that allows this namespace (and set spec.providerConfigRef.kind: ClusterProviderConfig)", pc.Namespace, pc.Name, cr.Source, pc.Namespace)
	default:
		return nil, refuse("ProviderConfig %s/%s: credentials.source %q is not supported: use Secret", pc.Namespace, pc.Name, cr.Source)
	}
}

// clusterCredentials are a ClusterProviderConfig's: the provider's own
// identity, or a Secret where the platform team says.
func clusterCredentials(pc *v1alpha1.ClusterProviderConfig) (*credentials, error) {
	switch cr := pc.Spec.Credentials; cr.Source {
	case xpv2.CredentialsSourceInjectedIdentity, xpv2.CredentialsSourceNone:
		return &credentials{}, nil
	case xpv2.CredentialsSourceSecret:
		if cr.SecretRef == nil {
			return nil, refuse("ClusterProviderConfig %s: credentials.source Secret needs credentials.secretRef", pc.Name)
		}
		sel := *cr.SecretRef
		return &credentials{secret: &sel, from: "spec.credentials.secretRef of ClusterProviderConfig " + pc.Name}, nil
	default:
		return nil, refuse("ClusterProviderConfig %s: credentials.source %q is not supported: use InjectedIdentity or Secret", pc.Name, cr.Source)
	}
}

// admits tells whether a ClusterProviderConfig serves the Bursts of
// namespace ns: ns is in its allowedNamespaces, or its namespaceSelector
// matches ns's labels. Neither set: no namespace.
func (c *connector) admits(ctx context.Context, pc *v1alpha1.ClusterProviderConfig, ns string) error {
	if slices.Contains(pc.Spec.AllowedNamespaces, ns) {
		return nil
	}
	if pc.Spec.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pc.Spec.NamespaceSelector)
		if err != nil {
			return refuse("ClusterProviderConfig %s: spec.namespaceSelector is invalid (%v): ask the platform team to fix it", pc.Name, err)
		}
		n := &corev1.Namespace{}
		if err := c.kube.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
			return errors.Wrapf(err, "cannot get namespace %s to match it against ClusterProviderConfig %s's spec.namespaceSelector", ns, pc.Name)
		}
		if sel.Matches(klabels.Set(n.Labels)) {
			return nil
		}
	}
	return refuse("ClusterProviderConfig %s (spec.providerConfigRef) does not allow Bursts of namespace %s: ask the platform team to add it to the config's spec.allowedNamespaces (or label it to match spec.namespaceSelector), or use a ProviderConfig of this namespace with a kubeconfig Secret", pc.Name, ns)
}

// mayWrite tells whether a Burst using a ClusterProviderConfig may write
// in its spec.forProvider.targetNamespace: one of the config's
// targetNamespaces, or, if it lists none, the Burst's own namespace.
func mayWrite(pc *v1alpha1.ClusterProviderConfig, b *v1alpha1.Burst) error {
	target := b.Spec.ForProvider.TargetNamespace
	allowed := pc.Spec.TargetNamespaces
	if len(allowed) == 0 {
		allowed = []string{b.Namespace}
	}
	if slices.Contains(allowed, target) {
		return nil
	}
	if len(pc.Spec.TargetNamespaces) == 0 {
		return refuse("spec.forProvider.targetNamespace %q: ClusterProviderConfig %s lists no spec.targetNamespaces, so its Bursts write only in their own namespace (%s): set targetNamespace: %s, or ask the platform team to add %s to the config's spec.targetNamespaces", target, pc.Name, b.Namespace, b.Namespace, target)
	}
	return refuse("spec.forProvider.targetNamespace %q is not one of ClusterProviderConfig %s's spec.targetNamespaces (%s): use one of those, or ask the platform team to add it", target, pc.Name, strings.Join(pc.Spec.TargetNamespaces, ", "))
}

// kubeconfig reads the kubeconfig a config names, one Secret by one get
// (the provider caches no Secrets), and refuses it if it reads the
// provider's files, runs a program or names a proxy.
func (c *connector) kubeconfig(ctx context.Context, cr *credentials) ([]byte, error) {
	ref := cr.secret
	s := &corev1.Secret{}
	if err := c.kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return nil, missing(err, "cannot get Secret %s/%s (%s; a namespaced ProviderConfig's Secret is always read from the ProviderConfig's own namespace)", ref.Namespace, ref.Name, cr.from)
	}
	data := s.Data[ref.Key]
	if len(data) == 0 {
		return nil, refuse("Secret %s/%s has no key %q (%s): put the target cluster's kubeconfig there", ref.Namespace, ref.Name, ref.Key, cr.from)
	}
	if _, err := UnsafeKubeconfig(data); err != nil {
		return nil, refuse("cannot use the kubeconfig in key %q of Secret %s/%s (%s): %v", ref.Key, ref.Namespace, ref.Name, cr.from, err)
	}
	return data, nil
}

// nothing is the external client of a refused Burst being deleted: it
// reports that nothing exists in the target, so the reconciler removes the
// Burst's finalizer without the provider acting for it.
type nothing struct{}

func (nothing) Observe(context.Context, resource.Managed) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: false}, nil
}

func (nothing) Create(context.Context, resource.Managed) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, errors.New("a refused Burst creates nothing")
}

func (nothing) Update(context.Context, resource.Managed) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, errors.New("a refused Burst updates nothing")
}

func (nothing) Delete(context.Context, resource.Managed) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (nothing) Disconnect(context.Context) error { return nil }

// TargetScheme is what the controller reads and writes in a target.
func TargetScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := scheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

func scheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		v1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// maxCachedClients bounds NewClientFor's cache; it is cleared when full
// (rotated kubeconfigs leave old entries behind).
const maxCachedClients = 64

// NewClientFor builds target clients from kubeconfigs, one per distinct
// kubeconfig: every reconcile of every Burst connects, and a new client
// would discover the target's API groups again each time.
func NewClientFor(s *runtime.Scheme) ClientFor {
	var mu sync.Mutex
	cache := map[[sha256.Size]byte]client.Client{}
	return func(kubeconfig []byte) (client.Client, error) {
		key := sha256.Sum256(kubeconfig)
		mu.Lock()
		defer mu.Unlock()
		if c, ok := cache[key]; ok {
			return c, nil
		}
		cfg, err := RESTConfigFromKubeconfig(kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg.Timeout = 30 * time.Second
		c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: s})
		if err != nil {
			return nil, err
		}
		if len(cache) >= maxCachedClients {
			clear(cache)
		}
		cache[key] = c
		return c, nil
	}
}

// Setup adds the Burst controller and the controllers of its provider
// configs to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, poll time.Duration) error {
	name := managed.ControllerName(v1alpha1.BurstKind)
	r := NewReconciler(mgr, mgr.GetAPIReader(), o.Logger.WithValues("controller", name), event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), poll) //nolint:staticcheck // SA1019: crossplane-runtime's recorder still takes the deprecated recorder
	if err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.Burst{}).
		Complete(r); err != nil {
		return errors.Wrap(err, "cannot set up the Burst controller")
	}
	for _, kind := range []string{v1alpha1.ProviderConfigKind, v1alpha1.ClusterProviderConfigKind} {
		if err := setupConfig(mgr, o, kind); err != nil {
			return err
		}
	}
	return nil
}

// NewReconciler is the Burst reconciler. The objects a Burst makes in its
// target are named by its spec (the cluster name, <cluster>-curve-cert), so
// its external name is deterministic: a crash between creating them and
// recording it leaves nothing to leak, and the reconciler may go on rather
// than wait for someone to remove Crossplane's create-pending annotation.
// fresh reads Bursts from the API server (the manager's API reader): the
// uid of the burst MiniCluster a Burst created is checked against it before
// a MiniCluster of that name is called foreign.
func NewReconciler(mgr ctrl.Manager, fresh client.Reader, log logging.Logger, rec event.Recorder, poll time.Duration) *managed.Reconciler {
	return managed.NewReconciler(mgr,
		resource.ManagedKind(v1alpha1.BurstGroupVersionKind),
		managed.WithExternalConnector(&connector{
			kube:      mgr.GetClient(),
			fresh:     fresh,
			usage:     resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
			clientFor: NewClientFor(mgr.GetScheme()),
		}),
		managed.WithDeterministicExternalName(true),
		managed.WithManagementPolicies(),
		managed.WithLogger(log),
		managed.WithRecorder(rec),
		managed.WithPollInterval(poll),
		managed.WithPollIntervalHook(pollInterval),
	)
}

// setupConfig adds the controller of one kind of provider config: it
// counts the Bursts using a config (their ProviderConfigUsages) and keeps a
// config in use from being deleted until they are gone.
func setupConfig(mgr ctrl.Manager, o controller.Options, kind string) error {
	name := providerconfig.ControllerName(kind)
	gv := v1alpha1.SchemeGroupVersion
	r := providerconfig.NewReconciler(mgr, resource.ProviderConfigKinds{
		Config:    gv.WithKind(kind),
		Usage:     gv.WithKind(v1alpha1.ProviderConfigUsageKind),
		UsageList: gv.WithKind(v1alpha1.ProviderConfigUsageKind + "List"),
	},
		providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
		providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))), //nolint:staticcheck // SA1019: as above
	)
	var config client.Object = &v1alpha1.ProviderConfig{}
	if kind == v1alpha1.ClusterProviderConfigKind {
		config = &v1alpha1.ClusterProviderConfig{}
	}
	return errors.Wrapf(ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(config).
		Watches(&v1alpha1.ProviderConfigUsage{}, &resource.EnqueueRequestForProviderConfig{Kind: kind}).
		Complete(r), "cannot set up the %s controller", kind)
}

func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode patch")
	}
	return b, nil
}
