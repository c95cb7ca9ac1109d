package plan

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// filesInvalid: the entrypoint ConfigMap's size (files).
func filesInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"HooksOverConfigMapLimit": {
			reason: "The scripts live in one ConfigMap, which Kubernetes caps at 1 MiB.",
			args: mc(withRunner(func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, BrokerPre: big, WorkerPre: big, Post: big}
			}), withSidecar("a", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			}), withSidecar("b", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			}), withSidecar("c", func(c *v1alpha2.MiniClusterContainer) {
				big := strings.Repeat("echo hello world\n", 65536/17)
				c.Commands = v1alpha2.Commands{Init: big, Pre: big, ServicePre: big, Post: big, Script: big}
			})),
			want: invalid{fields: []string{"spec.containers"}, msg: "over Kubernetes' limit of 1048576 bytes"},
		},
	}
}
