package corpus

import (
	"slices"
	"strings"
)

// mutation changes a claim in place and says what it did.
type mutation struct {
	name  string
	apply func(g *gen, o map[string]any) string
}

// Paths the MiniCluster mounts for Flux in every pod, and the volume names
// it uses: user volumes and flux.container.mountPath must not take them.
var (
	reservedPaths = []string{"/mnt/flux", "/flux_operator", "/mnt/curve", "/opt/software", "/home/flux-operator"}
	reservedVols  = []string{"flux-view", "spack-software", "flux-operator-home", "flux-entrypoint", "flux-curve-cert"}
)

// Label keys and values: reserved by Kubernetes' Job controller or by the
// function's own pod labels, syntactically invalid, or at length limits.
var (
	labelKeys = []string{
		"job-name", "controller-uid", "batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid",
		"batch.kubernetes.io/job-completion-index", "app", "app.kubernetes.io/name", "hpa-selector", "namespace",
		"kueue.x-k8s.io/queue-name", "team", "example.com/team", "bad key", "Bad_Key!", "example.com/", "/team",
		"a/b/c", strings.Repeat("k", 63), strings.Repeat("k", 64), strings.Repeat("p", 253) + "/k",
		strings.Repeat("p", 254) + "/k", "kubernetes.io/foo", "-team", "team-", "crossplane.io/composite",
	}
	labelValues = []string{
		"ok", "", "physics", strings.Repeat("v", 63), strings.Repeat("v", 64), "has space", "-lead", "trail-",
		"a/b", "a.b_c-d", "UPPER", "ünïcode", "x\x00y",
	}
	// Names of Kubernetes objects a pod refers to.
	refNames = []string{
		"flux-runner", "Bad_Name", "a..b", "with space", "UPPER", "-lead", "trail-", "a.b.c",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 250) + ".com", "x\x00y", "default-scheduler",
	}
	// Container and Service names.
	oddNames = []string{"web", "8080-web", "a", "x1", "flux-view", "nginx", "db-0", "9"}
	ids      = []int64{-1, 0, 1, 1000, 65534, 2147483647, 2147483648, 4294967296}
	// Strings with an unbalanced quote or other shell trouble.
	quoted = []string{
		`echo "hello`, `echo 'hello`, "echo `date", `echo $(`, `echo \`, `-o x='1`, `--setattr="a b`,
		`flux submit "`, `a "b" 'c`, `echo ${`, "echo hi; exit 1", "echo 'it''s'", `echo "a\"b"`,
	}
)

// catalogue is every mutation, section by section. Generate cycles through
// it in this order, so the order is part of what a seed generates.
var catalogue = slices.Concat(nameMutations, labelMutations, resourceMutations, environmentMutations,
	podMutations, volumeMutations, scriptMutations, fluxMutations, sizeMutations, structureMutations)
