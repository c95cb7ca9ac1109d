package badclaims

// redTeamCases: what the kubelet and Flux refuse, quoting, NUL bytes and sizes.
func redTeamCases() []Case {
	return []Case{
		// ------------------------------------------------ red team (what the kubelet and Flux refuse)
		fn("image-uppercase", `spec.containers[0].image: Invalid value: "Rockylinux:9": is not an image reference the kubelet can pull`,
			"The kubelet parses images as Docker references: a capital in the repository leaves the pods in InvalidImageName.",
			runner("image", "Rockylinux:9")),
		fn("image-inner-space", `spec.containers[0].image: Invalid value: "rocky linux:9": is not an image reference the kubelet can pull`,
			"The API server only refuses surrounding whitespace; the kubelet refuses any.",
			runner("image", "rocky linux:9")),
		fn("view-image-short-digest", `spec.flux.container.image: Invalid value: "ghcr.io/converged-computing/flux-view-ubuntu@sha256:abc": is not an image reference the kubelet can pull`,
			"A digest is an algorithm and its full hexadecimal value.",
			set("spec.flux.container.image", "ghcr.io/converged-computing/flux-view-ubuntu@sha256:abc")),
		fn("service-image-uppercase", `spec.services[0].image: Invalid value: "Postgres": is not an image reference the kubelet can pull`,
			"The services Pod would never start either.",
			service(container("db", "image", "Postgres"))),
		fn("flux-environment-script-variable", `spec.flux.environment[configroot]: Invalid value: "configroot": is a variable of the brokers' entrypoint script`,
			"flux.environment is exported in the runner script: configroot=/x would point flux start at a configuration that does not exist.",
			set("spec.flux.environment", obj("configroot", "/x"))),
		fn("brokerconfig-without-bootstrap", `spec.flux.brokerConfig: Required value: [bootstrap] lists no hosts, so Flux would start each of the up to 4 brokers as an instance of its own`,
			"Without [bootstrap] hosts every broker is a singleton: the lead runs the job alone and the followers never join.",
			set("spec.flux.brokerConfig", "[access]\nallow-guest-user = true\n")),
		fn("brokerconfig-port-out-of-range", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [bootstrap] default_port is 70000, which is not a TCP port`,
			"default_port is the port of every bind and connect URI.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", bootstrapTOMLWithoutPort(n, "default_port = 70000\nhosts = [ { host = \""+n+"-[0-3]\" } ]"))
			})),
		fn("runasnonroot-container-uid0", "spec.containers[0].securityContext.runAsUser: Invalid value: 0: spec.pod.securityContext.runAsNonRoot is set, and the kubelet refuses to start a container as uid 0",
			"The container's uid overrides the pod's, and the kubelet checks it against runAsNonRoot.",
			set("spec.pod.securityContext", obj("runAsNonRoot", true, "runAsUser", int64(1000))),
			runner("securityContext", obj("runAsUser", int64(0)))),
		fn("runasnonroot-view-as-root", "spec.pod.securityContext.runAsNonRoot: Invalid value: true: the Flux view image ghcr.io/converged-computing/flux-view-ubuntu:tag-noble (the init container) runs as root",
			"Without a uid the init container runs as its image's user, root, which runAsNonRoot forbids.",
			set("spec.pod.securityContext", obj("runAsNonRoot", true))),
		fn("dns-policy-default", `spec.pod.dnsPolicy: Invalid value: "Default": gives the pods the node's DNS resolver, which cannot resolve the names the brokers connect to`,
			"The brokers connect to each other by cluster DNS names.",
			set("spec.pod.dnsPolicy", "Default")),
		schema("volume-path-element-too-long", `spec.containers[0].volumes[data].path: Invalid value: …has an element (between two '/') of more than 255 bytes`,
			"Linux cannot create the mount point: the container would never start.",
			volume("data", obj("emptyDir", true, "path", "/"+long(256)))),
		fn("resource-quota-name", `spec.containers[0].resources.limits[requests.example.com/gpu]: Invalid value: "requests.example.com/gpu": must be a resource name such as cpu, memory or vendor.example/gpu: must not start with requests.`,
			"Kubernetes keeps requests.<name> for quotas and refuses it as a container's resource.",
			runner("resources", obj("limits", obj("requests.example.com/gpu", int64(1))))),
		fn("brokerconfig-one-entry-without-curve-cert", `spec.flux.brokerConfig: Required value: [bootstrap] lists more than one host without curve_cert`,
			"flux-core 0.88 counts the hosts after expanding the host lists: one entry of four hosts needs the certificate too.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", "[bootstrap]\ndefault_port = 8050\ndefault_bind = \"tcp://eth0:%p\"\ndefault_connect = \"tcp://%h."+n+":%p\"\nhosts = [ { host = \""+n+"-[0-3]\" } ]\n")
			})),
		fn("brokerconfig-host-underscore", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [bootstrap] hosts[1].host has the host "login_node", which Flux refuses`,
			"flux-core checks every host as a DNS name.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", bootstrapTOML(n, `hosts = [ { host = "`+n+`-[0-3]" }, { host = "login_node" } ]`))
			})),
		fn("brokerconfig-unknown-parent", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [bootstrap] hosts[1].parent "nobody" is not a host of the list`,
			"flux-core refuses a parent key that names no host.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", bootstrapTOML(n, `hosts = [ { host = "`+n+`-0" }, { host = "`+n+`-[1-3]", parent = "nobody" } ]`))
			})),
		fn("brokerconfig-bind-not-uri", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [bootstrap] default_bind "eth0" has no URI scheme`,
			"flux-core checks bind and connect URIs.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", "[bootstrap]\ncurve_cert = \"/mnt/flux/config/curve/curve.cert\"\ndefault_port = 8050\ndefault_bind = \"eth0\"\ndefault_connect = \"tcp://%h."+n+":%p\"\nhosts = [ { host = \""+n+"-[0-3]\" } ]\n")
			})),
		fn("brokerconfig-port-token-without-port", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [bootstrap] default_bind "tcp://eth0:%p" has %p, the default_port, which [bootstrap] does not set`,
			"Without default_port Flux writes -1 for %p.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", bootstrapTOMLWithoutPort(n, `hosts = [ { host = "`+n+`-[0-3]" } ]`))
			})),
		fn("hostlist-underscore", `spec.flux.bursting.hostlist: Invalid value: "{name}-[0-3],login_node": has the host "login_node", which Flux refuses`,
			"The host list becomes broker.toml's [bootstrap] hosts, which flux-core checks as DNS names.",
			named(func(n string) mutation { return set("spec.flux.bursting.hostlist", n+"-[0-3],login_node") })),
		fn("topology-k-too-large", `spec.flux.topology: Invalid value: "kary:99999999999999999999": has a k too large for Flux`,
			"flux-core reads k with strtoul: past 64 bits the broker refuses to start.",
			set("spec.flux.topology", "kary:99999999999999999999")),
		fn("brokerconfig-access-unknown-key", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [access] has key "allow-guests", which Flux refuses`,
			"connector-local refuses unknown [access] keys, and rc1 then stops the broker.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", "[access]\nallow-guests = true\n\n"+bootstrapTOML(n, `hosts = [ { host = "`+n+`-[0-3]" } ]`))
			})),
		fn("brokerconfig-tbon-type", `spec.flux.brokerConfig: Invalid value: "<broker.toml>": [tbon] zmqdebug is a boolean, and Flux refuses anything but an integer`,
			"The overlay module unpacks [tbon] keys by type.",
			named(func(n string) mutation {
				return set("spec.flux.brokerConfig", "[tbon]\nzmqdebug = true\n\n"+bootstrapTOML(n, `hosts = [ { host = "`+n+`-[0-3]" } ]`))
			})),
		fn("volume-items-nested", `spec.containers[0].volumes[cfg].items[b]: Invalid value: "conf/app.ini": is inside the path of item a, a file`,
			"The kubelet cannot write a file and a file under it: the pods would wait for the volume forever.",
			volume("cfg", obj("configMapName", "cfg", "path", "/cfg", "items", obj("a", "conf", "b", "conf/app.ini")))),
		fn("connecttimeout-past-zeromq", `spec.flux.connectTimeout: Invalid value: "30d": is longer than ZeroMQ's limit`,
			"The overlay hands ZeroMQ the timeout as int milliseconds: past 24 days it overflows and the followers cannot connect.",
			set("spec.flux.connectTimeout", "30d")),
		fn("volume-over-usr", `spec.containers[0].volumes[tools].path: Invalid value: "/usr": would hide the image's /usr, where /bin/bash and its libraries live`,
			"bash runs the runner's entrypoint: without it the broker never starts.",
			volume("tools", obj("configMapName", "tools", "path", "/usr"))),
		schema("workingdir-element-too-long", `spec.containers[0].workingDir: Invalid value: …has an element (between two '/') of more than 255 bytes`,
			"The container runtime creates a missing working directory, and cannot with such a name.",
			runner("workingDir", "/w/"+long(256))),

		// ------------------------------------------------ commands (quoting)
		fn("command-unbalanced-double-quote", `spec.containers[0].command: Invalid value: "echo \"hello": a quote is not closed: close every quote, or escape a lone quote with a backslash`,
			"An open quote would break or inject into the script.",
			runner("command", `echo "hello`)),
		fn("command-unbalanced-single-quote", `spec.containers[0].command: Invalid value: "echo 'hello": a quote is not closed`,
			"An open quote would break or inject into the script.",
			runner("command", `echo 'hello`)),
		fn("command-trailing-backslash", `spec.containers[0].command: Invalid value: "echo \\": the string ends with a backslash: remove it, or write \\ for a literal backslash`,
			"A trailing backslash escapes nothing.",
			runner("command", `echo \`)),
		fn("prefix-unbalanced-quote", `spec.containers[0].commands.prefix: Invalid value: "time -f \"%e": a quote is not closed`,
			"The prefix is split into words like the command.",
			runner("commands", obj("prefix", `time -f "%e`))),
		fn("submitcommand-unbalanced-quote", `spec.flux.submitCommand: Invalid value: "flux submit --setattr='a b": a quote is not closed`,
			"submitCommand is split into words.",
			set("spec.flux.submitCommand", "flux submit --setattr='a b")),
		fn("submitcommand-blank", `spec.flux.submitCommand: Invalid value: "   ": names no command`,
			"A blank submitCommand submits nothing.",
			set("spec.flux.submitCommand", "   ")),
		fn("optionflags-unbalanced-quote", `spec.flux.optionFlags: Invalid value: "--setattr=\"a b": a quote is not closed`,
			"optionFlags are split into words.",
			set("spec.flux.optionFlags", `--setattr="a b`)),
		fn("batch-multiline-quote", `spec.containers[0].command: Invalid value: "echo \"one": line 1: a quote is not closed: close every quote, or escape a lone quote with a backslash; in batch mode each line is one job`,
			"In batch mode each line is one job, so a quote cannot span lines.",
			runner("batch", true), runner("command", "echo \"one\ntwo\"\n")),

		// ------------------------------------------------ NUL bytes, size
		fn("nul-in-command", `spec.containers[0].command: Invalid value: "<contains NUL>": must not contain a NUL byte`,
			"A NUL byte cannot reach a script intact.",
			runner("command", "echo a\x00b")),
		fn("nul-in-flux-environment", `spec.flux.environment[A]: Invalid value: "<contains NUL>": must not contain a NUL byte`,
			"Values are exported by a script.",
			set("spec.flux.environment", obj("A", "x\x00"))),
		fn("nul-in-annotation", `spec.pod.annotations[note]: Invalid value: "<contains NUL>": must not contain a NUL byte`,
			"A NUL byte in any string of the spec.",
			set("spec.pod.annotations", obj("note", "a\x00b"))),
		fn("hooks-over-1mib", "spec.containers: Invalid value: \"<scripts>\": the scripts and hooks of spec.containers (commands, command, brokerConfig) add up to",
			"The scripts live in one ConfigMap, which Kubernetes caps at 1 MiB.",
			runner("commands", obj("init", hook(), "pre", hook(), "brokerPre", hook(), "workerPre", hook(), "post", hook())),
			sidecar(container("a", "commands", obj("init", hook(), "servicePre", hook(), "post", hook(), "script", hook()))),
			sidecar(container("b", "commands", obj("init", hook(), "servicePre", hook(), "post", hook(), "script", hook()))),
			sidecar(container("c", "commands", obj("init", hook(), "servicePre", hook(), "post", hook(), "script", hook())))),
	}
}
