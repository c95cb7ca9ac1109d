package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommands runs commands in-process, where no instance is needed.
func TestCommands(t *testing.T) {
	t.Setenv("FLUX_URI", "local:///nonexistent/local")
	cases := map[string]struct {
		reason   string
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		"Version": {
			reason:  "flux --version says what it is.",
			args:    []string{"--version"},
			wantOut: "flux-standin (test double of flux-core 0.88.0)\n",
		},
		"UnknownCommand": {
			reason:   "A command the double lacks fails, saying so.",
			args:     []string{"dump", "/tmp/x.tar"},
			wantErr:  "flux-standin: flux dump is not implemented by the test double\n",
			wantCode: 1,
		},
		"UnknownOption": {
			reason:   "An option the double lacks fails, saying so.",
			args:     []string{"submit", "--begin-time=+1h", "true"},
			wantErr:  "flux-standin: flux submit option --begin-time is not implemented by the test double\n",
			wantCode: 1,
		},
		"NoBroker": {
			reason:   "Without a broker at FLUX_URI, clients fail as Flux's do.",
			args:     []string{"jobs", "-a"},
			wantErr:  "flux-standin: flux-jobs: Unable to connect to Flux: broker socket /nonexistent/local was not found\n",
			wantCode: 1,
		},
		"BatchWithoutShebang": {
			reason:   "flux batch refuses a script without #!, as Flux does.",
			args:     []string{"batch", "-n1", "main_test.go"},
			wantErr:  "flux-standin: batch: ERROR: main_test.go does not appear to start with '#!'\n",
			wantCode: 1,
		},
		"REncode": {
			reason:  "flux R encode needs no broker.",
			args:    []string{"R", "encode", "--hosts=flux-sample-[0-1]"},
			wantOut: `{"version": 1, "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}], "starttime": 0.0, "expiration": 0.0, "nodelist": ["flux-sample-[0-1]"]}}` + "\n",
		},
		"StartNoTTY": {
			reason:   "Without initial program or rc2_none, rank 0 would run an interactive shell, which needs a terminal.",
			args:     []string{"start", "-Shostname=solo"},
			wantErr:  "flux-standin: flux-broker: stdin is not a tty - can't run interactive shell\n",
			wantCode: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, stdio{strings.NewReader(""), &out, &errb})
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("%s\nexit status: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("%s\nstdout: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantErr, errb.String()); diff != "" {
				t.Errorf("%s\nstderr: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseOpts(t *testing.T) {
	cases := map[string]struct {
		reason   string
		args     []string
		wantVals map[string][]string
		wantRest []string
	}{
		"Golden": {
			reason:   "The lead's submit: attached short values, a separate -N value, a clustered -vvv, then the command.",
			args:     []string{"-N", "2", "-n2", "-ompi=openmpi@5", "-vvv", "--quiet", "--watch", "echo", "-n", "hi"},
			wantVals: map[string][]string{"nodes": {"2"}, "ntasks": {"2"}, "setopt": {"mpi=openmpi@5"}, "verbose": {"", "", ""}, "quiet": {""}, "watch": {""}},
			wantRest: []string{"echo", "-n", "hi"},
		},
		"LongForms": {
			reason:   "--name=value and --name value.",
			args:     []string{"--setattr=user.origin=minicluster", "--flags", "waitable", "--", "-x"},
			wantVals: map[string][]string{"setattr": {"user.origin=minicluster"}, "flags": {"waitable"}},
			wantRest: []string{"-x"},
		},
	}
	table := append(append([]opt{}, jobOpts...), opt{0, "watch", false})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parseOpts("flux submit", table, tc.args)
			must(t, err)
			if diff := cmp.Diff(tc.wantVals, o.vals); diff != "" {
				t.Errorf("%s\nvalues: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantRest, o.rest); diff != "" {
				t.Errorf("%s\nrest: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
