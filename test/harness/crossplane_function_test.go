package harness

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/crossplane/crossplane-runtime/v2/pkg/certificates"
	sdk "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/function"
)

// crossplaneSecrets makes what `crossplane core init` stores: an RSA root CA
// with a PKCS#1 key (Secret crossplane-root-ca: tls.crt, tls.key) and a
// client certificate for crossplane.crossplane-system signed by it (Secret
// crossplane-tls-client: tls.crt, tls.key, ca.crt). See TLSCertificateGenerator
// in crossplane's internal/initializer/tls.go.
func crossplaneSecrets(t *testing.T) (client, ca map[string][]byte) {
	t.Helper()
	name := pkix.Name{CommonName: "Crossplane", Organization: []string{"Crossplane"}}
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2022), Subject: name, Issuer: name, DNSNames: []string{"crossplane-root-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().AddDate(10, 0, 0),
		IsCA: true, KeyUsage: x509.KeyUsageCRLSign | x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	clKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	clTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2022), Subject: name, DNSNames: []string{"crossplane.crossplane-system"},
		NotBefore: time.Now(), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageDataEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, BasicConstraintsValid: true,
	}
	clDER, err := x509.CreateCertificate(rand.Reader, clTmpl, caCert, &clKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	client = map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clDER}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(clKey)}),
		"ca.crt":  caPEM,
	}
	ca = map[string][]byte{
		"tls.crt": caPEM,
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(caKey)}),
	}
	return client, ca
}

// TestFunctionMTLS checks the mTLS material the harness writes without any
// control plane: the function's gRPC server configured exactly as
// cmd/function does (sdk.MTLSCertificates on the server directory) answers
// a client configured exactly as crossplane core start does
// (certificates.LoadMTLSConfig on the client directory) that dials
// 127.0.0.1:<port>, as Crossplane dials a FunctionRevision's
// status.endpoint.
func TestFunctionMTLS(t *testing.T) {
	clientSecret, caSecret := crossplaneSecrets(t)
	dir := t.TempDir()
	clientDir, serverDir := filepath.Join(dir, "client"), filepath.Join(dir, "server")
	if err := writeFunctionMTLS(clientSecret, caSecret, clientDir, serverDir); err != nil {
		t.Fatal(err)
	}

	so := &sdk.ServeOptions{}
	if err := sdk.MTLSCertificates(serverDir)(so); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(so.Credentials))
	fnv1.RegisterFunctionRunnerServiceServer(srv, function.New())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	cfg, err := certificates.LoadMTLSConfig(filepath.Join(clientDir, "ca.crt"), filepath.Join(clientDir, "tls.crt"), filepath.Join(clientDir, "tls.key"), false)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// An empty request: the function answers with a Fatal result, which is
	// enough to show the call got through.
	rsp, err := fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, &fnv1.RunFunctionRequest{})
	if err != nil {
		t.Fatalf("RunFunction over mTLS: %v", err)
	}
	if len(rsp.GetResults()) == 0 {
		t.Errorf("RunFunction over mTLS returned no results: %v", rsp)
	}

	// A client without Crossplane's certificate is refused.
	bad := cfg.Clone()
	bad.Certificates = nil
	conn2, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(bad)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn2.Close() })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if _, err := fnv1.NewFunctionRunnerServiceClient(conn2).RunFunction(ctx2, &fnv1.RunFunctionRequest{}); err == nil {
		t.Error("a client without a certificate got an answer, want the function to refuse it")
	}
}
