package entrypoint

// Prepare (commands.go): a runner's command strings split into words once,
// with errors that name their field.

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestPrepare(t *testing.T) {
	quoteHint := "close every quote"
	cases := map[string]struct {
		reason  string
		command string
		mutate  func(mc *v1alpha2.MiniCluster)
		want    Commands
		fields  []string // of the errors, in order
		detail  []string // in the errors' messages
	}{
		"Submit": {
			reason:  "A command, a prefix and optionFlags become words; flux submit is the default submit command; size 2 with one task gives -n1.",
			command: `echo "hello world" '$HOME'`,
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Commands.Prefix = "mpirun -x A"
				mc.Spec.Flux.OptionFlags = `-o "x=1 2"`
				mc.Spec.Logging.Debug = true
			},
			want: Commands{
				Command: words("echo", "hello world", "$HOME"),
				Prefix:  words("mpirun", "-x", "A"),
				Submit:  words("flux", "submit"),
				Flags:   words("-n1", "-o", "x=1 2", "-vvv"),
			},
		},
		"SubmitCommand": {
			reason:  "submitCommand replaces flux submit, as words.",
			command: "hostname",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.SubmitCommand = "flux  run --label='a b'" },
			want:    Commands{Command: words("hostname"), Submit: words("flux", "run", "--label=a b"), Flags: words("-n1")},
		},
		"Batch": {
			reason:  "Batch mode: every non-blank line is a job of its own words; blank lines count in the job numbers; there is no single command.",
			command: "echo 'a b'\n\n   \necho $(x) ; y\n",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Batch = true },
			want: Commands{
				Batch:  []BatchJob{{Line: 0, Words: words("echo", "a b")}, {Line: 3, Words: words("echo", "$(x)", ";", "y")}},
				Submit: words("flux", "submit"),
				Flags:  words("-n1"),
			},
		},
		"BatchRaw": {
			reason:  "batchRaw lines are shell code, not words: apostrophes in comments and heredocs are fine.",
			command: "# don't split\ncat <<EOF\nit's\nEOF\n",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].BatchRaw = true
			},
			want: Commands{Submit: words("flux", "submit"), Flags: words("-n1")},
		},
		"Script": {
			reason: "commands.script is shell code; nothing of it is split.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Commands.Script = "echo 'unclosed"
				mc.Spec.Containers[0].Batch = true
			},
			want: Commands{Submit: words("flux", "submit"), Flags: words("-n1")},
		},
		"TasksEqualSize": {
			reason:  "tasks == size gives -N <size> -n<tasks>.",
			command: "x",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Tasks = ptrTo(int32(2)) },
			want:    Commands{Command: words("x"), Submit: words("flux", "submit"), Flags: words("-N", "2", "-n2")},
		},
		"TasksZero": {
			reason:  "tasks 0 gives -N <size>.",
			command: "x",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Tasks = ptrTo(int32(0)) },
			want:    Commands{Command: words("x"), Submit: words("flux", "submit"), Flags: words("-N", "2")},
		},

		"Command": {
			reason:  "An open quote in the command names the command and the fix.",
			command: `echo "hello`,
			fields:  []string{"spec.containers[0].command"},
			detail:  []string{quoteHint},
		},
		"CommandSingle": {reason: "An open single quote too.", command: `echo it's`, fields: []string{"spec.containers[0].command"}, detail: []string{quoteHint}},
		"CommandBackslash": {
			reason:  "A trailing backslash says so.",
			command: `echo \`,
			fields:  []string{"spec.containers[0].command"},
			detail:  []string{"backslash"},
		},
		"OptionFlags": {reason: "An open quote in optionFlags names optionFlags.", command: "x", mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.OptionFlags = `-o "x` }, fields: []string{"spec.flux.optionFlags"}},
		"Prefix":      {reason: "An open quote in the prefix names the prefix.", command: "x", mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Commands.Prefix = `mpirun '` }, fields: []string{"spec.containers[0].commands.prefix"}},
		"SubmitCommandQuote": {
			reason:  "An open quote in submitCommand names it.",
			command: "x",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.SubmitCommand = `flux "submit` },
			fields:  []string{"spec.flux.submitCommand"},
		},
		"SubmitCommandBlank": {
			reason:  "A submitCommand of blanks would leave the job without a submitter.",
			command: "x",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.SubmitCommand = "  " },
			fields:  []string{"spec.flux.submitCommand"},
			detail:  []string{"names no command"},
		},
		"SecondContainer": {reason: "The index is the runner's.", mutate: secondRunner(`echo "x`), fields: []string{"spec.containers[1].command"}},
		"Several": {
			reason:  "Every bad field is reported at once.",
			command: `echo "x`,
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Commands.Prefix = `a'`
				mc.Spec.Flux.OptionFlags = `-o "x`
			},
			fields: []string{"spec.containers[0].command", "spec.containers[0].commands.prefix", "spec.flux.optionFlags"},
		},
		"BatchQuoteSpansLines": {
			reason:  "In batch mode a quote cannot span lines: each line is one job. The error names the command and the line.",
			command: "echo 'a\nb'",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Batch = true },
			fields:  []string{"spec.containers[0].command", "spec.containers[0].command"},
			detail:  []string{"line ", "batchRaw"},
		},
		"BatchLineUnclosed": {
			reason:  "The line of the open quote is named.",
			command: "echo a\n\necho 'b",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Batch = true },
			fields:  []string{"spec.containers[0].command"},
			detail:  []string{"line 3", quoteHint, `"echo 'b"`},
		},
		"BatchLineContinued": {
			reason:  "A backslash cannot continue a batch line either.",
			command: "echo a \\\n  b",
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Batch = true },
			fields:  []string{"spec.containers[0].command"},
			detail:  []string{"line 1", "backslash"},
		},
		"LongValue": {
			reason:  "A long bad value is not repeated in the message.",
			command: `echo "` + strings.Repeat("x", 10000),
			fields:  []string{"spec.containers[0].command"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := claim(2, tc.command, tc.mutate)
			got, errs := Prepare(mc, mc.Spec.Runner(), Plan{Size: mc.Spec.SizeValue(), Tasks: mc.Spec.TasksValue()})
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
				for _, d := range tc.detail {
					if !strings.Contains(e.Error(), d) {
						t.Errorf("%s\nthe message must say %q: %s", tc.reason, d, e.Error())
					}
				}
				if len(e.Error()) > 1000 {
					t.Errorf("%s\nthe message is too long to read (%d bytes)", tc.reason, len(e.Error()))
				}
			}
			if diff := cmp.Diff(tc.fields, fields); diff != "" {
				t.Errorf("%s\nfields of the errors: -want, +got:\n%s\n%v", tc.reason, diff, errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nPrepare(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func secondRunner(command string) func(mc *v1alpha2.MiniCluster) {
	return func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Name: "side", Command: "sleep 1"}, {Name: "app", Command: command, RunFlux: true}}
	}
}
