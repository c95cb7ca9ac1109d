package v1alpha2

// What the scripts and the programs around a MiniCluster read by name: the
// broker pods' entrypoint, the burst controller, and anyone who copies a
// MiniCluster's certificate. Each is said here once; everything that means
// it refers to it.

// BrokerPort is the port every broker binds for the overlay network, and the
// one place that says the number: everything that means it
// (DefaultLeadBrokerPort and through it the schema's default,
// brokerconfig.DefaultPort and through it the broker.toml, the Services and
// the port checks) derives from it. It is untyped so that each user reads it
// as its own integer type.
const BrokerPort = 8050

// CurveCertKey is the key of the CURVE certificate in a MiniCluster's
// <name>-curve-cert Secret, in a Secret spec.flux.curveCertSecret names, and
// in the burst controller's copy of the root's certificate; the broker pods
// mount it as a file of the same name.
const CurveCertKey = "curve.cert"
