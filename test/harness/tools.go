package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tools are the binaries a control plane runs.
type Tools struct {
	Etcd                  string
	KubeAPIServer         string
	KubeControllerManager string
	// Crossplane is the Crossplane core binary (crossplane core init/start).
	Crossplane string
	// CrossplaneCRDs is the directory of Crossplane core's CRDs
	// (cluster/crds of the github.com/crossplane/crossplane/v2 module).
	CrossplaneCRDs string
}

// Environment variables that override where the tools are found. Without
// them the harness asks hack/tools.sh (the tool cache) and the Go module
// cache.
const (
	EnvEtcd                  = "MC_ETCD"
	EnvKubeAPIServer         = "MC_KUBE_APISERVER"
	EnvKubeControllerManager = "MC_KUBE_CONTROLLER_MANAGER"
	EnvCrossplane            = "MC_CROSSPLANE_CORE"
	EnvCrossplaneCRDs        = "MC_CROSSPLANE_CRDS"
)

// CrossplaneModule is the Crossplane core module whose CRDs crossplane core
// init installs; it must match the core binary's version.
const CrossplaneModule = "github.com/crossplane/crossplane/v2@v2.4.0"

// ErrToolsMissing is wrapped by FindTools when a tool is not installed.
var ErrToolsMissing = errors.New("control-plane tools are missing")

// FindTools locates every tool: from the MC_* environment variables, else
// from `hack/tools.sh path NAME` in repoRoot, else (etcd) from PATH. The
// error lists everything missing and how to install it.
func FindTools(ctx context.Context, repoRoot string) (Tools, error) {
	var missing []string
	find := func(env, name string) string {
		p := findTool(ctx, repoRoot, env, name, &missing)
		if p == "" && name == "etcd" && os.Getenv(env) == "" {
			if lp, err := exec.LookPath("etcd"); err == nil {
				missing = missing[:len(missing)-1]
				return lp
			}
		}
		return p
	}
	t := Tools{
		Etcd:                  find(EnvEtcd, "etcd"),
		KubeAPIServer:         find(EnvKubeAPIServer, "kube-apiserver"),
		KubeControllerManager: find(EnvKubeControllerManager, "kube-controller-manager"),
		Crossplane:            find(EnvCrossplane, "crossplane-core"),
	}
	if d := os.Getenv(EnvCrossplaneCRDs); d != "" {
		t.CrossplaneCRDs = d
	} else {
		d, err := moduleDir(ctx, CrossplaneModule)
		if err != nil {
			missing = append(missing, fmt.Sprintf("Crossplane core CRDs (%v)", err))
		} else {
			t.CrossplaneCRDs = filepath.Join(d, "cluster", "crds")
		}
	}
	if t.CrossplaneCRDs != "" {
		if _, err := os.Stat(filepath.Join(t.CrossplaneCRDs, "pkg.crossplane.io_functionrevisions.yaml")); err != nil {
			missing = append(missing, fmt.Sprintf("Crossplane core CRDs in %s", t.CrossplaneCRDs))
		}
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("%w: %s (install them with: hack/tools.sh install kubernetes etcd crossplane-core)", ErrToolsMissing, strings.Join(missing, ", "))
	}
	return t, nil
}

// findTool returns the binary env names, else `hack/tools.sh path name`;
// when neither gives an executable it adds what is missing to missing.
func findTool(ctx context.Context, repoRoot, env, name string, missing *[]string) string {
	if p := os.Getenv(env); p != "" {
		if isExecutable(p) {
			return p
		}
		*missing = append(*missing, fmt.Sprintf("%s=%s is not an executable", env, p))
		return ""
	}
	out, err := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", "tools.sh"), "path", name).Output()
	if p := strings.TrimSpace(string(out)); err == nil && isExecutable(p) {
		return p
	}
	*missing = append(*missing, name)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// moduleDir returns a module's directory in the module cache, downloading
// it (through the module proxy) when needed.
func moduleDir(ctx context.Context, modAtVersion string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", modAtVersion)
	cmd.Dir = os.TempDir() // outside any module: no go.mod needed or changed
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct {
		Dir   string
		Error string
	}
	if jerr := json.Unmarshal(out, &info); jerr != nil {
		return "", fmt.Errorf("go mod download %s: %v %v", modAtVersion, err, jerr)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", modAtVersion, info.Error)
	}
	return info.Dir, nil
}

// RepoRoot finds the directory holding this module's go.mod, from the
// working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/flux-framework/minicluster-crossplane\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the minicluster-crossplane module root above the working directory")
		}
		dir = parent
	}
}

// BuildFunction builds ./cmd/function of repoRoot into dir and returns the
// binary's path. Build it once and pass it in Options.FunctionBinary when
// several control planes run in one process.
func BuildFunction(ctx context.Context, repoRoot, dir string) (string, error) {
	out := filepath.Join(dir, "function")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/function")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/function: %w\n%s", err, b)
	}
	return out, nil
}

// NodeTools are the binaries of the real node.
type NodeTools struct {
	Kubelet, KubeScheduler, Kubectl string
	Containerd, Ctr                 string
	CoreDNS                         string
	// CNIBinDir holds the CNI plugins (Debian's containernetworking-plugins).
	CNIBinDir string
}

// Environment variables that override where the node's tools are found.
const (
	EnvKubelet       = "MC_KUBELET"
	EnvKubeScheduler = "MC_KUBE_SCHEDULER"
	EnvKubectl       = "MC_KUBECTL"
	EnvContainerd    = "MC_CONTAINERD"
	EnvCtr           = "MC_CTR"
	EnvCoreDNS       = "MC_COREDNS"
	EnvCNIBinDir     = "MC_CNI_BIN_DIR"
)

// FindNodeTools locates the real node's binaries as FindTools does: from
// the MC_* environment variables, else `hack/tools.sh path NAME`.
func FindNodeTools(ctx context.Context, repoRoot string) (NodeTools, error) {
	var missing []string
	find := func(env, name string) string { return findTool(ctx, repoRoot, env, name, &missing) }
	t := NodeTools{
		Kubelet:       find(EnvKubelet, "kubelet"),
		KubeScheduler: find(EnvKubeScheduler, "kube-scheduler"),
		Kubectl:       find(EnvKubectl, "kubectl"),
		Containerd:    find(EnvContainerd, "containerd"),
		Ctr:           find(EnvCtr, "ctr"),
		CoreDNS:       find(EnvCoreDNS, "coredns"),
		CNIBinDir:     os.Getenv(EnvCNIBinDir),
	}
	if t.CNIBinDir == "" {
		t.CNIBinDir = "/usr/lib/cni"
	}
	if !isExecutable(filepath.Join(t.CNIBinDir, "bridge")) || !isExecutable(filepath.Join(t.CNIBinDir, "host-local")) {
		missing = append(missing, "the CNI plugins bridge and host-local in "+t.CNIBinDir)
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("%w: %s (install them with: hack/tools.sh install kubernetes node coredns)", ErrToolsMissing, strings.Join(missing, ", "))
	}
	return t, nil
}
