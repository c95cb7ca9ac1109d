package entrypoint

import "strconv"

// Resources is what every broker offers Flux: the cores and GPUs of its
// resource set (R), the same on every rank. internal/plan decides it from
// the claim (spec.flux.resources and the runner's resources); the runner
// encodes it with flux R encode before the broker starts. The zero value is
// the node as hwloc sees it, what the Flux Operator encodes.
type Resources struct {
	// FromNode encodes the node's topology (flux R encode --local): cores
	// and GPUs as hwloc finds them. Cores and GPUs are then 0.
	FromNode bool
	// Cores of every broker, numbered from 0; 0 is the node's cores, as
	// hwloc counts them.
	Cores int
	// GPUs of every broker, numbered from 0 as the device plugin shows
	// them to the container.
	GPUs int
}

// local tells whether R is the node's topology as hwloc finds it.
func (r Resources) local() bool { return r.FromNode || (r.Cores <= 0 && r.GPUs <= 0) }

// idRange is an idset of n ids from 0 as flux's idset_decode takes it:
// "0", "0-3" (it refuses "0-0").
func idRange(n int) string {
	if n == 1 {
		return "0"
	}
	return "0-" + strconv.Itoa(n-1)
}

// encodeResources writes the runner's lines that write R: the resource set
// of every host of the instance, each with the cores and GPUs of r.
func encodeResources(s *script, l Layout, r Resources) {
	if r.local() {
		// Unchanged since the Flux Operator's scripts, so that a running
		// MiniCluster's ConfigMap stays as it was.
		s.line("# Resources: this pod's topology, replicated over every host of the instance.")
		s.line("hosts=$(cat %s)", hostlistFile.sh())
		s.line(`flux R encode --hosts="${hosts}" --local > %s`, resourcesFile.sh())
		return
	}
	s.line("# Resources: what this pod was given (the runner's CPU limit or request in")
	s.line("# whole cores, else the node's; its GPUs), the same on every host of the instance.")
	s.line("hosts=$(cat %s)", hostlistFile.sh())
	gpus := ""
	if r.GPUs > 0 {
		gpus = " --gpus=" + idRange(r.GPUs)
	}
	if r.Cores > 0 {
		s.line(`flux R encode --hosts="${hosts}" --cores=%s%s > %s`, idRange(r.Cores), gpus, resourcesFile.sh())
		return
	}
	s.line("# flux R encode takes --local or --cores and --gpus: count the node's cores first.")
	s.line(`nodeCores=$(flux R decode --count=core <<< "$(flux R encode --local)")`)
	s.line(`case "${nodeCores}" in`)
	s.in()
	s.line(`''|*[!0-9]*|0)`)
	s.in()
	failNow(s, l, "cannot count this node's cores with flux R encode --local: set a CPU limit on the runner, or spec.flux.resources: node")
	s.line(";;")
	s.out()
	s.line(`1) nodeCores=0 ;;`)
	s.line(`*) nodeCores="0-$((nodeCores - 1))" ;;`)
	s.out()
	s.line("esac")
	s.line(`flux R encode --hosts="${hosts}" --cores="${nodeCores}"%s > %s`, gpus, resourcesFile.sh())
}
