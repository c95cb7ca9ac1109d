package entrypoint

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

func TestLayout(t *testing.T) {
	cases := map[string]struct {
		reason string
		layout Layout
		want   map[string]string
	}{
		"DefaultMountPath": {
			reason: "Everything Flux keeps lives under the view volume's mount path.",
			layout: Layout{MountPath: "/mnt/flux"},
			want: map[string]string{
				"Config":     "/mnt/flux/config",
				"View":       "/mnt/flux/view",
				"ConfigDir":  "/mnt/flux/config/etc/flux/config",
				"SystemDir":  "/mnt/flux/config/etc/flux/system",
				"Resources":  "/mnt/flux/config/etc/flux/system/R",
				"RunDir":     "/mnt/flux/config/run/flux",
				"StateDir":   "/mnt/flux/config/var/lib/flux",
				"JobArchive": "/mnt/flux/config/var/lib/flux/job-archive.sqlite",
				"Socket":     "/mnt/flux/config/run/flux/local",
				"CurveCert":  "/mnt/flux/config/curve/curve.cert",
				"BatchFile":  "/mnt/flux/flux-job.batch",
			},
		},
		"OtherMountPath": {
			reason: "A mount path with a trailing slash gives the same clean paths.",
			layout: Layout{MountPath: "/opt/flux/"},
			want: map[string]string{
				"Config":     "/opt/flux/config",
				"View":       "/opt/flux/view",
				"ConfigDir":  "/opt/flux/config/etc/flux/config",
				"SystemDir":  "/opt/flux/config/etc/flux/system",
				"Resources":  "/opt/flux/config/etc/flux/system/R",
				"RunDir":     "/opt/flux/config/run/flux",
				"StateDir":   "/opt/flux/config/var/lib/flux",
				"JobArchive": "/opt/flux/config/var/lib/flux/job-archive.sqlite",
				"Socket":     "/opt/flux/config/run/flux/local",
				"CurveCert":  "/opt/flux/config/curve/curve.cert",
				"BatchFile":  "/opt/flux/flux-job.batch",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := tc.layout
			got := map[string]string{
				"Config":     l.Config(),
				"View":       l.View(),
				"ConfigDir":  l.ConfigDir(),
				"SystemDir":  l.SystemDir(),
				"Resources":  l.Resources(),
				"RunDir":     l.RunDir(),
				"StateDir":   l.StateDir(),
				"JobArchive": l.JobArchive(),
				"Socket":     l.Socket(),
				"CurveCert":  l.CurveCert(),
				"BatchFile":  l.BatchFile(),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLayoutFixed(t *testing.T) {
	type fixed struct {
		Paths       Paths
		Entrypoint  string
		Certificate string
	}
	cases := map[string]struct {
		reason string
		layout Layout
		want   fixed
	}{
		"Pod": {
			reason: "A Layout made from a mount path alone (as the Job's probe makes one) has the pod's fixed paths.",
			layout: Layout{MountPath: "/mnt/flux"},
			want: fixed{
				Paths:       Paths{Entrypoints: Dir, Curve: CurveDir, Software: SoftwareDir, Home: HomeDir, TerminationLog: TerminationLog},
				Entrypoint:  "/flux_operator/flux-init.sh",
				Certificate: "/mnt/curve/curve.cert",
			},
		},
		"Relocated": {
			reason: "Tests relocate some fixed paths; the others stay the pod's.",
			layout: Layout{MountPath: "/mnt/flux", Fixed: Paths{Curve: "/tmp/c", Home: "/tmp/h"}},
			want: fixed{
				Paths:       Paths{Entrypoints: Dir, Curve: "/tmp/c", Software: SoftwareDir, Home: "/tmp/h", TerminationLog: TerminationLog},
				Entrypoint:  "/flux_operator/flux-init.sh",
				Certificate: "/tmp/c/curve.cert",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fixed{Paths: tc.layout.fixed(), Entrypoint: tc.layout.Entrypoint(InitKey), Certificate: tc.layout.CurveSecret()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSpotSpellings checks the two ways the scripts name a path in the view
// volume: through their variables, and the same path in Go.
func TestSpotSpellings(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"AssignConfig": {
			reason: "configroot follows mp.",
			got:    assign(atConfig),
			want:   `configroot="${mp}/config"`,
		},
		"AssignView": {
			reason: "viewroot follows mp.",
			got:    assign(atView),
			want:   `viewroot="${mp}/view"`,
		},
		"Word": {
			reason: "A path as one word of a command is double-quoted.",
			got:    socket.sh(),
			want:   `"${configroot}/run/flux/local"`,
		},
		"Bare": {
			reason: "A path inside a longer double-quoted string is bare.",
			got:    viewBin.bare(),
			want:   `${viewroot}/bin`,
		},
		"Glob": {
			reason: "A glob stays outside the quotes, so it expands.",
			got:    softwareCopy.glob("*"),
			want:   `"${mp}"/software/*`,
		},
		"Join": {
			reason: "A spot joined with a name stays relative to its base.",
			got:    curveCert.sh(),
			want:   `"${configroot}/curve/curve.cert"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSpotsAgreeWithLayout runs the scripts' spelling of every spot
// through bash: a script must reach the very file Go names, whatever the
// mount path.
func TestSpotsAgreeWithLayout(t *testing.T) {
	bash := tool(t, "bash", "")
	// Every spot of layout.go.
	spots := map[string]spot{
		"configRoot": configRoot, "viewRoot": viewRoot, "softwareCopy": softwareCopy,
		"viewScript": viewScript, "connectScript": connectScript, "fluxionScript": fluxionScript,
		"batchFile": batchFile, "initDone": initDone, "runnerDone": runnerDone,
		"configDir": configDir, "brokerConfigFile": brokerConfigFile, "systemDir": systemDir,
		"cronDir": cronDir, "hostlistFile": hostlistFile, "resourcesFile": resourcesFile,
		"runParent": runParent, "runDir": runDir, "socket": socket,
		"stateParent": stateParent, "stateDir": stateDir, "jobArchive": jobArchive,
		"curveDir": curveDir, "curveCert": curveCert,
		"viewBin": viewBin, "viewLib": viewLib, "viewRC": viewRC,
	}
	cases := map[string]struct {
		reason string
		mp     string
	}{
		"Default": {reason: "The default mount path.", mp: "/mnt/flux"},
		"Spaces":  {reason: "A mount path with a space and a quote is one word to the scripts.", mp: "/mnt/my flux's view"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := Layout{MountPath: tc.mp}
			var script strings.Builder
			script.WriteString("mp=" + shell.Quote(tc.mp) + "\n" + assign(atConfig) + "\n" + assign(atView) + "\n")
			want := map[string]string{}
			for n, s := range spots {
				want[n] = l.abs(s)
				script.WriteString("printf '%s=%s\\n' " + shell.Quote(n) + " " + s.sh() + "\n")
			}
			out, err := exec.Command(bash, "-c", script.String()).Output()
			if err != nil {
				t.Fatalf("bash: %v", err)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				k, v, _ := strings.Cut(line, "=")
				got[k] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nwhat bash makes of the scripts' spelling, -Layout, +bash:\n%s", tc.reason, diff)
			}
		})
	}
}
