package entrypoint

import (
	"path"
	"strconv"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Where the pods find what the MiniCluster mounts for them. The Job's
// volume mounts and the scripts must agree on these, so both take them
// from here.
const (
	// Dir holds the entrypoint ConfigMap's files.
	Dir = "/flux_operator"
	// CurveDir holds the CURVE certificate Secret's file.
	CurveDir = "/mnt/curve"
	// CurveFile is the certificate's file name: its key in the Secret
	// (v1alpha2.CurveCertKey), which the volume projects as a file of the
	// same name.
	CurveFile = v1alpha2.CurveCertKey
	// SoftwareDir is where the view image keeps its spack software tree.
	// The view's binaries carry rpaths into it, so every container that
	// runs them gets the copied tree mounted at this very path.
	SoftwareDir = "/opt/software"
	// HomeDir is the home of a user without one.
	HomeDir = "/home/flux-operator"
	// TerminationLog is the container's termination message file
	// (terminationMessagePath's default).
	TerminationLog = "/dev/termination-log"

	// Keys of the entrypoint ConfigMap. broker.toml and hostlist keep
	// their key as their file name when the init container installs them.
	BrokerConfigKey = "broker.toml"
	HostlistKey     = "hostlist"
	InitKey         = "flux-init.sh"
)

// Paths the images bring, which no volume provides.
const (
	// imageView is the Flux view in a view image (and in an application
	// image that brings Flux itself).
	imageView = "/opt/view"
	// timeBin is what logging.timed wraps flux with; the application image
	// must bring it.
	timeBin = "/usr/bin/time"
	// customScript holds commands.script: /tmp is writable for any user,
	// the working directory and the view volume's root may not be.
	customScript = "/tmp/custom-entrypoint.sh"
)

// localURI prefixes the socket to make Flux's URI of a local broker.
const localURI = "local://"

// RunnerKey is the ConfigMap key of the runner script of container i.
func RunnerKey(i int) string { return "wait-" + strconv.Itoa(i) + ".sh" }

// SidecarKey is the ConfigMap key of the wrapper of container i.
func SidecarKey(i int) string { return "start-" + strconv.Itoa(i) + ".sh" }

// Paths are the fixed places the pods mount things at, apart so that tests
// can point them into a temporary directory and run the scripts outside a
// pod.
type Paths struct {
	// Entrypoints holds the entrypoint ConfigMap's files (Dir).
	Entrypoints string
	// Curve holds the CURVE certificate Secret's file (CurveDir).
	Curve string
	// Software receives the view's spack tree (SoftwareDir).
	Software string
	// Home is the home of a user without one (HomeDir).
	Home string
	// TerminationLog is where the lead says why its job failed (TerminationLog).
	TerminationLog string
}

// DefaultPaths are the paths in a MiniCluster's pods.
var DefaultPaths = Paths{Entrypoints: Dir, Curve: CurveDir, Software: SoftwareDir, Home: HomeDir, TerminationLog: TerminationLog}

// orDefault fills every path left empty from DefaultPaths: a Layout made
// only from a mount path (as the Job's probe makes one) is a pod's.
func (p Paths) orDefault() Paths {
	for _, f := range []struct {
		v *string
		d string
	}{
		{&p.Entrypoints, DefaultPaths.Entrypoints}, {&p.Curve, DefaultPaths.Curve}, {&p.Software, DefaultPaths.Software},
		{&p.Home, DefaultPaths.Home}, {&p.TerminationLog, DefaultPaths.TerminationLog},
	} {
		if *f.v == "" {
			*f.v = f.d
		}
	}
	return p
}

// Layout is every path a MiniCluster's pods use: those under the Flux view
// volume, which follow its mount path, and the fixed ones.
type Layout struct {
	// MountPath is where the Flux view volume is mounted
	// (spec.flux.container.mountPath).
	MountPath string
	// Fixed are the fixed paths; DefaultPaths where empty.
	Fixed Paths
}

// fixed are l's fixed paths with the pod's for those left empty.
func (l Layout) fixed() Paths { return l.Fixed.orDefault() }

// Entrypoint is the entrypoint ConfigMap's file of key, where the
// containers run it from.
func (l Layout) Entrypoint(key string) string { return path.Join(l.fixed().Entrypoints, key) }

// CurveSecret is the certificate as the Secret mounts it: readable by
// group and others, so Flux refuses it and the runner installs a copy.
func (l Layout) CurveSecret() string { return path.Join(l.fixed().Curve, CurveFile) }

// Config is <mp>/config, the install root of the generated configuration.
func (l Layout) Config() string { return l.abs(configRoot) }

// View is <mp>/view, where the init container copies the Flux view.
func (l Layout) View() string { return l.abs(viewRoot) }

// ConfigDir holds broker.toml.
func (l Layout) ConfigDir() string { return l.abs(configDir) }

// SystemDir holds the hostlist, R and cron.d.
func (l Layout) SystemDir() string { return l.abs(systemDir) }

// Resources is R, the resource set the runner encodes and broker.toml
// points Flux at.
func (l Layout) Resources() string { return l.abs(resourcesFile) }

// RunDir is the brokers' rundir.
func (l Layout) RunDir() string { return l.abs(runDir) }

// StateDir is the brokers' statedir.
func (l Layout) StateDir() string { return l.abs(stateDir) }

// JobArchive is the job-archive module's database. It lives in the statedir,
// the one directory the brokers' user is sure to own and write.
func (l Layout) JobArchive() string { return l.abs(jobArchive) }

// Socket is the broker's local socket, the one sidecars and probes wait for.
func (l Layout) Socket() string { return l.abs(socket) }

// CurveCert is where the runner installs the certificate for broker.toml.
func (l Layout) CurveCert() string { return l.abs(curveCert) }

// BatchFile is the lead's batch script, in the view volume: the container's
// working directory may not be writable for its user.
func (l Layout) BatchFile() string { return l.abs(batchFile) }

// A spot is a path in the view volume, relative to one of the places the
// scripts keep in a variable (mp, configroot, viewroot). Each path is
// spelled once, below; Go code joins it to the mount path (broker.toml, -S
// options, the probe) and the scripts to their variable, so a user's mount
// path appears in a script only where it is assigned, quoted.
type spot struct {
	base base
	rel  string
}

// base is what a spot is relative to.
type base int

const (
	atMount base = iota
	atConfig
	atView
)

// The view volume.
var (
	configRoot    = spot{atMount, "config"}
	viewRoot      = spot{atMount, "view"}
	softwareCopy  = spot{atMount, "software"}
	viewScript    = spot{atMount, "flux-view.sh"}
	connectScript = spot{atMount, "flux-connect.sh"}
	fluxionScript = spot{atMount, "load-fluxion.sh"}
	batchFile     = spot{atMount, "flux-job.batch"}
	// initDone and runnerDone mark that the init container and the
	// runner finished, as the Flux Operator's pods did.
	initDone   = spot{atMount, "flux-operator-done.txt"}
	runnerDone = spot{atMount, "flux-operator-complete.txt"}

	configDir        = spot{atConfig, "etc/flux/config"}
	brokerConfigFile = configDir.join(BrokerConfigKey)
	systemDir        = spot{atConfig, "etc/flux/system"}
	cronDir          = systemDir.join("cron.d")
	hostlistFile     = systemDir.join(HostlistKey)
	resourcesFile    = systemDir.join("R")
	// runParent and stateParent are made writable by the init container
	// for the runner, whose user must own the rundir and statedir in them.
	runParent   = spot{atConfig, "run"}
	runDir      = runParent.join("flux")
	socket      = runDir.join("local")
	stateParent = spot{atConfig, "var/lib"}
	stateDir    = stateParent.join("flux")
	jobArchive  = stateDir.join("job-archive.sqlite")
	curveDir    = spot{atConfig, "curve"}
	curveCert   = curveDir.join(CurveFile)

	viewBin = spot{atView, "bin"}
	viewLib = spot{atView, "lib"}
	// viewRC is where Flux finds the view's rc1.d, which loads fluxion.
	viewRC = spot{atView, "etc/flux"}
)

// variable is the shell variable a script holds b in.
func (b base) variable() string {
	switch b {
	case atConfig:
		return "configroot"
	case atView:
		return "viewroot"
	default:
		return "mp"
	}
}

// spot is where b is, relative to the mount path.
func (b base) spot() spot {
	switch b {
	case atConfig:
		return configRoot
	case atView:
		return viewRoot
	default:
		return spot{atMount, "."}
	}
}

func (s spot) join(elem string) spot { return spot{s.base, path.Join(s.rel, elem)} }

// abs is s in the pod.
func (l Layout) abs(s spot) string {
	if s.base == atMount {
		return path.Join(l.MountPath, s.rel)
	}
	return path.Join(l.abs(s.base.spot()), s.rel)
}

// sh is s as one word of a script: "${configroot}/run/flux".
func (s spot) sh() string { return `"` + s.bare() + `"` }

// bare is s for inside a double-quoted string: ${configroot}/run/flux.
func (s spot) bare() string { return "${" + s.base.variable() + "}/" + s.rel }

// glob is s followed by a glob pattern, which must stay unquoted to expand:
// "${mp}"/software/*.
func (s spot) glob(pattern string) string {
	return `"${` + s.base.variable() + `}"/` + s.rel + "/" + pattern
}

// assign is the line that sets the variable of atConfig or atView from mp,
// so that a script spells the mount path once: configroot="${mp}/config".
func assign(b base) string { return b.variable() + "=" + b.spot().sh() }
