// Package admission is the one room that decides, in every composition
// run, whether a MiniCluster may be composed: compose, refuse (with the
// policy key or the object, the field and the fix), or keep what runs.
// Crossplane creates the pods with its own service account, so Kubernetes
// RBAC on pods guards nothing here: what this package refuses, a tenant who
// may only create MiniClusters cannot get. It is pure (no Crossplane, no
// client): function/ asks the cluster for what a Decision names and
// reports the Decision, and decides nothing itself.
//
// Nothing is trusted because it exists. Crossplane observes whatever the
// composite's resource references name, and a tenant writes those; an
// object is this MiniCluster's only when this composite controls it, in
// its namespace, for its claim (Trusted). Only its own Job, rendered from
// the spec it was admitted with, is kept as it runs, and judged on its
// size alone; every object composed new in a run is judged in full.
//
// A run calls, in order:
//   - Composite, before the spec is read: a composite that pins its own
//     revision of the Composition (and of its policy), or a claim-shape
//     composite that no claim made;
//   - Enforce, on the defaulted MiniCluster before it is planned: what the
//     platform sets on every pod (tolerations, node selector, deadline,
//     Kueue queue);
//   - Trusted, on what Crossplane observes: the MiniCluster's own objects,
//     and its Kueue-admitted size (Trust.AdmittedSize, a plan fact);
//   - Decide, on the plan and the rendered objects: observed objects that
//     are not its own, the size, the policy on the spec (Check), the
//     ServiceAccount and Secrets it names and the namespace's NodePort
//     label (Needs, CheckCluster), names another object holds (Conflict),
//     and Pod Security on the pods it would create (the API server's own
//     library, internal/podsecurity).
//
// Where the code is: policy.go holds the policy's checks of the spec and
// of the cluster's objects; metadata.go the label, annotation and Kueue
// keys; trust.go what is observed; conflict.go and podsecurity.go say why
// a name or a pod is refused; composite.go the composite's own fields.
// It reads a Secret's labels and controller only: never its data.
package admission
