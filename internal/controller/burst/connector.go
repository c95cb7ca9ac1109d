package burst

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
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
	kube      client.Client
	usage     Tracker
	clientFor ClientFor
}

// Connect resolves the Burst's provider config: InjectedIdentity (or its
// alias None) means the cluster the controller runs in, with its own service
// account; Secret a kubeconfig in a Secret.
func (c *connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return nil, errors.New(errNotBurst)
	}
	if err := c.usage.Track(ctx, b); err != nil {
		return nil, errors.Wrap(err, "cannot track provider config usage")
	}
	ref := b.GetProviderConfigReference()
	if ref == nil {
		ref = &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
	}
	var spec v1alpha1.ProviderConfigSpec
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := c.kube.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, pc); err != nil {
			return nil, errors.Wrapf(err, "cannot get ProviderConfig %s/%s (spec.providerConfigRef)", b.Namespace, ref.Name)
		}
		spec = pc.Spec
	case v1alpha1.ClusterProviderConfigKind, "":
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return nil, errors.Wrapf(err, "cannot get ClusterProviderConfig %s (spec.providerConfigRef): create one, with credentials.source InjectedIdentity to burst into this cluster", ref.Name)
		}
		spec = pc.Spec
	default:
		return nil, errors.Errorf("spec.providerConfigRef.kind %q is neither ProviderConfig nor ClusterProviderConfig", ref.Kind)
	}

	switch spec.Credentials.Source {
	case xpv2.CredentialsSourceInjectedIdentity, xpv2.CredentialsSourceNone:
		return &external{local: c.kube, target: c.kube}, nil
	case xpv2.CredentialsSourceSecret:
		kubeconfig, err := resource.CommonCredentialExtractor(ctx, spec.Credentials.Source, c.kube, spec.Credentials.CommonCredentialSelectors)
		if err != nil {
			return nil, errors.Wrap(err, "cannot read the target cluster's kubeconfig from the provider config's Secret")
		}
		target, err := c.clientFor(kubeconfig)
		if err != nil {
			return nil, errors.Wrap(err, "cannot build a client for the target cluster from the provider config's kubeconfig")
		}
		return &external{local: c.kube, target: target}, nil
	default:
		return nil, errors.Errorf("credentials.source %q is not supported: use InjectedIdentity or Secret", spec.Credentials.Source)
	}
}

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
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return nil, err
		}
		if err := selfContained(cfg); err != nil {
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

// selfContained refuses a kubeconfig whose credentials come from a program
// (an exec plugin such as gke-gcloud-auth-plugin or aws eks get-token, or a
// legacy auth provider): the provider's image has no such programs, so the
// client would fail on every request with a less helpful error.
func selfContained(cfg *rest.Config) error {
	switch {
	case cfg.ExecProvider != nil:
		return errors.Errorf("the kubeconfig gets its credentials from the program %q (an exec plugin), which the provider's image does not contain: use a kubeconfig with a token, e.g. of a ServiceAccount in the target cluster (docs/bursting.md)", cfg.ExecProvider.Command)
	case cfg.AuthProvider != nil:
		return errors.Errorf("the kubeconfig uses the auth provider %q, which the provider does not support: use a kubeconfig with a token, e.g. of a ServiceAccount in the target cluster (docs/bursting.md)", cfg.AuthProvider.Name)
	}
	return nil
}

// Setup adds the Burst controller and the controllers of its provider
// configs to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, poll time.Duration) error {
	name := managed.ControllerName(v1alpha1.BurstKind)
	r := NewReconciler(mgr, o.Logger.WithValues("controller", name), event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), poll) //nolint:staticcheck // SA1019: crossplane-runtime's recorder still takes the deprecated recorder
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
func NewReconciler(mgr ctrl.Manager, log logging.Logger, rec event.Recorder, poll time.Duration) *managed.Reconciler {
	return managed.NewReconciler(mgr,
		resource.ManagedKind(v1alpha1.BurstGroupVersionKind),
		managed.WithExternalConnector(&connector{
			kube:      mgr.GetClient(),
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
