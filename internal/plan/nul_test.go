package plan

import (
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// nulInvalid: NUL bytes, which no script can carry (checkStrings).
func nulInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"NULInCommand": {
			reason: "A NUL byte cannot reach a script intact.",
			args:   mc(withRunner(func(c *v1alpha2.MiniClusterContainer) { c.Command = "echo a\x00b" })),
			want:   invalid{fields: []string{"spec.containers[0].command"}, msg: "must not contain a NUL byte"},
		},
		"NULInEnvironmentKey": {
			reason: "Map keys reach scripts too.",
			args:   mc(withFlux(func(f *v1alpha2.FluxSpec) { f.Environment = map[string]string{"A": "x\x00"} })),
			want:   invalid{fields: []string{"spec.flux.environment[A]"}, msg: "must not contain a NUL byte"},
		},
	}
}
