// Command function serves the MiniCluster composition function over gRPC.
package main

import (
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/alecthomas/kong"

	sdk "github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"

	"github.com/flux-framework/minicluster-crossplane/function"
)

// CLI of the function, with the flags Crossplane's function runtime passes.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address            string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSServerCertsDir  string `env:"TLS_SERVER_CERTS_DIR" help:"Directory holding the server's tls.crt and tls.key and the ca.crt that verifies Crossplane's client certificate."`
	Insecure           bool   `help:"Serve without mTLS (for crossplane composition render and local development). --tls-server-certs-dir is then ignored."`
	MetricsAddress     string `default:":8080" help:"Address of the Prometheus metrics endpoint; empty disables it. Keep it off Crossplane's own metrics port when both run on one host."`
	MaxRecvMessageSize int    `default:"4"     help:"Maximum size of a received message, in MiB."`
	PprofAddress       string `help:"Address of a Go profiling endpoint (net/http/pprof: /debug/pprof/heap, /debug/pprof/profile, ...) for finding what holds the function's memory or spends its CPU; empty (the default) disables it. Keep it on localhost: a heap profile shows parts of the requests."`
}

// Run serves the function until it fails.
func (c *CLI) Run() error {
	log, err := sdk.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	if c.PprofAddress != "" {
		go servePprof(c.PprofAddress, log)
	}
	return sdk.Serve(function.New(function.WithLogger(log)),
		sdk.Listen(c.Network, c.Address),
		sdk.MTLSCertificates(c.TLSServerCertsDir),
		sdk.Insecure(c.Insecure),
		sdk.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		sdk.WithMetricsServer(c.MetricsAddress),
	)
}

// servePprof serves net/http/pprof's handlers on address until the process
// ends. A failure is logged, not fatal: profiling is a diagnosis, not part
// of the function's job.
func servePprof(address string, log logging.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: address, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Info("The profiling endpoint stopped", "address", address, "error", err)
	}
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The MiniCluster composition function: Flux Framework clusters for Crossplane."))
	ctx.FatalIfErrorf(ctx.Run())
}
