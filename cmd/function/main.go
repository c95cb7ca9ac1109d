// Command function serves the MiniCluster composition function over gRPC.
package main

import (
	"github.com/alecthomas/kong"

	sdk "github.com/crossplane/function-sdk-go"

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
}

// Run serves the function until it fails.
func (c *CLI) Run() error {
	log, err := sdk.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	return sdk.Serve(function.New(function.WithLogger(log)),
		sdk.Listen(c.Network, c.Address),
		sdk.MTLSCertificates(c.TLSServerCertsDir),
		sdk.Insecure(c.Insecure),
		sdk.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		sdk.WithMetricsServer(c.MetricsAddress),
	)
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The MiniCluster composition function: Flux Framework clusters for Crossplane."))
	ctx.FatalIfErrorf(ctx.Run())
}
