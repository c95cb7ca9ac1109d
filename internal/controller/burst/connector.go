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
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
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

// Connect resolves the Burst's provider config: None means the cluster the
// controller runs in (another namespace), Secret a kubeconfig in a Secret.
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
			return nil, errors.Wrapf(err, "cannot get ClusterProviderConfig %s (spec.providerConfigRef): create one, with credentials.source None to burst into this cluster", ref.Name)
		}
		spec = pc.Spec
	default:
		return nil, errors.Errorf("spec.providerConfigRef.kind %q is neither ProviderConfig nor ClusterProviderConfig", ref.Kind)
	}

	switch spec.Credentials.Source {
	case xpv2.CredentialsSourceNone:
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
		return nil, errors.Errorf("credentials.source %q is not supported: use None or Secret", spec.Credentials.Source)
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

// Setup adds the Burst controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, poll time.Duration) error {
	name := managed.ControllerName(v1alpha1.BurstKind)
	r := managed.NewReconciler(mgr,
		resource.ManagedKind(v1alpha1.BurstGroupVersionKind),
		managed.WithExternalConnector(&connector{
			kube:      mgr.GetClient(),
			usage:     resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
			clientFor: NewClientFor(mgr.GetScheme()),
		}),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))), //nolint:staticcheck // SA1019: crossplane-runtime's event.NewAPIRecorder takes the old record.EventRecorder
		managed.WithPollInterval(poll),
	)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.Burst{}).
		Complete(r)
}

func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode patch")
	}
	return b, nil
}
