// Command provider runs the MiniCluster burst controller: it realises Burst
// resources as burst MiniCluster claims in target clusters. It also labels
// the broker pods of MiniClusters that ask for it (pod label
// flux-framework.org/job-index: "true") job-index=<its index>, as the Flux
// Operator does.
package main

import (
	"net/http"
	"time"

	"github.com/alecthomas/kong"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/internal/controller/burst"
	"github.com/flux-framework/minicluster-crossplane/internal/controller/jobindex"
)

// CLI of the burst controller.
type CLI struct {
	Debug                  bool          `help:"Emit debug logs." short:"d"`
	Poll                   time.Duration `default:"30s" help:"How often to check that every burst MiniCluster still points at its lead broker (e.g. after the lead moved to another node)."`
	MaxReconcileRate       int           `default:"10"  help:"Maximum number of Bursts reconciled at once."`
	LeaderElection         bool          `env:"LEADER_ELECTION" help:"Use leader election, so only one of several replicas reconciles."`
	LeaderElectionNS       string        `default:"crossplane-system" env:"POD_NAMESPACE" help:"Namespace of the leader election lease."`
	MetricsBindAddress     string        `default:":8080" help:"Address of the Prometheus metrics endpoint."`
	HealthProbeBindAddress string        `default:":8081" help:"Address of the health and readiness probes."`
	JobIndex               bool          `default:"true" help:"Label the broker pods of MiniClusters that ask for it (spec.pod.labels flux-framework.org/job-index: \"true\") job-index=<its index>, as the Flux Operator does (a Service selecting job-index: \"0\" reaches the lead broker); watches only those pods, needs list, watch and patch on pods." negatable:""`
}

// Run starts the manager and blocks.
func (c *CLI) Run() error {
	zl := zap.New(zap.UseDevMode(c.Debug), func(o *zap.Options) {
		if !c.Debug {
			o.Level = zapcore.InfoLevel
		}
	})
	ctrl.SetLogger(zl)
	log := logging.NewLogrLogger(zl.WithName("minicluster-burst"))

	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return errors.Wrap(err, "cannot build scheme")
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return errors.Wrap(err, "cannot get Kubernetes config")
	}
	// Least privilege, and least held: the provider reads Secrets (a
	// kubeconfig a config names, a root's certificate), namespaces (a
	// ClusterProviderConfig's namespaceSelector), the root's lead broker
	// Service, pod and node one by one with get (or, for the lead pod, a
	// list in the Burst's namespace by label), so it caches none of them:
	// no informer lists and watches every Secret or pod of the cluster, and
	// its ClusterRole needs get on them and nothing cluster-wide more but
	// the lead pod's list (docs/bursting.md). The one pod informer is
	// job-index's, restricted by the API server to pods that opted in.
	opts := ctrl.Options{
		Scheme: s,
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{
			&corev1.Secret{}, &corev1.Namespace{}, &corev1.Pod{}, &corev1.Service{}, &corev1.Node{},
		}}},
		Cache:                      cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: jobindex.PodCache()}},
		LeaderElection:             c.LeaderElection,
		LeaderElectionID:           "minicluster-burst-controller",
		LeaderElectionNamespace:    c.LeaderElectionNS,
		LeaderElectionResourceLock: "leases",
		Metrics:                    metricsserver.Options{BindAddress: c.MetricsBindAddress},
		HealthProbeBindAddress:     c.HealthProbeBindAddress,
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return errors.Wrap(err, "cannot create controller manager")
	}
	if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
		return errors.Wrap(err, "cannot add health check")
	}
	if err := burst.Setup(mgr, controller.Options{Logger: log, MaxConcurrentReconciles: c.MaxReconcileRate, PollInterval: c.Poll}, c.Poll); err != nil {
		return errors.Wrap(err, "cannot set up the burst controller")
	}
	if c.JobIndex {
		if err := jobindex.Setup(mgr, log, c.MaxReconcileRate); err != nil {
			return err
		}
	}
	log.Info("Starting the MiniCluster burst controller", "poll", c.Poll.String(), "job-index", c.JobIndex)
	return errors.Wrap(mgr.Start(ctrl.SetupSignalHandler()), "controller manager stopped")
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Name("provider"), kong.Description("MiniCluster burst controller: joins burst MiniClusters in other clusters to their root's lead broker."))
	ctx.FatalIfErrorf(ctx.Run())
}
