package shell

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSplit(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   []string
		err    error
	}{
		"Plain":        {reason: "Words split on blanks.", in: "echo hello world", want: []string{"echo", "hello", "world"}},
		"Newlines":     {reason: "Newlines separate words too.", in: "echo\nhello\tworld ", want: []string{"echo", "hello", "world"}},
		"Empty":        {reason: "No words.", in: "  ", want: nil},
		"DoubleQuotes": {reason: "Double quotes keep blanks.", in: `bash -c "echo hi && ls"`, want: []string{"bash", "-c", "echo hi && ls"}},
		"SingleQuotes": {reason: "Single quotes keep everything.", in: `echo '$HOME "x"'`, want: []string{"echo", `$HOME "x"`}},
		"Dollar":       {reason: "Nothing expands.", in: "echo $HOME `id` *", want: []string{"echo", "$HOME", "`id`", "*"}},
		"Escapes":      {reason: "Backslashes escape.", in: `a\ b "c\"d" e\\f`, want: []string{"a b", `c"d`, `e\f`}},
		"Joined":       {reason: "Quoted parts join into one word.", in: `--x="a b"c`, want: []string{"--x=a bc"}},
		"EmptyQuotes":  {reason: "An empty quoted word is a word.", in: `a "" b`, want: []string{"a", "", "b"}},
		"Unterminated": {reason: "An open quote is an error.", in: `echo "hi`, err: ErrUnterminatedQuote},
		"Trailing":     {reason: "A trailing backslash is an error.", in: `echo \`, err: ErrTrailingBackslash},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Split(tc.in)
			if diff := cmp.Diff(tc.err, err, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("%s\nSplit(%q) error: -want, +got:\n%s", tc.reason, tc.in, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nSplit(%q): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}

// TestQuoteWithBash checks with a real bash that a quoted value comes back
// unchanged, however hostile.
func TestQuoteWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	values := []string{"", "plain", "two words", `it's`, `"double"`, "$HOME", "`id`", "$(id)", "a\nb", "*", `\`, "'; rm -rf / #", "--flag=x y", "é ü"}
	var script strings.Builder
	for _, v := range values {
		script.WriteString("printf '%s\\0' " + Quote(v) + "\n")
	}
	out, err := exec.Command(bash, "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if diff := cmp.Diff(values, got); diff != "" {
		t.Errorf("quoted values did not survive bash: -want, +got:\n%s", diff)
	}
}

// TestSplitAgreesWithBash checks Split against bash's own word splitting for
// inputs without expansions.
func TestSplitAgreesWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for _, in := range []string{`echo hello world`, `bash -c "echo hi && ls"`, `a\ b "c\"d" e\\f`, `--x="a b"c`, `'x y' "" z`} {
		out, err := exec.Command(bash, "-c", "printf '%s\\0' "+in).Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		got, err := Split(in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Split(%q) disagrees with bash: -bash, +Split:\n%s", in, diff)
		}
	}
}
