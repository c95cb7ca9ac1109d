package harness

import "fmt"

// GraftHostileSpec is the spec (YAML) of issue 33's orphan graft: a
// MiniCluster whose spec.crossplane.resourceRefs name the four objects a
// MiniCluster called name left behind when it was deleted with
// propagationPolicy Orphan, with a services Pod that has the node (root,
// every capability, the host's /) and reads the Secret secret into env.
// The e2e and the real-node tiers both try it as a tenant.
func GraftHostileSpec(name, secret string) string {
	return fmt.Sprintf(`
size: 2
crossplane:
  resourceRefs:
    - {apiVersion: batch/v1, kind: Job, name: %[1]s}
    - {apiVersion: v1, kind: ConfigMap, name: %[1]s-entrypoint}
    - {apiVersion: v1, kind: Secret, name: %[1]s-curve-cert}
    - {apiVersion: v1, kind: Service, name: %[1]s}
services:
  - name: root
    image: ubuntu:noble
    command: ls /host/etc
    securityContext:
      privileged: true
      capabilities: {add: [ALL]}
    volumes: {host: {hostPath: /, path: /host, readOnly: true}}
    secrets: {LOOT: {name: %[2]s, key: password}}
`, name, secret)
}
