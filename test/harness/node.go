package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeOptions configure the real node Start adds beside the control plane
// when Options.Node is set: containerd (with runc and the CNI plugins), the
// cluster DNS (CoreDNS), kube-scheduler and a kubelet, so that pods really
// run. The node's network is a bridge of its own on a private /24 with no
// gateway, no masquerading and no route out: pods reach each other, the
// node and its DNS, and nothing else.
//
// The node changes the host, so there is one at a time on a machine, it
// needs root, and Stop puts the host back as it found it (node_host.go keeps the state, node_host_restore.go restores it).
type NodeOptions struct {
	// Name is the node's name (default "minicluster-node").
	Name string
	// Bridge is the network interface the node makes (default "mcnode0").
	Bridge string
	// Subnet is the /24 of the node and its pods (default
	// "10.213.0.0/24"): the node takes .1, pods .10 to .250.
	Subnet string
	// Images are image tarballs (docker-archive) imported into containerd
	// before the kubelet starts: no registry is reachable, so every image
	// a pod uses, the sandbox image too, comes from here.
	Images []string
	// PauseImage is the sandbox image's reference (one of Images).
	PauseImage string
}

// Node is the running real node.
type Node struct {
	Name string
	// IP is the node's address on its bridge: its InternalIP, the cluster
	// DNS address and the kubelet's.
	IP string
	// ContainerdAddress is the containerd socket (for ctr).
	ContainerdAddress string

	cp    *ControlPlane
	opts  NodeOptions
	tools NodeTools
	dir   string
	host  *hostState

	containerd, coredns, scheduler, kubelet *process
}

const (
	defaultNodeName   = "minicluster-node"
	defaultNodeBridge = "mcnode0"
	defaultNodeSubnet = "10.213.0.0/24"
	clusterDomain     = "cluster.local"
)

// ErrNotRoot is returned by Start with a node when the process is not root.
var ErrNotRoot = errors.New("the real node needs root (network bridge, cgroups, mounts, containerd)")

func (o NodeOptions) withDefaults() NodeOptions {
	if o.Name == "" {
		o.Name = defaultNodeName
	}
	if o.Bridge == "" {
		o.Bridge = defaultNodeBridge
	}
	if o.Subnet == "" {
		o.Subnet = defaultNodeSubnet
	}
	return o
}

// Node returns the real node, or nil when the control plane has none.
func (cp *ControlPlane) Node() *Node { return cp.node }

// startNode brings up the real node: host changes first (recorded, so Stop
// can undo them), then containerd and its images, CoreDNS, the scheduler
// and the kubelet, and waits until the Node reports Ready and is
// schedulable.
func (cp *ControlPlane) startNode(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	opts := cp.opts.Node.withDefaults()
	tools, err := FindNodeTools(ctx, cp.opts.RepoRoot)
	if err != nil {
		return err
	}
	_, subnet, err := net.ParseCIDR(opts.Subnet)
	if err != nil {
		return fmt.Errorf("node subnet %q: %w", opts.Subnet, err)
	}
	if ones, bits := subnet.Mask.Size(); ones != 24 || bits != 32 {
		return fmt.Errorf("node subnet %q: want an IPv4 /24", opts.Subnet)
	}
	base := subnet.IP.To4()
	ip := net.IPv4(base[0], base[1], base[2], 1).String()
	n := &Node{
		Name: opts.Name, IP: ip, cp: cp, opts: opts, tools: tools,
		dir: filepath.Join(cp.Dir, "node"),
	}
	n.ContainerdAddress = filepath.Join(n.dir, "containerd", "containerd.sock")
	cp.node = n
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return err
	}

	if n.host, err = prepareHost(ctx, opts.Bridge, ip, subnet, n.dir, n.ContainerdAddress, cp.logf); err != nil {
		return err
	}
	if err := n.writeConfigs(); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.importImages(ctx); err != nil {
		return err
	}
	if err := n.startCoreDNS(ctx); err != nil {
		return err
	}
	if err := n.startScheduler(ctx); err != nil {
		return err
	}
	return n.startKubelet(ctx)
}

func (n *Node) path(elem ...string) string { return filepath.Join(append([]string{n.dir}, elem...)...) }

func (n *Node) startContainerd(ctx context.Context) error {
	n.containerd = newProcess("containerd", n.tools.Containerd, []string{"--config", n.path("containerd", "config.toml")}, nil, n.dir, n.cp.LogDir)
	if err := n.containerd.start(); err != nil {
		return err
	}
	return n.cp.waitFor(ctx, n.containerd, time.Minute, "containerd's socket", func(ctx context.Context) (bool, error) {
		err := run(ctx, "ctr version", n.tools.Ctr, []string{"--address", n.ContainerdAddress, "version"}, nil, n.cp.LogDir+"/ctr.log")
		return err == nil, err
	})
}

// importImages imports every image tarball into the CRI namespace, where
// the kubelet looks for them.
func (n *Node) importImages(ctx context.Context) error {
	for _, tar := range n.opts.Images {
		t := time.Now()
		if err := run(ctx, "ctr images import "+filepath.Base(tar), n.tools.Ctr,
			[]string{"--address", n.ContainerdAddress, "-n", "k8s.io", "images", "import", "--platform", "linux/amd64", tar},
			nil, n.cp.LogDir+"/ctr.log"); err != nil {
			return err
		}
		n.cp.logf("imported %s in %s", filepath.Base(tar), time.Since(t).Round(10*time.Millisecond))
	}
	return nil
}

func (n *Node) startCoreDNS(ctx context.Context) error {
	n.coredns = newProcess("coredns", n.tools.CoreDNS, []string{"-conf", n.path("coredns", "Corefile")}, nil, n.path("coredns"), n.cp.LogDir)
	if err := n.coredns.start(); err != nil {
		return err
	}
	// The ready plugin answers 200 once the kubernetes plugin has synced
	// with the API server: before that, names would not resolve.
	url := "http://127.0.0.1:" + strconv.Itoa(n.host.ports.dnsReady) + "/ready"
	hc := &http.Client{Timeout: 2 * time.Second}
	return n.cp.waitFor(ctx, n.coredns, time.Minute, "CoreDNS /ready", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		_ = rsp.Body.Close()
		return rsp.StatusCode == http.StatusOK, errors.New(rsp.Status)
	})
}

func (n *Node) startScheduler(ctx context.Context) error {
	kc := n.path("scheduler.kubeconfig")
	n.scheduler = newProcess("kube-scheduler", n.tools.KubeScheduler, []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(n.host.ports.scheduler),
		"--leader-elect=false",
		"--v=1",
	}, nil, n.dir, n.cp.LogDir)
	n.scheduler.args = append(n.scheduler.args, n.cp.workloadAPIFlags(false)...)
	if err := n.scheduler.start(); err != nil {
		return err
	}
	return n.cp.waitFor(ctx, n.scheduler, time.Minute, "kube-scheduler /healthz", httpsHealthy(n.host.ports.scheduler))
}

func (n *Node) startKubelet(ctx context.Context) error {
	n.kubelet = newProcess("kubelet", n.tools.Kubelet, []string{
		"--config=" + n.path("kubelet", "config.yaml"),
		"--kubeconfig=" + n.path("kubelet.kubeconfig"),
		"--root-dir=" + n.path("kubelet", "root"),
		"--cert-dir=" + n.path("kubelet", "pki"),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.IP,
		"--v=1",
	}, nil, n.dir, n.cp.LogDir)
	if err := n.kubelet.start(); err != nil {
		return err
	}
	return n.cp.waitFor(ctx, n.kubelet, 2*time.Minute, "node "+n.Name+" Ready and schedulable", func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		if err := n.cp.Client.Get(ctx, client.ObjectKey{Name: n.Name}, node); err != nil {
			return false, err
		}
		for _, t := range node.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				return false, fmt.Errorf("taint %s", t.Key)
			}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, fmt.Errorf("condition Ready=%s: %s", c.Status, c.Message)
			}
		}
		return false, errors.New("no Ready condition yet")
	})
}

// stop deletes every pod through the API, so the kubelet tears down their
// containers, sandboxes and networks itself, then stops the node's
// processes and puts the host back. The control plane's controllers are
// stopped first, so nothing makes new pods meanwhile.
func (n *Node) stop() []string {
	var errs []string
	if n.kubelet != nil && n.kubelet.alive() == nil {
		if err := n.drain(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, p := range []*process{n.kubelet, n.scheduler, n.coredns} {
		if p == nil {
			continue
		}
		if err := p.stop(20 * time.Second); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if n.host != nil {
		// Containers the kubelet did not get to are killed through their
		// cgroups before containerd stops, so no shim is left waiting.
		errs = append(errs, n.host.killPods()...)
	}
	if n.containerd != nil {
		if err := n.containerd.stop(20 * time.Second); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if n.host != nil {
		errs = append(errs, n.host.restore()...)
	}
	return errs
}

// drain deletes every pod and waits until the kubelet has removed them.
func (n *Node) drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := n.cp.Client
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return fmt.Errorf("draining the node: %w", err)
	}
	for i := range pods.Items {
		_ = c.Delete(ctx, &pods.Items[i], &client.DeleteOptions{GracePeriodSeconds: ptr(int64(1))})
	}
	for {
		if err := c.List(ctx, pods); err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			left := make([]string, 0, len(pods.Items))
			for _, p := range pods.Items {
				left = append(left, p.Namespace+"/"+p.Name)
				_ = c.Delete(context.Background(), &p, &client.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
			}
			return fmt.Errorf("draining the node: pods still there after 90s: %s", strings.Join(left, " "))
		case <-time.After(500 * time.Millisecond):
		}
	}
}
