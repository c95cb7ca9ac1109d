// Command fluxstandin is a TEST DOUBLE of flux-core 0.88's `flux` command:
// it is not Flux. CI has no real flux-core, so the node tier of the test
// suite installs this program as `flux` in the Flux view image
// (/opt/view/bin/flux), and the scripts a MiniCluster's pods run
// (internal/entrypoint) meet a program that does what they ask of Flux
// where a real node (kubelet, containerd, CoreDNS) can tell the difference.
// flux --version says "flux-standin (test double of flux-core 0.88.0)",
// every log line says flux-standin, every error starts "flux-standin: ".
//
// What it checks, as flux-core 0.88 does and in Flux's words:
//   - broker.toml: every *.toml of --config-path merged; the [bootstrap]
//     keys Flux reads and no other, of their types (Jansson's strict
//     unpack and its messages); RFC 29 host lists; host names as RFC 1035
//     names; bind and connect URIs; curve_cert required for more than one
//     host; parent keys without cycles; this broker's rank from its
//     hostname, as gethostname(2) gives it, not shortened (tests set
//     FLUX_STANDIN_HOSTNAME_FOR_TESTS, or -Shostname as with Flux).
//   - the CURVE certificate: not readable by group or others; the ZPL
//     layout Flux's cert_read parses; Z85 keys; a metadata name; and
//     public-key == X25519(secret-key), by its own parser.
//   - -S attributes: Flux's table, so an unknown or read-only one fails;
//     rundir, statedir and the local-uri's directory must exist and be this
//     user's; tbon.fanout, tbon.topo, tbon.connect_timeout,
//     tbon.tcp_user_timeout, broker.quorum, broker.rc2_none and
//     log-stderr-level are honoured.
//   - the overlay: a kary:K or custom tree over TCP. A broker with children
//     binds its bind URI (an interface name resolves to its IPv4 address, as
//     in ZeroMQ; no DNS for binding); a broker with a parent resolves the
//     parent's connect URI through DNS (the pod's resolver, the headless
//     Service) and retries for ever, each attempt bounded by
//     tbon.connect_timeout. A parent refuses a child whose hostname or rank
//     does not match its configuration ("mismatched config?").
//   - the local socket (local-uri) exists only while the broker is part of
//     an up overlay (rank 0: quorum met; other ranks: accepted by their
//     parent), so the readiness probe's test -S means what it means with
//     Flux; it is removed on exit.
//   - jobs: rank 0 schedules first come first served over the cores of R
//     (read from [resource] path, as `flux R encode --local` wrote it) and
//     runs the tasks on the brokers it picked, through the overlay, output
//     streamed back line by line. Exit codes (128+signal), waitable jobs,
//     --output/--error files, flux batch's flux-{{id}}.out, and flux start
//     exiting with its initial program's status are Flux's.
//
// What it cannot give: no CURVE encryption or authentication on the wire
// (the overlay is the double's own JSON lines over plain TCP; the
// certificate is only checked); no KVS or content store (content.restore is
// only checked; content.dump writes a .tar/.tar.gz whose one file says it
// is empty); no real scheduler (no Fluxion, queues, properties, GPUs or
// dependencies); no job shell plugins (-o options are recorded and said to
// be ignored), no PMI (MPI tasks run as singletons), no Python bindings
// (import flux fails), no access control, no rc1/rc3 scripts, no cron;
// modules are recorded by flux module load/remove, never loaded; flux start
// --wrap execs its wrapper around the double; and flux batch runs
// its script once, in the same instance, not in a nested one. The jobs a
// batch script submits are scoped to it (FLUX_STANDIN_SCOPE): they run on
// the batch job's cores, and `flux job wait --all`, `flux jobs`,
// `flux queue idle` and `flux resource list` inside it see only them and
// those cores, as inside a real batch instance. Anything else exits 1 with
// "flux-standin: X is not implemented by the test double".
//
// Build it static, for any image:
//
//	CGO_ENABLED=0 go build -o flux ./test/node/fluxstandin
package main
