package harness

import (
	"context"
	"net"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for a client certificate of user in
// groups, issued by the control plane's CA, and returns its REST config.
func (cp *ControlPlane) writeKubeconfig(file, user string, groups ...string) (*rest.Config, error) {
	server := "https://127.0.0.1:" + strconv.Itoa(cp.ports.apiserver)
	ca := cp.pki.ca
	kp, err := ca.issue(certSpec{commonName: user, organization: groups, client: true})
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["minicluster-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM}
	cfg.Contexts["minicluster-e2e"] = &clientcmdapi.Context{Cluster: "minicluster-e2e", AuthInfo: user}
	cfg.CurrentContext = "minicluster-e2e"
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return nil, err
	}
	return &rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{CAData: ca.certPEM, CertData: kp.certPEM, KeyData: kp.keyPEM}}, nil
}

// setupPKI allocates ports and writes every certificate, key and kubeconfig.
func (cp *ControlPlane) setupPKI(_ context.Context) error {
	ports, err := freePorts(10)
	if err != nil {
		return err
	}
	p := &cp.ports
	p.etcd, p.etcdPeer, p.apiserver, p.kcm, p.xpMetrics, p.xpHealth, p.xpWebhook, p.fn, p.fnMetrics, p.fnPprof =
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7], ports[8], ports[9]
	cp.FunctionAddress = "127.0.0.1:" + strconv.Itoa(p.fn)

	dir := filepath.Join(cp.Dir, "pki")
	ca, err := newCA("minicluster-e2e-ca")
	if err != nil {
		return err
	}
	cp.pki.ca = ca
	serving, err := ca.issue(certSpec{
		commonName: "kube-apiserver",
		dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		server:     true,
	})
	if err != nil {
		return err
	}
	// The API server's identity when it calls a kubelet (logs, exec,
	// port-forward): the real node's kubelet authorizes it by group.
	kubeletClient, err := ca.issue(certSpec{commonName: "kube-apiserver-kubelet-client", organization: []string{"system:masters"}, client: true})
	if err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		return err
	}
	if err := writeFiles(dir, map[string][]byte{
		"ca.crt": ca.certPEM, "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
		"sa.key": saKey, "sa.pub": saPub,
		"apiserver-kubelet-client.crt": kubeletClient.certPEM, "apiserver-kubelet-client.key": kubeletClient.keyPEM,
	}); err != nil {
		return err
	}
	cp.pki.caFile = filepath.Join(dir, "ca.crt")
	cp.pki.saKey = filepath.Join(dir, "sa.key")
	cp.pki.saPub = filepath.Join(dir, "sa.pub")

	kubeconfig := cp.writeKubeconfig
	cp.Kubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	if cp.Config, err = kubeconfig(cp.Kubeconfig, "admin", "system:masters"); err != nil {
		return err
	}
	cp.Config.QPS, cp.Config.Burst = 50, 100
	// The controller manager and Crossplane get identities of their own, so
	// the API server's audit and logs tell them apart.
	cp.pki.kcmConfig = filepath.Join(dir, "kube-controller-manager.kubeconfig")
	if _, err := kubeconfig(cp.pki.kcmConfig, "system:kube-controller-manager", "system:masters"); err != nil {
		return err
	}
	cp.pki.xpConfig = filepath.Join(dir, "crossplane.kubeconfig")
	if _, err := kubeconfig(cp.pki.xpConfig, "crossplane", "system:masters"); err != nil {
		return err
	}
	return nil
}
