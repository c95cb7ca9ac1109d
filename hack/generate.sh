#!/usr/bin/env bash
# Regenerates everything derived from the Go types in apis/: deepcopy code,
# the MiniCluster XRDs (compositions/definition.yaml, claims; compositions/v2/
# definition.yaml, Crossplane v2), the CRDs Crossplane derives from them
# (internal/schema/crds/, for the in-process schema) and the CRD of the function's input
# (package/input/); and the v2 shape's Composition from the claim shape's.
# Run through `make generate`.
set -euo pipefail
cd "$(dirname "$0")/.."
cg=${MC_CONTROLLER_GEN:-$(hack/tools.sh path controller-gen)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cg" object paths=./apis/...
"$cg" crd paths=./apis/minicluster/... output:crd:dir="$tmp"
mkdir -p compositions/v2
go run ./hack/xrdgen -crd "$tmp/flux-framework.org_miniclusters.yaml" -o compositions/definition.yaml -v2 compositions/v2/definition.yaml
go run ./hack/xrdgen -composition compositions/composition.yaml -v2 compositions/v2/composition.yaml
mkdir -p internal/schema/crds
go run ./hack/xrdgen -crds compositions/definition.yaml -o internal/schema/crds/claims.yaml
go run ./hack/xrdgen -crds compositions/v2/definition.yaml -o internal/schema/crds/v2.yaml
mkdir -p package/input
"$cg" crd paths=./apis/input/... output:crd:dir=package/input
mkdir -p package/provider/crds
"$cg" crd paths=./apis/bursting/... output:crd:dir=package/provider/crds
go run ./hack/xrdgen -burst-crd package/provider/crds/bursting.flux-framework.org_bursts.yaml
echo "generate: apis deepcopy, compositions/definition.yaml, compositions/v2/definition.yaml and composition.yaml, internal/schema/crds/, package/input/, package/provider/crds/ are up to date" >&2
