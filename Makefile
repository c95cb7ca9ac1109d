# MiniCluster for Crossplane.
#
#   make render   render examples/hello-world with `crossplane composition render`
#   make test     every test (installs what it needs on a fresh machine)
#
# Tools (Crossplane CLI and core, kube-apiserver, etcd, ...) are built once into
# $(TOOLS_DIR), outside the repo, keyed by version; hack/tools.sh does it.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

export GOFLAGS ?= -buildvcs=false
TOOLS := hack/tools.sh
BIN := $(CURDIR)/bin
EXAMPLE ?= examples/hello-world
SHAPE ?= v2
GO_TEST_FLAGS ?=

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## Build or install every external tool into the tool cache.
	@$(TOOLS) install

.PHONY: build
build: ## Build the function and CLI binaries into bin/.
	go build -o $(BIN)/function ./cmd/function
	go build -o $(BIN)/minicluster ./cmd/minicluster

.PHONY: generate
generate: ## Regenerate deepcopy code, the XRD and the CRDs from the Go types.
	@$(TOOLS) install controller-gen
	hack/generate.sh

.PHONY: render
render: build ## Render $(EXAMPLE) with crossplane composition render (the function runs locally) as a Crossplane v2 namespaced MiniCluster; SHAPE=claims for the claim shape.
	@$(TOOLS) install crossplane-cli crossplane-core
	go run ./hack/render --example $(EXAMPLE) --shape $(SHAPE) \
		--crossplane "$$($(TOOLS) path crossplane-cli)" \
		--crossplane-core "$$($(TOOLS) path crossplane-core)" \
		--function $(BIN)/function

.PHONY: lint
lint: ## golangci-lint with .golangci.yml (gofmt, staticcheck, gosec, depguard's domain boundary, ...) and go vet.
	@$(TOOLS) install golangci-lint
	"$$($(TOOLS) path golangci-lint)" run ./...
	go vet ./...

.PHONY: test-unit
test-unit: ## Unit, script, CLI and generated-file tests, and the test harness's own (no control plane).
	@$(TOOLS) install shellcheck controller-gen czmq
	MC_SHELLCHECK="$$($(TOOLS) path shellcheck)" MC_CONTROLLER_GEN="$$($(TOOLS) path controller-gen)" CURVE_CZMQ_TEST=1 \
		go test $(GO_TEST_FLAGS) ./apis/... ./internal/... ./function/... ./cmd/... ./hack/... ./test/badclaims/... ./test/corpus/... ./test/node/fluxstandin/... ./test/harness/...

.PHONY: test-render
test-render: build ## Render every example with the Crossplane CLI and compare with the goldens.
	@$(TOOLS) install crossplane-cli crossplane-core
	MC_CROSSPLANE="$$($(TOOLS) path crossplane-cli)" MC_CROSSPLANE_CORE="$$($(TOOLS) path crossplane-core)" MC_FUNCTION=$(BIN)/function \
		go test $(GO_TEST_FLAGS) ./test/render/...

.PHONY: e2e
e2e: ## End-to-end tests on a real control plane: etcd, kube-apiserver, controller manager, Crossplane core, the function.
	@$(TOOLS) install kubernetes etcd crossplane-core crossplane-cli crane
	MC_E2E=1 MC_ETCD="$$($(TOOLS) path etcd)" MC_KUBE_APISERVER="$$($(TOOLS) path kube-apiserver)" \
		MC_KUBE_CONTROLLER_MANAGER="$$($(TOOLS) path kube-controller-manager)" MC_CROSSPLANE_CORE="$$($(TOOLS) path crossplane-core)" \
		MC_CROSSPLANE="$$($(TOOLS) path crossplane-cli)" MC_CRANE="$$($(TOOLS) path crane)" \
		go test $(GO_TEST_FLAGS) -count=1 -timeout=45m -v ./test/e2e/...

.PHONY: e2e-oldest
e2e-oldest: ## The control plane's tenant, lifecycle and gang tests on the oldest Kubernetes the README supports (kube-apiserver and kube-controller-manager at KUBERNETES_OLDEST_VERSION, hack/tools.sh).
	@$(TOOLS) install kubernetes-oldest etcd crossplane-core crossplane-cli crane
	MC_E2E=1 MC_ETCD="$$($(TOOLS) path etcd)" MC_KUBE_APISERVER="$$($(TOOLS) path oldest-kube-apiserver)" \
		MC_KUBE_CONTROLLER_MANAGER="$$($(TOOLS) path oldest-kube-controller-manager)" MC_CROSSPLANE_CORE="$$($(TOOLS) path crossplane-core)" \
		MC_CROSSPLANE="$$($(TOOLS) path crossplane-cli)" MC_CRANE="$$($(TOOLS) path crane)" \
		go test $(GO_TEST_FLAGS) -count=1 -timeout=20m -v -run '$(OLDEST_TESTS)' ./test/e2e/

# What the oldest version runs: a tenant's MiniCluster of each shape from
# create to delete, its lifecycle, and gang scheduling where the cluster
# cannot do it (nothing changes; Required refuses).
OLDEST_TESTS = ^(TestTenants|TestTenantsV2|TestLifecycle|TestGang|TestGangV2)$$

.PHONY: e2e-node
e2e-node: ## The README's flows and every example on a real node (kubelet, containerd, CoreDNS, Kueue, images built here); needs root. MC_FLUX_PREFIX=DIR for real flux-core instead of the stand-in.
	@$(TOOLS) install kubernetes etcd crossplane-core node coredns kueue
	$(E2E_ENV) MC_E2E_NODE=1 go test $(GO_TEST_FLAGS) -count=1 -timeout=40m -v ./test/node/

.PHONY: e2e-node-timings
e2e-node-timings: ## Measure hello-world at sizes 4 and 8 on the real node (medians of 3; docs/performance.md); needs root.
	@$(TOOLS) install kubernetes etcd crossplane-core node coredns
	$(E2E_ENV) MC_E2E_NODE=1 MC_NODE_TIMINGS=1 go test -count=1 -timeout=30m -v -run '^TestHelloWorldTimings$$' ./test/node/

.PHONY: bench-node
bench-node: ## Measure hello-world size 4 on the real node, v2 and claims against its objects applied directly: API writes, composition runs, time to Succeeded (medians of 3; report in $(BIN)/bench-node.json; not a test); needs root.
	@$(TOOLS) install kubernetes etcd crossplane-core node coredns
	@mkdir -p $(BIN)
	$(E2E_ENV) MC_E2E_NODE=1 MC_NODE_BENCH=1 MC_NODE_BENCH_REPORT=$(BIN)/bench-node.json go test -count=1 -timeout=40m -v -run '^TestBenchNodeWrites$$' ./test/node/

CONTENTION_N ?= 6

.PHONY: bench-contention
bench-contention: ## $(CONTENTION_N) hello-world MiniClusters of 4 brokers on a real node with room for 6 brokers, with and without gang scheduling in one run: time until all finish and broker-seconds held partial (report in $(BIN)/bench-contention.json; not a test); needs root.
	@$(TOOLS) install kubernetes etcd crossplane-core node coredns kueue
	@mkdir -p $(BIN)
	$(E2E_ENV) MC_E2E_NODE=1 MC_NODE_CONTENTION_BENCH=1 MC_NODE_CONTENTION_N=$(CONTENTION_N) MC_NODE_CONTENTION_REPORT=$(BIN)/bench-contention.json \
		go test -count=1 -timeout=40m -v -run '^TestBenchContention$$' ./test/node/

E2E_ENV = MC_E2E=1 MC_ETCD="$$($(TOOLS) path etcd)" MC_KUBE_APISERVER="$$($(TOOLS) path kube-apiserver)" \
	MC_KUBE_CONTROLLER_MANAGER="$$($(TOOLS) path kube-controller-manager)" MC_CROSSPLANE_CORE="$$($(TOOLS) path crossplane-core)" \
	MC_CROSSPLANE="$$($(TOOLS) path crossplane-cli)" MC_CRANE="$$($(TOOLS) path crane)"

.PHONY: load
load: ## The load test with a steady-state window: $(LOAD_CLAIMS) MiniClusters of shape $(LOAD_SHAPE) (claims or v2), report in $(BIN)/load-$(LOAD_SHAPE)-$(LOAD_CLAIMS).json (not part of make test).
	@$(TOOLS) install kubernetes etcd crossplane-core
	@mkdir -p $(BIN)
	$(E2E_ENV) MC_LOAD_CLAIMS=$(LOAD_CLAIMS) MC_LOAD_SHAPE=$(LOAD_SHAPE) MC_LOAD_STEADY=$(LOAD_STEADY) MC_LOAD_REPORT=$(BIN)/load-$(LOAD_SHAPE)-$(LOAD_CLAIMS).json \
		go test -count=1 -timeout=$(LOAD_TIMEOUT) -v -run '^TestLoad$$' ./test/e2e/

.PHONY: load-1000
load-1000: ## make load with 1,000 MiniClusters (10 to 12 minutes on 2 cores).
	@$(MAKE) load LOAD_CLAIMS=1000 LOAD_TIMEOUT=120m

LOAD_CLAIMS ?= 100
LOAD_SHAPE ?= claims
LOAD_STEADY ?= 5m
LOAD_TIMEOUT ?= 30m

.PHONY: dev-up
dev-up: ## Start the e2e control plane (etcd, kube-apiserver, Crossplane, the function; the v2 shape, SHAPE=claims for claims) and, as root, a real node and Kueue in the background; prints export KUBECONFIG=...
	@$(TOOLS) install kubernetes etcd crossplane-core node coredns kueue
	@go build -o $(BIN)/devenv ./hack/devenv
	@$(BIN)/devenv up --shape $(SHAPE)

.PHONY: dev-down
dev-down: ## Stop the control plane dev-up started and put the host back (after five minutes it kills it and cleans up after its node).
	@go build -o $(BIN)/devenv ./hack/devenv
	@$(BIN)/devenv down

.PHONY: golden
golden: build ## Rewrite the render goldens (crossplane composition render and in-process) from the current code.
	@$(TOOLS) install crossplane-cli crossplane-core
	MC_CROSSPLANE="$$($(TOOLS) path crossplane-cli)" MC_CROSSPLANE_CORE="$$($(TOOLS) path crossplane-core)" MC_FUNCTION=$(BIN)/function \
		go test ./test/render/... -update
	go test ./cmd/minicluster/ -run '^TestGoldens$$' -update

.PHONY: test
test: lint test-unit test-render test-fuzz e2e e2e-oldest e2e-node ## Every test.
	@echo "make test: all tests passed"

.PHONY: clean
clean: ## Remove build output (not the tool cache).
	rm -rf $(BIN)

# Packages: the Function, Provider and Configuration .xpkg files.
VERSION ?= v0.1.0
REGISTRY ?= xpkg.crossplane.io/flux-framework
PKG_OUT := _output/packages

comma := ,
space := $(empty) $(empty)
PLATFORMS := linux/amd64 linux/arm64

# The function stamps its version on what it composes (function/version.go).
VERSION_LDFLAG := -X github.com/flux-framework/minicluster-crossplane/function.Version=$(VERSION)

.PHONY: build-linux
build-linux: ## Static binaries for the package runtime images, one directory a platform ($(PLATFORMS)).
	for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags="-s -w $(VERSION_LDFLAG)" -o $(BIN)/$${os}_$$arch/function ./cmd/function && \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags="-s -w" -o $(BIN)/$${os}_$$arch/provider ./cmd/provider || exit 1; \
	done

.PHONY: packages
packages: build-linux ## Build the .xpkg files into _output/packages: one a platform for the Function and Provider (no Docker needed).
	@$(TOOLS) install crossplane-cli
	go run ./hack/packages --crossplane "$$($(TOOLS) path crossplane-cli)" --bin $(BIN) --platforms "$(subst $(space),$(comma),$(PLATFORMS))" \
		--out $(PKG_OUT) --version $(VERSION) --registry $(REGISTRY)

.PHONY: publish
publish: packages ## Push the packages to $(REGISTRY) (e.g. make publish REGISTRY=registry.example.com/flux), multi-platform where they have a runtime.
	@$(TOOLS) install crossplane-cli
	for p in function-minicluster provider-minicluster-burst configuration-minicluster configuration-minicluster-v2; do \
		files=$$(ls $(PKG_OUT)/$$p.xpkg $(PKG_OUT)/$$p-*.xpkg 2>/dev/null | paste -sd, -); \
		"$$($(TOOLS) path crossplane-cli)" xpkg push -f $$files $(REGISTRY)/$$p:$(VERSION) || exit 1; \
	done

# Performance and robustness (docs/performance.md).
BENCH_COUNT ?= 6
BENCH_FLAGS ?=
BENCHSTAT ?= go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# Fuzz budgets are execution counts, not durations: go1.26's fuzz coordinator
# can fail a duration-bound run with a bare "context deadline exceeded" at the
# deadline when the machine is loaded (golang/go#75804, fixed in go1.27), which
# is a flake, not a finding. A count has no deadline to race.
FUZZ_RUNFUNCTION_EXECS ?= 2000
FUZZ_DECODE_EXECS ?= 50000

.PHONY: bench
bench: ## Benchmarks of RunFunction: raw results in bin/bench.txt, summary by benchstat.
	@mkdir -p $(BIN)
	go test ./function/ -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) $(BENCH_FLAGS) | tee $(BIN)/bench.txt
	$(BENCHSTAT) $(BIN)/bench.txt

.PHONY: test-fuzz
test-fuzz: ## A short fuzz run (part of make test).
	$(MAKE) fuzz FUZZ_RUNFUNCTION_EXECS=300 FUZZ_DECODE_EXECS=5000

.PHONY: fuzz
fuzz: ## Fuzz RunFunction and Decode ($(FUZZ_RUNFUNCTION_EXECS) and $(FUZZ_DECODE_EXECS) inputs).
	go test ./function/ -run '^$$' -fuzz '^FuzzRunFunction$$' -fuzztime $(FUZZ_RUNFUNCTION_EXECS)x -fuzzminimizetime 5s
	go test ./function/ -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_DECODE_EXECS)x -fuzzminimizetime 5s
