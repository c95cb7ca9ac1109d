package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// hostnameEnvForTests overrides gethostname(2), so that one machine can run
// every broker of an instance in tests. Flux's own way, -Shostname=NAME,
// works as well.
const hostnameEnvForTests = "FLUX_STANDIN_HOSTNAME_FOR_TESTS"

// broker is one broker of the instance.
type broker struct {
	io       stdio
	log      *logger
	rank     int
	size     int
	hostname string
	boot     bootstrap
	topo     *topology
	attrs    map[string]string
	cores    int

	localPath      string
	rundir         string
	ownRundir      bool // made by the broker, removed at exit (rundir-cleanup)
	connectTimeout time.Duration
	peerTimeout    time.Duration
	quorum         int
	program        []string // rank 0's initial program; nil: none
	interactive    bool     // the initial program is an interactive shell
	contentDump    string
	startTime      time.Time

	inbox *mailbox
	exec  *executor
	jobs  *jobManager // rank 0 only

	mu        sync.Mutex
	state     string // join, run, shutdown
	parent    *conn
	upQueue   []*msg // routed upward before the parent accepted this broker
	children  map[int]*conn
	goodbye   map[int]bool
	listener  net.Listener
	local     net.Listener
	relays    map[uint64]*conn // rpc id -> client, for requests relayed to rank 0
	clients   map[*conn]bool   // local clients connected now
	relaySeq  uint64
	modules   []string
	progProc  *os.Process
	exitCode  int
	done      chan struct{}
	doneOnce  sync.Once
	childGone chan struct{}
}

func newBroker(ba brokerArgs, io stdio) (*broker, error) {
	b := &broker{io: io, attrs: map[string]string{}, children: map[int]*conn{}, goodbye: map[int]bool{},
		relays: map[uint64]*conn{}, clients: map[*conn]bool{}, modules: []string{"sched-simple"}, done: make(chan struct{}),
		childGone: make(chan struct{}, 64), startTime: time.Now(), state: "join"}
	for _, s := range ba.setattrs {
		if err := setAttr(b.attrs, s); err != nil {
			return nil, err
		}
	}
	b.hostname = b.attrs["hostname"]
	if b.hostname == "" {
		b.hostname = os.Getenv(hostnameEnvForTests)
	}
	if b.hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("gethostname: %s", errnoText(err))
		}
		b.hostname = h
	}
	b.attrs["hostname"] = b.hostname

	conf := map[string]any{}
	cfg := ba.configPath
	if cfg == "" {
		cfg = os.Getenv("FLUX_CONF_DIR")
	}
	if cfg != "" {
		var err error
		if conf, err = loadConfig(cfg); err != nil {
			return nil, err
		}
		b.attrs["config.path"] = cfg
	}
	boot, err := parseBootstrap(conf, b.hostname)
	if err != nil {
		return nil, err
	}
	b.boot = boot
	b.rank, b.size = boot.rankOf(b.hostname), len(boot.Hosts)
	confTopo, err := tableString(conf, "tbon", "topo")
	if err != nil {
		return nil, err
	}
	uri := topoURI(b.attrs, confTopo, boot)
	if b.topo, err = newTopology(uri, boot.Hosts); err != nil {
		return nil, err
	}
	b.attrs["tbon.topo"] = uri

	b.log = &logger{w: io.err, level: logErr, rank: b.rank}
	if v, ok := b.attrs["log-stderr-level"]; ok {
		l, err := strconv.Atoi(v)
		if err != nil || l < 0 || l > 7 {
			return nil, fmt.Errorf("log-stderr-level: invalid value %q", v)
		}
		b.log.level = l
	}
	switch b.attrs["log-stderr-mode"] {
	case "", "leader", "local":
	default:
		return nil, fmt.Errorf("log-stderr-mode: must be leader or local")
	}

	if boot.CurveCert != "" {
		if _, err := loadCert(boot.CurveCert); err != nil {
			return nil, err
		}
	}
	if b.rank == 0 && !b.hasAttr("broker.rc2_none") {
		b.program = ba.program
		if len(b.program) == 0 {
			if f, ok := io.in.(*os.File); !ok || !isTerminal(f) {
				return nil, fmt.Errorf("stdin is not a tty - can't run interactive shell")
			}
			b.interactive = true
		}
	}
	if err := b.setupDirs(); err != nil {
		return nil, err
	}
	if err := b.setupAttrs(conf); err != nil {
		b.removeRundir()
		return nil, err
	}
	b.cores = localCores()
	b.exec = &executor{b: b, jobs: map[uint64]*execJob{}}
	if b.rank == 0 {
		if b.jobs, err = newJobManager(b, conf); err != nil {
			b.removeRundir()
			return nil, err
		}
	}
	b.inbox = newMailbox(b.dispatch)
	return b, nil
}

func (b *broker) hasAttr(name string) bool { _, ok := b.attrs[name]; return ok }
