package burst

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// A kubeconfig in a Secret is written by whoever may write that Secret —
// for a namespaced ProviderConfig, a tenant. client-go would happily follow
// it to the provider's own filesystem (tokenFile, client-certificate,
// client-key, certificate-authority: a tokenFile of
// /var/run/secrets/kubernetes.io/serviceaccount/token sends the provider's
// service account token to whatever server the kubeconfig names), run a
// program (exec, auth-provider) or route through a proxy of the tenant's
// choosing. So a kubeconfig is parsed and checked before any rest.Config or
// client exists, every user and cluster of it (not only the current
// context's: a context is one line away), and refused if it asks for any of
// these. What is left carries its credentials inline and can only ever send
// those.

// unsafeField is one thing a kubeconfig asks for that the provider refuses.
type unsafeField struct {
	field string // e.g. users[0].user.tokenFile
	of    string // e.g. user "x"
	why   string // what it would make the provider do
	fix   string // what to write instead
}

func (u unsafeField) String() string {
	return fmt.Sprintf("%s of %s %s: %s", u.field, u.of, u.why, u.fix)
}

const errKubeconfigParse = "cannot parse the kubeconfig (the parser's message is not shown: it may quote credentials); check it with kubectl --kubeconfig=FILE config view (users and clusters need unique names)"

const (
	whyFile    = "reads a file of the provider's own filesystem"
	whyProgram = "runs a program in the provider"
	whyProxy   = "routes the provider's requests through a proxy"
)

// checkAuthInfo lists what one user of a kubeconfig asks for that reads the
// provider's files or runs a program. field is its path in the file.
func checkAuthInfo(path, name string, a *clientcmdapi.AuthInfo) []unsafeField {
	if a == nil {
		return nil
	}
	of := fmt.Sprintf("user %q", name)
	var out []unsafeField
	if a.TokenFile != "" {
		out = append(out, unsafeField{path + ".tokenFile", of, whyFile, "put the token itself in token"})
	}
	if a.ClientCertificate != "" {
		out = append(out, unsafeField{path + ".client-certificate", of, whyFile, "put the certificate itself, base64, in client-certificate-data"})
	}
	if a.ClientKey != "" {
		out = append(out, unsafeField{path + ".client-key", of, whyFile, "put the key itself, base64, in client-key-data"})
	}
	if a.Exec != nil {
		out = append(out, unsafeField{path + ".exec", of, fmt.Sprintf("%s (%q)", whyProgram, a.Exec.Command), "use a token, e.g. of a ServiceAccount of the target cluster (docs/bursting.md)"})
	}
	if a.AuthProvider != nil {
		out = append(out, unsafeField{path + ".auth-provider", of, fmt.Sprintf("%s (auth provider %q)", whyProgram, a.AuthProvider.Name), "use a token, e.g. of a ServiceAccount of the target cluster (docs/bursting.md)"})
	}
	return out
}

// checkCluster lists what one cluster of a kubeconfig asks for that reads
// the provider's files or names a proxy.
func checkCluster(path, name string, c *clientcmdapi.Cluster) []unsafeField {
	if c == nil {
		return nil
	}
	of := fmt.Sprintf("cluster %q", name)
	var out []unsafeField
	if c.CertificateAuthority != "" {
		out = append(out, unsafeField{path + ".certificate-authority", of, whyFile, "put the CA certificate itself, base64, in certificate-authority-data"})
	}
	if c.ProxyURL != "" {
		out = append(out, unsafeField{path + ".proxy-url", of, whyProxy, "remove it: the provider reaches the server directly"})
	}
	return out
}

// UnsafeKubeconfig parses a kubeconfig as client-go does (clientcmd.Load)
// and returns it, or an error naming every field of it that would make the
// provider read its own files, run a program or use a proxy, and the fix.
// Both the file's lists (for the index of a user or cluster, and entries of
// the same name) and the config client-go would use are checked.
func UnsafeKubeconfig(data []byte) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		// The parser's message may quote the kubeconfig (a duplicate
		// user's whole entry, token included): it would end up in the
		// Burst's status and events.
		return nil, errors.New(errKubeconfigParse)
	}
	var found []unsafeField
	seen := map[string]bool{}
	add := func(fs []unsafeField) {
		for _, f := range fs {
			// The same problem seen in the file's list and in the loaded
			// config is named once, by its index in the file.
			key := f.of + "/" + f.field[strings.LastIndex(f.field, "."):]
			if !seen[key] {
				seen[key] = true
				found = append(found, f)
			}
		}
	}
	var file clientcmdv1.Config
	if err := yaml.Unmarshal(data, &file); err == nil {
		for i, a := range file.AuthInfos {
			u := &clientcmdapi.AuthInfo{
				TokenFile: a.AuthInfo.TokenFile, ClientCertificate: a.AuthInfo.ClientCertificate, ClientKey: a.AuthInfo.ClientKey,
			}
			if e := a.AuthInfo.Exec; e != nil {
				u.Exec = &clientcmdapi.ExecConfig{Command: e.Command}
			}
			if p := a.AuthInfo.AuthProvider; p != nil {
				u.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: p.Name}
			}
			add(checkAuthInfo(fmt.Sprintf("users[%d].user", i), a.Name, u))
		}
		for i, c := range file.Clusters {
			add(checkCluster(fmt.Sprintf("clusters[%d].cluster", i), c.Name, &clientcmdapi.Cluster{
				CertificateAuthority: c.Cluster.CertificateAuthority, ProxyURL: c.Cluster.ProxyURL,
			}))
		}
	}
	// What client-go would use, whatever the list parse above made of it.
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		add(checkAuthInfo("users[name="+name+"].user", name, cfg.AuthInfos[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		add(checkCluster("clusters[name="+name+"].cluster", name, cfg.Clusters[name]))
	}
	if len(found) == 0 {
		return cfg, nil
	}
	msgs := make([]string, len(found))
	for i, f := range found {
		msgs[i] = f.String()
	}
	return nil, errors.Errorf("the kubeconfig must carry its credentials inline, and the provider never reads its own files, runs a program or uses a proxy for it: %s", strings.Join(msgs, "; "))
}

// RESTConfigFromKubeconfig is clientcmd.RESTConfigFromKubeConfig for a
// kubeconfig the provider does not trust: UnsafeKubeconfig refuses it first,
// the rest.Config is built from the checked config (not parsed again), and
// the result is checked once more for anything that reads a file, runs a
// program or names a proxy.
func RESTConfigFromKubeconfig(data []byte) (*rest.Config, error) {
	cfg, err := UnsafeKubeconfig(data)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, errors.Wrap(err, "cannot build a client configuration from the kubeconfig")
	}
	switch {
	case rc.BearerTokenFile != "", rc.CertFile != "", rc.KeyFile != "", rc.CAFile != "":
		return nil, errors.New("the kubeconfig names a file of the provider's filesystem")
	case rc.ExecProvider != nil, rc.AuthProvider != nil:
		return nil, errors.New("the kubeconfig runs a program")
	case rc.Proxy != nil:
		return nil, errors.New("the kubeconfig names a proxy")
	}
	return rc, nil
}
