package harness

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// writeConfigs writes the node's configuration files: containerd's, the
// CNI network's, CoreDNS's Corefile, the kubelet's, a resolv.conf, and a
// kubeconfig for each component that talks to the API server.
func (n *Node) writeConfigs() error {
	files := map[string]string{
		n.path("containerd", "config.toml"):        n.containerdConfig(),
		n.path("cni", "net.d", "10-node.conflist"): n.cniConfig(),
		n.path("coredns", "Corefile"):              n.corefile(),
		n.path("kubelet", "config.yaml"):           n.kubeletConfig(),
		n.path("resolv.conf"):                      "nameserver " + n.IP + "\n",
	}
	for f, content := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			return err
		}
	}
	for _, d := range []string{n.path("kubelet", "root"), n.path("kubelet", "pki"), n.path("kubelet", "pods"), n.path("cni", "ipam")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// The node's identity is what the API server's Node authorizer expects;
	// the scheduler and CoreDNS are trusted components of the test cluster.
	for _, k := range []struct {
		file, user string
		groups     []string
	}{
		{"kubelet.kubeconfig", "system:node:" + n.Name, []string{"system:nodes"}},
		{"scheduler.kubeconfig", "system:kube-scheduler", []string{"system:masters"}},
		{"coredns.kubeconfig", "coredns", []string{"system:masters"}},
	} {
		if _, err := n.cp.writeKubeconfig(n.path(k.file), k.user, k.groups...); err != nil {
			return fmt.Errorf("cannot write %s: %w", k.file, err)
		}
	}
	return nil
}

// containerdConfig keeps containerd to the node's own directory: its root,
// state, sockets, runc root, CNI configuration and IPAM data, so it shares
// nothing with a containerd the host may run.
func (n *Node) containerdConfig() string {
	d := n.path("containerd")
	q := strconv.Quote
	return strings.Join([]string{
		`version = 2`,
		`root = ` + q(filepath.Join(d, "root")),
		`state = ` + q(filepath.Join(d, "state")),
		`disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]`,
		`[grpc]`,
		`  address = ` + q(n.ContainerdAddress),
		`[ttrpc]`,
		`  address = ` + q(n.ContainerdAddress+".ttrpc"),
		`[plugins."io.containerd.internal.v1.opt"]`,
		`  path = ` + q(filepath.Join(d, "opt")),
		`[plugins."io.containerd.grpc.v1.cri"]`,
		`  sandbox_image = ` + q(n.opts.PauseImage),
		// This VM's bounding set lacks CAP_SYS_RESOURCE: without it runc
		// cannot lower a sandbox's oom_score_adj and every pod fails.
		`  restrict_oom_score_adj = true`,
		// The pods' network namespaces are mounted under the node's
		// directory instead of /run/netns, so the node's teardown finds
		// and unmounts them with the rest, even after a kill.
		`  netns_mounts_under_state_dir = true`,
		`  stream_server_address = "127.0.0.1"`,
		`  [plugins."io.containerd.grpc.v1.cri".containerd]`,
		`    snapshotter = "overlayfs"`,
		`    default_runtime_name = "runc"`,
		`    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]`,
		`      runtime_type = "io.containerd.runc.v2"`,
		`      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]`,
		`        SystemdCgroup = false`,
		`        Root = ` + q(filepath.Join(d, "runc")),
		`  [plugins."io.containerd.grpc.v1.cri".cni]`,
		`    bin_dir = ` + q(n.tools.CNIBinDir),
		`    conf_dir = ` + q(n.path("cni", "net.d")),
		`    max_conf_num = 1`,
		``,
	}, "\n")
}

// cniNetworkName names the node's pod network (and its CNI cache entries).
const cniNetworkName = "minicluster-node"

// cniConfig is the pods' network: a bridge with the node's address, pod
// addresses from the rest of the /24, no gateway, no masquerading. Pods
// reach each other and the node (the DNS) on the link, and nothing else.
func (n *Node) cniConfig() string {
	ip := net.ParseIP(n.IP).To4()
	prefix := fmt.Sprintf("%d.%d.%d.", ip[0], ip[1], ip[2])
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       cniNetworkName,
		"plugins": []any{map[string]any{
			"type":      "bridge",
			"bridge":    n.opts.Bridge,
			"isGateway": false,
			"ipMasq":    false,
			"ipam": map[string]any{
				"type":    "host-local",
				"dataDir": n.path("cni", "ipam"),
				"ranges": [][]map[string]string{{{
					"subnet": prefix + "0/24", "rangeStart": prefix + "10", "rangeEnd": prefix + "250",
				}}},
			},
		}},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n"
}

// corefile serves cluster.local from the API server and nothing else: no
// forwarding, so no query leaves the machine. Pod records (`pods
// insecure`) and the pods of headless Services with a subdomain are what
// Flux's brokers resolve each other by.
func (n *Node) corefile() string {
	return fmt.Sprintf(`%s:53 {
    bind %s
    errors
    kubernetes %s {
        kubeconfig %s minicluster-e2e
        pods insecure
        ttl 5
    }
    ready 127.0.0.1:%d
}
`, clusterDomain, n.IP, clusterDomain, n.path("coredns.kubeconfig"), n.host.ports.dnsReady)
}

// kubeletConfig is this machine's kubelet: cgroupfs on cgroup v1, no swap
// check, the kernel defaults set by the harness beforehand (so the kubelet
// changes none), its API on the node's address with client certificates
// and webhook authorization, logs and state under the node's directory.
func (n *Node) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: true
clusterDNS: [%s]
clusterDomain: %s
resolvConf: %s
podLogsDir: %s
staticPodPath: ""
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
nodeStatusUpdateFrequency: 4s
`, n.IP, n.host.ports.kubelet, n.host.ports.kubeletHealthz, n.cp.pki.caFile, n.ContainerdAddress,
		n.IP, clusterDomain, n.path("resolv.conf"), n.path("kubelet", "pods"))
}
