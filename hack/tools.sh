#!/usr/bin/env bash
# Installs the project's external tools into a per-user cache outside the repo.
#
#   hack/tools.sh install [NAME...]   install tools (default: all)
#   hack/tools.sh path NAME           print the absolute path of a tool's binary
#   hack/tools.sh envtest-assets      print a KUBEBUILDER_ASSETS directory
#   hack/tools.sh versions            print the pinned versions
#
# Tool names: crossplane-cli crossplane-core kubernetes kubernetes-oldest
# controller-gen crane golangci-lint etcd shellcheck czmq node coredns kueue.
# Binary names for `path`: crossplane-cli crossplane-core kube-apiserver
# kube-controller-manager kube-scheduler kubelet kubectl
# oldest-kube-apiserver oldest-kube-controller-manager controller-gen crane
# golangci-lint etcd shellcheck coredns kueue containerd ctr runc mmdebstrap. `node` is the real
# node's Debian packages (containerd, runc, CNI plugins, mmdebstrap).
#
# Cache root: ${MC_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/minicluster-tools}.
# Every tool lives in a directory keyed by its version and is only (re)built
# when its binary is missing or does not run its version command. Binaries are
# written under a temporary name and renamed at the end. Crossplane core and
# Kubernetes are built from a copy of their module (hack/README.md says why).
set -euo pipefail

CROSSPLANE_CLI_VERSION=v2.5.0   # module github.com/crossplane/cli/v2
CROSSPLANE_CORE_VERSION=v2.4.0  # module github.com/crossplane/crossplane/v2 (v2.4.2 does not build here)
KUBERNETES_VERSION=v1.37.2      # module k8s.io/kubernetes; staging modules at v0.37.2
KUBERNETES_OLDEST_VERSION=v1.34.12 # the oldest version the README supports: its kube-apiserver and kube-controller-manager run make e2e-oldest
CONTROLLER_GEN_VERSION=v0.20.0  # module sigs.k8s.io/controller-tools
CRANE_VERSION=v0.21.9           # module github.com/google/go-containerregistry (as used by the CLI)
GOLANGCI_LINT_VERSION=v2.15.0   # module github.com/golangci/golangci-lint/v2 (config: .golangci.yml)
COREDNS_VERSION=v1.13.1         # module github.com/coredns/coredns (only the plugins the real node needs)
KUEUE_VERSION=v0.19.1           # module sigs.k8s.io/kueue (cmd/kueue, the controller manager; its CRDs and webhooks come from the same module)

CROSSPLANE_CLI_MODULE=github.com/crossplane/cli/v2
CROSSPLANE_CORE_MODULE=github.com/crossplane/crossplane/v2
KUBERNETES_MODULE=k8s.io/kubernetes
CONTROLLER_GEN_MODULE=sigs.k8s.io/controller-tools
CRANE_MODULE=github.com/google/go-containerregistry
GOLANGCI_LINT_MODULE=github.com/golangci/golangci-lint/v2
COREDNS_MODULE=github.com/coredns/coredns
KUEUE_MODULE=sigs.k8s.io/kueue
# The real node's Debian packages: the container runtime and its low-level
# runtime, the CNI plugins (bridge, host-local, loopback), mmdebstrap for the
# images and iproute2 for the node's bridge.
NODE_PACKAGES=(containerd runc containernetworking-plugins mmdebstrap iproute2)

ALL_TOOLS=(controller-gen golangci-lint etcd shellcheck czmq crane crossplane-cli crossplane-core kubernetes kubernetes-oldest node coredns kueue)

ROOT="${MC_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/minicluster-tools}"

log() { printf 'tools: %s\n' "$*" >&2; }
die() { printf 'tools: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat >&2 <<EOF
usage: $0 install [NAME...]      install tools (default: all)
       $0 path NAME              print the absolute path of a binary (non-zero if not installed)
       $0 envtest-assets         print a directory with kube-apiserver and etcd for KUBEBUILDER_ASSETS
       $0 versions               print the pinned versions

tools:    ${ALL_TOOLS[*]}
binaries: crossplane-cli crossplane-core kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl
          controller-gen crane golangci-lint etcd shellcheck coredns kueue containerd ctr
cache:    $ROOT (override with MC_TOOLS_DIR)
EOF
}

# ---------------------------------------------------------------- helpers

elapsed() { # seconds -> 1m02s
	local s=$1
	if ((s >= 60)); then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

# Go environment for all builds: static binaries, no workspace, module mode
# regardless of what the caller has in GOFLAGS (other flags such as
# -buildvcs=false are kept).
go_env() {
	local flags="" f
	for f in ${GOFLAGS:-}; do
		case "$f" in -mod=*) ;; *) flags+="$f " ;; esac
	done
	export GOWORK=off CGO_ENABLED=0 GO111MODULE=on
	export GOFLAGS="${flags}-mod=mod"
	case ",${GONOSUMDB:-}," in
	*,k8s.io/kubernetes,*) ;;
	*) export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}k8s.io/kubernetes" ;;
	esac
	command -v go >/dev/null 2>&1 || die "go is not on PATH"
}

# go install without -mod (go install pkg@version rejects it).
go_install_env() {
	local flags="" f
	for f in ${GOFLAGS:-}; do
		case "$f" in -mod=*) ;; *) flags+="$f " ;; esac
	done
	GOFLAGS="${flags% }" "$@"
}

# module_dir MOD VER -> prints the module's directory in the module cache.
module_dir() {
	local json dir
	json=$(cd / && go mod download -json "$1@$2" 2>&1) || die "go mod download $1@$2 failed: $json"
	dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1)
	[[ -n "$dir" && -d "$dir" ]] || die "go mod download $1@$2: no Dir in: $json"
	printf '%s\n' "$dir"
}

# module_commit MOD VER -> prints the VCS commit the proxy recorded, if any.
module_commit() {
	(cd / && go mod download -json "$1@$2" 2>/dev/null) |
		sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]\{40\}\)",\{0,1\}$/\1/p' | head -n1 || true
}

# copy_module MOD VER LOCALVER DEST: copies a module out of the module cache
# into DEST (writable) and replaces every replace directive that points at a
# local path by a requirement on that module at LOCALVER.
copy_module() {
	local mod=$1 ver=$2 localver=$3 dest=$4 src m
	src=$(module_dir "$mod" "$ver")
	cp -R "$src/." "$dest/"
	chmod -R u+w "$dest"
	local -a edits=()
	while read -r m; do
		[[ -n "$m" ]] || continue
		edits+=("-dropreplace=$m" "-require=$m@$localver")
	done < <(cd "$dest" && go mod edit -print |
		sed -n -e 's/^replace[[:space:]]\{1,\}\([^[:space:]]\{1,\}\)\([[:space:]]\{1,\}v[^[:space:]]*\)\{0,1\}[[:space:]]*=>[[:space:]]*\.\{1,2\}\/.*/\1/p' \
			-e 's/^[[:space:]]\{1,\}\([^[:space:]]\{1,\}\)\([[:space:]]\{1,\}v[^[:space:]]*\)\{0,1\}[[:space:]]*=>[[:space:]]*\.\{1,2\}\/.*/\1/p')
	if ((${#edits[@]})); then
		log "  $mod@$ver: replaced $((${#edits[@]} / 2)) local replace directives by requirements at $localver"
		(cd "$dest" && go mod edit "${edits[@]}")
	fi
}

# Per-tool lock so concurrent callers (make, go test) do not build twice.
with_lock() {
	local name=$1
	shift
	mkdir -p "$ROOT"
	if command -v flock >/dev/null 2>&1; then
		(
			trap cleanup EXIT
			exec 9>"$ROOT/.$name.lock"
			flock 9
			"$@"
		)
	else
		"$@"
	fi
}

# runs CMD... quietly; true if it exits 0 and its output contains WANT.
runs_version() {
	local want=$1 out
	shift
	[[ -x "$1" ]] || return 1
	out=$("$@" 2>&1) || return 1
	[[ -z "$want" || "$out" == *"$want"* ]]
}

WORK=""
cleanup() { [[ -z "$WORK" ]] || rm -rf "$WORK"; }
trap cleanup EXIT
new_work() {
	cleanup
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/mc-tools.XXXXXX")
}

# ---------------------------------------------------------------- paths

tool_dir() { # NAME -> versioned directory
	case "$1" in
	crossplane-cli) echo "$ROOT/crossplane-cli-$CROSSPLANE_CLI_VERSION" ;;
	crossplane-core) echo "$ROOT/crossplane-core-$CROSSPLANE_CORE_VERSION" ;;
	kubernetes) echo "$ROOT/kubernetes-$KUBERNETES_VERSION" ;;
	kubernetes-oldest) echo "$ROOT/kubernetes-$KUBERNETES_OLDEST_VERSION" ;;
	controller-gen) echo "$ROOT/controller-gen-$CONTROLLER_GEN_VERSION" ;;
	crane) echo "$ROOT/crane-$CRANE_VERSION" ;;
	golangci-lint) echo "$ROOT/golangci-lint-$GOLANGCI_LINT_VERSION" ;;
	coredns) echo "$ROOT/coredns-$COREDNS_VERSION" ;;
	kueue) echo "$ROOT/kueue-$KUEUE_VERSION" ;;
	*) die "unknown tool $1" ;;
	esac
}

bin_path() { # BINARY -> absolute path (may not exist)
	case "$1" in
	crossplane-cli | crossplane) echo "$(tool_dir crossplane-cli)/crossplane" ;;
	crossplane-core) echo "$(tool_dir crossplane-core)/crossplane" ;;
	kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kubectl) echo "$(tool_dir kubernetes)/$1" ;;
	oldest-kube-apiserver | oldest-kube-controller-manager) echo "$(tool_dir kubernetes-oldest)/${1#oldest-}" ;;
	controller-gen) echo "$(tool_dir controller-gen)/controller-gen" ;;
	crane) echo "$(tool_dir crane)/crane" ;;
	golangci-lint) echo "$(tool_dir golangci-lint)/golangci-lint" ;;
	coredns) echo "$(tool_dir coredns)/coredns" ;;
	kueue) echo "$(tool_dir kueue)/kueue" ;;
	etcd | shellcheck | containerd | ctr | runc | mmdebstrap) command -v "$1" 2>/dev/null || echo "/nonexistent/$1" ;;
	*) die "unknown binary $1 (want one of: crossplane-cli crossplane-core kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl oldest-kube-apiserver oldest-kube-controller-manager controller-gen crane golangci-lint etcd shellcheck coredns kueue containerd ctr runc mmdebstrap)" ;;
	esac
}

# ---------------------------------------------------------------- checks

present() { # NAME -> true if installed and working
	case "$1" in
	crossplane-cli) runs_version "$CROSSPLANE_CLI_VERSION" "$(bin_path crossplane-cli)" version --client ;;
	crossplane-core) runs_version "$CROSSPLANE_CORE_VERSION" "$(bin_path crossplane-core)" --version ;;
	kubernetes)
		runs_version "$KUBERNETES_VERSION" "$(bin_path kube-apiserver)" --version &&
			runs_version "$KUBERNETES_VERSION" "$(bin_path kube-controller-manager)" --version &&
			runs_version "$KUBERNETES_VERSION" "$(bin_path kube-scheduler)" --version &&
			runs_version "$KUBERNETES_VERSION" "$(bin_path kubelet)" --version &&
			runs_version "$KUBERNETES_VERSION" "$(bin_path kubectl)" version --client
		;;
	kubernetes-oldest)
		runs_version "$KUBERNETES_OLDEST_VERSION" "$(bin_path oldest-kube-apiserver)" --version &&
			runs_version "$KUBERNETES_OLDEST_VERSION" "$(bin_path oldest-kube-controller-manager)" --version
		;;
	controller-gen) runs_version "$CONTROLLER_GEN_VERSION" "$(bin_path controller-gen)" --version ;;
	crane) runs_version "$CRANE_VERSION" "$(bin_path crane)" version ;;
	golangci-lint) runs_version "version ${GOLANGCI_LINT_VERSION#v} " "$(bin_path golangci-lint)" --version ;;
	etcd) command -v etcd >/dev/null 2>&1 && etcd --version >/dev/null 2>&1 ;;
	shellcheck) command -v shellcheck >/dev/null 2>&1 && shellcheck --version >/dev/null 2>&1 ;;
	czmq) [[ -f /usr/include/czmq.h ]] ;;
	node) node_present ;;
	coredns) runs_version "CoreDNS-${COREDNS_VERSION#v}" "$(bin_path coredns)" -version ;;
	kueue) kueue_present ;;
	*) die "unknown tool $1" ;;
	esac
}

# Kueue's manager has no version flag (it starts a controller): the Go
# build information says which module version it was built from.
kueue_present() {
	local bin out
	bin=$(bin_path kueue)
	[[ -x "$bin" ]] || return 1
	command -v go >/dev/null 2>&1 || return 1
	out=$(go version -m "$bin" 2>/dev/null) || return 1
	printf '%s\n' "$out" | grep -Eq "^[[:space:]]+mod[[:space:]]+$KUEUE_MODULE[[:space:]]+$KUEUE_VERSION([[:space:]]|\$)"
}

node_present() {
	local p
	for p in "${NODE_PACKAGES[@]}"; do
		[[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] || return 1
	done
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]]
}

tool_version() {
	case "$1" in
	crossplane-cli) echo "$CROSSPLANE_CLI_VERSION" ;;
	crossplane-core) echo "$CROSSPLANE_CORE_VERSION" ;;
	kubernetes) echo "$KUBERNETES_VERSION" ;;
	kubernetes-oldest) echo "$KUBERNETES_OLDEST_VERSION" ;;
	controller-gen) echo "$CONTROLLER_GEN_VERSION" ;;
	crane) echo "$CRANE_VERSION" ;;
	golangci-lint) echo "$GOLANGCI_LINT_VERSION" ;;
	etcd) (etcd --version 2>/dev/null || true) | sed -n 's/^etcd Version: /v/p' | head -n1 ;;
	shellcheck) (shellcheck --version 2>/dev/null || true) | sed -n 's/^version: /v/p' | head -n1 ;;
	czmq) (dpkg-query -W -f='${Version}' libczmq-dev 2>/dev/null || true) ;;
	node) (dpkg-query -W -f='${Version}' containerd 2>/dev/null || true) ;;
	coredns) echo "$COREDNS_VERSION" ;;
	kueue) echo "$KUEUE_VERSION" ;;
	esac
}

# ---------------------------------------------------------------- builders

# go_install_tool NAME MOD VER PKG LDFLAGS
go_install_tool() {
	local name=$1 mod=$2 ver=$3 pkg=$4 ldflags=$5 dir bin
	dir=$(tool_dir "$name")
	mkdir -p "$dir"
	local gobin="$dir/.tmp-install.$$"
	rm -rf "$gobin"
	mkdir -p "$gobin"
	go_env
	bin=$(basename "$pkg")
	if ! (cd / && go_install_env env GOBIN="$gobin" go install -trimpath -ldflags "-s -w $ldflags" "$mod/$pkg@$ver") >&2; then
		rm -rf "$gobin"
		log "  go install $mod/$pkg@$ver failed; building from a copy of the module"
		build_copied_module "$name" "$mod" "$ver" "$ver" "$ldflags" "$pkg:$bin"
		return
	fi
	mv -f "$gobin/$bin" "$dir/$bin"
	rm -rf "$gobin"
}

# build_copied_module NAME MOD VER LOCALVER LDFLAGS PKG:BIN...
build_copied_module() {
	local name=$1 mod=$2 ver=$3 localver=$4 ldflags=$5 dir spec pkg bin
	shift 5
	dir=$(tool_dir "$name")
	mkdir -p "$dir"
	go_env
	new_work
	mkdir -p "$WORK/src"
	copy_module "$mod" "$ver" "$localver" "$WORK/src"
	local -a built=()
	for spec in "$@"; do
		pkg=${spec%%:*}
		bin=${spec##*:}
		log "  go build ./$pkg"
		(cd "$WORK/src" && go build -trimpath -ldflags "-s -w $ldflags" -o "$dir/.$bin.tmp.$$" "./$pkg") >&2 ||
			{ rm -f "$dir/.$bin.tmp.$$"; cleanup; WORK=""; die "building $mod@$ver ./$pkg failed"; }
		built+=("$bin")
	done
	for bin in "${built[@]}"; do mv -f "$dir/.$bin.tmp.$$" "$dir/$bin"; done
	cleanup
	WORK=""
}

build_controller_gen() {
	go_install_tool controller-gen "$CONTROLLER_GEN_MODULE" "$CONTROLLER_GEN_VERSION" cmd/controller-gen \
		"-X sigs.k8s.io/controller-tools/pkg/version.version=$CONTROLLER_GEN_VERSION"
}

build_crane() {
	go_install_tool crane "$CRANE_MODULE" "$CRANE_VERSION" cmd/crane \
		"-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION"
}

# golangci-lint prints "has version 2.15.0" (no v, as its releases do) from
# main.version; set it so a copied-module build says the same as go install.
build_golangci_lint() {
	go_install_tool golangci-lint "$GOLANGCI_LINT_MODULE" "$GOLANGCI_LINT_VERSION" cmd/golangci-lint \
		"-X main.version=${GOLANGCI_LINT_VERSION#v}"
}

build_crossplane_cli() {
	build_copied_module crossplane-cli "$CROSSPLANE_CLI_MODULE" "$CROSSPLANE_CLI_VERSION" "$CROSSPLANE_CLI_VERSION" \
		"-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$CROSSPLANE_CLI_VERSION" \
		cmd/crossplane:crossplane
}

build_crossplane_core() {
	build_copied_module crossplane-core "$CROSSPLANE_CORE_MODULE" "$CROSSPLANE_CORE_VERSION" "$CROSSPLANE_CORE_VERSION" \
		"-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$CROSSPLANE_CORE_VERSION" \
		cmd/crossplane:crossplane
}

build_kubernetes() {
	build_kubernetes_version kubernetes "$KUBERNETES_VERSION" \
		cmd/kube-apiserver:kube-apiserver cmd/kube-controller-manager:kube-controller-manager \
		cmd/kube-scheduler:kube-scheduler cmd/kubelet:kubelet cmd/kubectl:kubectl
}

# The oldest supported version runs only the control plane (make
# e2e-oldest), so only its two binaries are built.
build_kubernetes_oldest() {
	build_kubernetes_version kubernetes-oldest "$KUBERNETES_OLDEST_VERSION" \
		cmd/kube-apiserver:kube-apiserver cmd/kube-controller-manager:kube-controller-manager
}

# build_kubernetes_version NAME VERSION PKG:BIN...
build_kubernetes_version() {
	local name=$1 version=$2
	shift 2
	go_env
	local v=${version#v} major minor commit date staging ld="" p
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%.*}
	staging="v0.${v#*.}" # v1.34.12 -> v0.34.12
	commit=$(module_commit "$KUBERNETES_MODULE" "$version")
	date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $p.gitVersion=$version -X $p.gitMajor=$major -X $p.gitMinor=$minor"
		ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$date"
		[[ -z "$commit" ]] || ld+=" -X $p.gitCommit=$commit"
	done
	build_copied_module "$name" "$KUBERNETES_MODULE" "$version" "$staging" "$ld" "$@"
}

apt_install() { # PKG...
	local -a sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null 2>&1 || die "need root or sudo to apt-get install $*"
		sudo=(sudo)
	fi
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install $* by other means"
	export DEBIAN_FRONTEND=noninteractive
	if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" >&2; then
		log "  apt-get install $* failed; running apt-get update and retrying"
		"${sudo[@]}" apt-get update -q >&2
		"${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" >&2
	fi
}

build_etcd() { apt_install etcd-server; }
build_node() { apt_install "${NODE_PACKAGES[@]}"; }

# CoreDNS with only the plugins the real node's cluster DNS uses: the full
# plugin set (core/plugin) pulls in every cloud provider's SDK and triples
# the build. The main below is ours; the plugins register themselves when
# imported, and coremain orders them by CoreDNS's own directive list.
build_coredns() {
	local dir
	dir=$(tool_dir coredns)
	mkdir -p "$dir"
	go_env
	new_work
	mkdir -p "$WORK/src"
	cat >"$WORK/src/main.go" <<'GO'
// Command coredns is CoreDNS with the plugins of the e2e tier's cluster DNS.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	"github.com/coredns/coredns/coremain"
)

var _ = dnsserver.Directives

func main() { coremain.Run() }
GO
	(cd "$WORK/src" && go mod init minicluster-tools/coredns >/dev/null 2>&1 &&
		go mod edit -require="$COREDNS_MODULE@$COREDNS_VERSION" &&
		go mod tidy >&2 &&
		go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" -o "$dir/.coredns.tmp.$$" .) >&2 ||
		{ rm -f "$dir/.coredns.tmp.$$"; cleanup; WORK=""; die "building CoreDNS $COREDNS_VERSION failed"; }
	mv -f "$dir/.coredns.tmp.$$" "$dir/coredns"
	cleanup
	WORK=""
}
# Kueue's manager (cmd/kueue), with every job integration compiled in as
# upstream ships it; the harness enables only batch/job in its
# configuration. The module has no replace directives, so go install works.
build_kueue() {
	go_install_tool kueue "$KUEUE_MODULE" "$KUEUE_VERSION" cmd/kueue \
		"-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
}
build_shellcheck() { apt_install shellcheck; }
# CZMQ is the independent oracle the CURVE certificate tests load our
# certificates with (internal/curve, CURVE_CZMQ_TEST=1).
build_czmq() { apt_install libczmq-dev; }

# ---------------------------------------------------------------- install

build_note() {
	case "$1" in
	crossplane-cli) echo "cold build ~15-25 min on 2 cores" ;;
	crossplane-core) echo "cold build ~20 min on 2 cores" ;;
	kubernetes) echo "cold build ~25-30 min on 2 cores" ;;
	kubernetes-oldest) echo "cold build of kube-apiserver and kube-controller-manager ~10-15 min on 2 cores" ;;
	controller-gen | crane) echo "cold build ~1-3 min" ;;
	golangci-lint) echo "cold build ~4-9 min on 2 cores" ;;
	etcd) echo "Debian package etcd-server" ;;
	shellcheck) echo "Debian package shellcheck" ;;
	czmq) echo "Debian package libczmq-dev" ;;
	node) echo "Debian packages ${NODE_PACKAGES[*]}" ;;
	coredns) echo "cold build ~2-7 min on 2 cores" ;;
	kueue) echo "cold build ~3-6 min on 2 cores" ;;
	esac
}

label() {
	case "$1" in
	crossplane-cli) echo "crossplane cli" ;;
	crossplane-core) echo "crossplane core" ;;
	*) echo "$1" ;;
	esac
}

install_locked() {
	local name=$1 start
	if present "$name"; then
		log "$name $(tool_version "$name") ready (cached)"
		return
	fi
	start=$SECONDS
	case "$name" in
	etcd | shellcheck | czmq | node) log "installing $name ($(build_note "$name"))..." ;;
	*) log "building $(label "$name") $(tool_version "$name") ($(build_note "$name"))..." ;;
	esac
	"build_${name//-/_}"
	present "$name" || die "$name $(tool_version "$name") was built but does not run its version command"
	log "$name $(tool_version "$name") ready (took $(elapsed $((SECONDS - start))))"
}

install_one() {
	local name=$1
	case "$name" in
	etcd | shellcheck)
		if present "$name"; then
			log "$name $(tool_version "$name") ready (on PATH: $(command -v "$name"))"
			return
		fi
		;;
	esac
	with_lock "$name" install_locked "$name"
}

cmd_install() {
	local -a names=("$@") n
	((${#names[@]})) || names=("${ALL_TOOLS[@]}")
	for n in "${names[@]}"; do
		case " ${ALL_TOOLS[*]} " in *" $n "*) ;; *) die "unknown tool '$n' (want: ${ALL_TOOLS[*]})" ;; esac
	done
	local start=$SECONDS
	for n in "${names[@]}"; do install_one "$n"; done
	log "all requested tools ready in $ROOT (took $(elapsed $((SECONDS - start))))"
}

cmd_path() {
	(($# == 1)) || die "usage: $0 path NAME"
	local p
	p=$(bin_path "$1")
	if [[ ! -x "$p" ]]; then
		log "$1 is not installed; run: $0 install $(case "$1" in oldest-*) echo kubernetes-oldest ;; kube-* | kubelet | kubectl) echo kubernetes ;; crossplane) echo crossplane-cli ;; containerd | ctr | runc | mmdebstrap) echo node ;; *) echo "$1" ;; esac)"
		exit 1
	fi
	printf '%s\n' "$p"
}

cmd_envtest_assets() {
	local apiserver etcd dir
	apiserver=$(bin_path kube-apiserver)
	[[ -x "$apiserver" ]] || die "kube-apiserver is not installed; run: $0 install kubernetes"
	etcd=$(command -v etcd 2>/dev/null) || die "etcd is not on PATH; run: $0 install etcd"
	dir="$ROOT/envtest-$KUBERNETES_VERSION"
	mkdir -p "$dir"
	ln -sfn "$apiserver" "$dir/kube-apiserver"
	ln -sfn "$etcd" "$dir/etcd"
	printf '%s\n' "$dir"
}

cmd_versions() {
	cat <<EOF
crossplane-cli  $CROSSPLANE_CLI_MODULE $CROSSPLANE_CLI_VERSION
crossplane-core $CROSSPLANE_CORE_MODULE $CROSSPLANE_CORE_VERSION
kubernetes      $KUBERNETES_MODULE $KUBERNETES_VERSION
kubernetes-oldest $KUBERNETES_MODULE $KUBERNETES_OLDEST_VERSION
controller-gen  $CONTROLLER_GEN_MODULE $CONTROLLER_GEN_VERSION
crane           $CRANE_MODULE $CRANE_VERSION
golangci-lint   $GOLANGCI_LINT_MODULE $GOLANGCI_LINT_VERSION
coredns         $COREDNS_MODULE $COREDNS_VERSION
kueue           $KUEUE_MODULE $KUEUE_VERSION
node            debian ${NODE_PACKAGES[*]}
etcd            debian etcd-server
shellcheck      debian shellcheck
EOF
}

main() {
	local cmd=${1:-}
	(($#)) && shift
	case "$cmd" in
	install) cmd_install "$@" ;;
	path) cmd_path "$@" ;;
	envtest-assets) cmd_envtest_assets "$@" ;;
	versions) cmd_versions ;;
	-h | --help | help) usage ;;
	*) usage; exit 2 ;;
	esac
}

main "$@"
