// Package harness runs a real cluster on this machine for every test tier
// that needs one (test/e2e, test/node) and for make dev-up: etcd,
// kube-apiserver, kube-controller-manager, Crossplane core (out of cluster,
// External package runtime) and the MiniCluster composition function as
// local processes, all on 127.0.0.1 with free ports, in one directory, and
// beside them, when Options ask for them, a real node and Kueue. Start
// installs the repository's RBAC, XRD and Composition, so a test can create
// MiniClusters right away.
//
// Nothing is global: every ControlPlane has its own directory, ports,
// certificates and processes, so a test may run several at once (the lead
// and burst clusters of a bursting test). The real node is the exception:
// it takes fixed host resources, so a second one waits until the first has
// put the host back.
//
// # What Start starts, in order
//
// Start (harness.go) runs each step and stops everything on the first
// error, keeping the logs. The Options (harness_options.go) that turn a
// part on or change it are named with it.
//
//   - Ports and certificates: one CA, the API server's serving certificate
//     and its client certificate for kubelets, the service-account key, and
//     kubeconfigs of their own for the admin (the tests), the controller
//     manager and Crossplane, so the audit log tells them apart
//     (controlplane_pki.go; the CA itself, controlplane_ca.go).
//   - etcd, kube-apiserver and kube-controller-manager (controlplane.go).
//     The controller manager runs the job, garbage-collector, namespace and
//     serviceaccount controllers, and with Options.Node those a real node
//     needs as well. With binaries of Kubernetes 1.37 or later the
//     Workload API and gang scheduling are on, off before
//     (controlplane_workloadapi.go, ServesWorkloadAPI). Options.AuditWrites
//     makes the API server log every write (measure_audit.go).
//   - Options.Node: the real node (node.go): containerd with runc and the
//     CNI plugins, the node's images imported into it, CoreDNS as the
//     cluster DNS, kube-scheduler (with the gang plugin where the Workload
//     API is on) and a kubelet, on a network bridge of its own.
//     node_config.go writes their configuration, node_images.go builds the
//     images (with package nodeimage), node_host.go records what the node
//     changes on the host and node_host_restore.go puts it back, also for a
//     node whose process was killed (CleanStaleNode, and for make dev-down
//     UnmountUnder, MountsUnder, NodeShims and Alive). With a node, Install
//     makes the node's Flux view the platform default.
//   - Options.Kueue: Kueue's CRDs, its manager and its admission webhooks
//     (kueue.go).
//   - crossplane core init, the function, crossplane core start
//     (crossplane_core.go). The function is built from ./cmd/function while
//     the control plane starts, unless Options.FunctionBinary names a
//     build; it serves mTLS with a certificate of Crossplane's CA, and a
//     paused Function and FunctionRevision point Crossplane at it unless
//     Options.SkipFunctionRegistration (crossplane_function.go).
//   - Unless Options.SkipInstall, Install (crossplane_install.go):
//     compositions/, or compositions/v2/ with Options.Shape ShapeV2
//     (crossplane_shape.go), with Options.Policy as the function input's
//     policy.
//
// Stop (harness_stop.go) stops them newest first, the node after draining
// it through the API server, and removes the directory Start made unless
// KeepDir.
//
// # Without a node
//
// Without Options.Node there is no kubelet and no kube-scheduler: pods stay
// Pending, on no node. nodeless.go plays their parts where a test needs it:
// MarkPodsReady, ReportPodRunning and ReportPodTerminated report pod status
// through the status subresource, as a kubelet does, so that the real job
// controller counts the pods; CreateNode registers a Node object and
// BindPod binds a pod to it, as a kubelet and the scheduler would.
//
// # What needs root
//
// The real node: its network bridge, sysctls, cgroups, mounts and
// containerd (Start returns ErrNotRoot otherwise). Kueue: its manager reads
// a metrics certificate from a fixed path under /etc. Building the node's
// Debian root filesystem (nodeimage.Rootfs, mmdebstrap) needs root once; a
// cached one does not. Everything else runs as any user.
//
// # What else a test calls
//
//   - Tenants and policy: AsTenant, TenantRules, BurstTenantRules
//     (tenant.go); SetPolicy, SetPolicyAndDefaults and SetScheduling change
//     the Composition's function input on a running control plane, as a
//     platform team would (tenant_policy.go); GraftHostileSpec
//     (tenant_graft.go).
//   - Objects: ReadObjects, DecodeObjects, Apply, ApplyFile, Condition
//     (objects.go); WaitXRD (crossplane_install.go).
//   - Packages: StartRegistry, PrepareRuntime, ReportRuntime,
//     ServeFunctionRevision, ServeFunctionRevisionWith: what a package
//     runtime does for the revisions Crossplane's package manager makes
//     from .xpkg files (crossplane_packages.go).
//   - Faults and restarts: KillFunction, RestartAPIServer (faults.go);
//     RestartCrossplane (crossplane_core.go); StopFunction, StartFunction,
//     RestartFunction (crossplane_function.go); Kueue.Restart.
//   - Measurement: AuditWrites, ReadAuditWrites (measure_audit.go); one
//     MiniCluster's writes and composition runs, WriterOf, WriteKey,
//     OfMiniCluster, StartsCompositionRun, EndsCompositionRun
//     (measure_writes.go); APIServerRequests, EtcdWrites, RunFunctionCalls
//     (measure_metrics.go); Pids, ProcessUsage (measure_usage.go);
//     FunctionHeap, SumHeap: what holds the function's live heap, from a
//     heap profile of its --pprof-address (measure_heap.go).
//   - Processes: StartProcess, StartProvider, BuildBinary, FreePorts
//     (process_external.go); the child process every component runs as
//     (process.go); polling until something is ready (process_wait.go);
//     logs: KeepDir, LogFiles, DumpLogs (harness_stop.go).
//
// # Where the binaries come from
//
// Each binary is the file its environment variable names, else what
// `hack/tools.sh path NAME` prints (the tool cache, filled by
// `hack/tools.sh install`); a missing one fails with ErrToolsMissing and
// the command that installs it (tools.go). The control plane's (FindTools):
//
//	MC_ETCD                     etcd (then etcd on PATH)
//	MC_KUBE_APISERVER           kube-apiserver
//	MC_KUBE_CONTROLLER_MANAGER  kube-controller-manager
//	MC_CROSSPLANE_CORE          crossplane, for core init and core start
//	MC_CROSSPLANE_CRDS          Crossplane core's CRDs, a directory (else
//	                            cluster/crds of CrossplaneModule in the Go
//	                            module cache)
//
// The real node's (FindNodeTools, only with Options.Node):
//
//	MC_KUBELET, MC_KUBE_SCHEDULER, MC_CONTAINERD, MC_CTR, MC_COREDNS
//	MC_KUBECTL                  kubectl, for the real-node tests
//	MC_CNI_BIN_DIR              the CNI plugins bridge and host-local
//	                            (default /usr/lib/cni)
//
// Kueue's (FindKueue, only with Options.Kueue): MC_KUEUE; its CRDs and
// webhook configurations come from KueueModule in the Go module cache.
//
// The node's images (BuildNodeImages): MC_FLUX_PREFIX names a flux-core
// install to put in the Flux view instead of the stand-in, and
// MC_FLUX_RUNTIME_PACKAGES a file of the Debian packages it needs;
// MC_NODE_IMAGE_CACHE is where the images are built and kept (default
// node-images in the tool cache, $MC_TOOLS_DIR).
//
// The tiers' own switches (MC_E2E, MC_E2E_NODE, MC_CROSSPLANE, MC_CRANE,
// ...) are read by the tests, not here.
package harness
