package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/internal/hostlist"
)

// goldenScripts are the data of every ConfigMap of the render goldens
// (every example's scripts and broker.toml), by golden and key.
func goldenScripts(t *testing.T) map[string]map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../render/testdata/*.golden.yaml")
	must(t, err)
	if len(files) == 0 {
		t.Fatal("no render goldens found")
	}
	out := map[string]map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		must(t, err)
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var o struct {
				Kind string            `json:"kind"`
				Data map[string]string `json:"data"`
			}
			if yaml.Unmarshal([]byte(doc), &o) != nil || o.Kind != "ConfigMap" {
				continue
			}
			name := strings.TrimSuffix(filepath.Base(f), ".golden.yaml")
			if out[name] == nil {
				out[name] = map[string]string{}
			}
			for k, v := range o.Data {
				out[name][k] = v
			}
		}
	}
	return out
}

// TestGoldenBrokerConfigs: every example's broker.toml passes the checks
// flux-core 0.88 makes at bootstrap, for every one of its hosts, and every
// -S option its runner passes is a broker attribute that builds a topology.
func TestGoldenBrokerConfigs(t *testing.T) {
	arrays := regexp.MustCompile(`(?m)^\s*brokerOptions=\((.*)\)$`)
	for golden, data := range goldenScripts(t) {
		t.Run(golden, func(t *testing.T) {
			raw, ok := data["broker.toml"]
			if !ok {
				t.Skip("no broker.toml")
			}
			var conf map[string]any
			if err := toml.Unmarshal([]byte(raw), &conf); err != nil {
				t.Fatalf("broker.toml does not parse: %v", err)
			}
			if _, err := parseBootstrap(conf, "no-such-host"); err == nil || !strings.HasSuffix(err.Error(), "no-such-host not found in hosts") {
				t.Fatalf("broker.toml: want only 'not found in hosts' for a stranger, got %v", err)
			}
			entry := conf["bootstrap"].(map[string]any)["hosts"].([]any)[0].(map[string]any)
			first, err := hostlist.Expand(entry["host"].(string))
			must(t, err)
			b0, err := parseBootstrap(conf, first[0])
			if err != nil {
				t.Fatalf("broker.toml refused: %v", err)
			}
			for _, h := range b0.Hosts {
				if _, err := parseBootstrap(conf, h.Host); err != nil {
					t.Errorf("broker.toml refused on %s: %v", h.Host, err)
				}
			}
			for key, script := range data {
				for _, m := range arrays.FindAllStringSubmatch(script, -1) {
					attrs := map[string]string{}
					for _, w := range shellWords(m[1]) {
						if err := setAttr(attrs, strings.TrimPrefix(w.text, "-S")); err != nil || !strings.HasPrefix(w.text, "-S") {
							t.Errorf("%s: broker option %q: %v", key, w.text, err)
						}
					}
					if _, err := newTopology(topoURI(attrs, "", b0), b0.Hosts); err != nil {
						t.Errorf("%s: %v", key, err)
					}
				}
			}
		})
	}
}

// TestGoldenInvocations: every flux command line of every example's
// scripts (runner, sidecars, the batch script, load-fluxion.sh,
// flux-connect.sh) is one the double accepts, options included.
func TestGoldenInvocations(t *testing.T) {
	seen := 0
	kinds := map[string]int{}
	for golden, data := range goldenScripts(t) {
		for key, script := range data {
			if key == "broker.toml" || key == "hostlist" {
				continue
			}
			arrays := scriptArrays(script)
			for n, line := range strings.Split(script, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				for _, argv := range fluxCommands(line, arrays) {
					seen++
					if len(argv) > 1 {
						kinds[argv[0]+" "+argv[1]]++
					}
					if err := checkInvocation(argv); err != nil {
						t.Errorf("%s %s:%d: %s\n  %q", golden, key, n+1, err, argv)
					}
				}
			}
		}
	}
	t.Logf("%d invocations: %v", seen, kinds)
	if seen < 50 {
		t.Errorf("found only %d flux invocations in the goldens: the scan is broken", seen)
	}
}

// word is a shell word: its text with quotes removed, and whether it is an
// operator (||, >, ...) rather than a word.
type word struct {
	text      string
	raw       string
	op        bool
	fromArray bool
}

// commandPosition tells whether the word after prev starts a command.
func commandPosition(prev *word) bool {
	if prev == nil || prev.op || prev.fromArray {
		return true
	}
	switch prev.text {
	case "!", "if", "then", "do", "else", "exec":
		return true
	}
	return false
}

// shellWords splits a line of bash into words as far as these scripts
// need: quotes, backslashes, operators; no expansion. An unterminated quote
// (a printf of a file's contents spanning lines) ends the line.
func shellWords(line string) []word {
	var out []word
	var cur, raw strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, word{text: cur.String(), raw: raw.String()})
		}
		cur.Reset()
		raw.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			raw.WriteString(line[i:min(len(line), i+2+j)])
			i += j + 1
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				cur.WriteByte(line[j])
			}
			raw.WriteString(line[i:min(len(line), j+1)])
			i = j
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			cur.WriteByte(line[i])
			raw.WriteString(line[i-1 : i+1])
		case strings.IndexByte("|&;<>", c) >= 0:
			flush()
			j := i
			for j < len(line) && strings.IndexByte("|&;<>0123456789", line[j]) >= 0 {
				j++
			}
			out = append(out, word{text: line[i:j], raw: line[i:j], op: true})
			i = j - 1
		default:
			inWord = true
			cur.WriteByte(c)
			raw.WriteByte(c)
		}
	}
	flush()
	return out
}

// scriptArrays are the bash arrays a script assigns (NAME=(...), NAME+=(...)),
// each with its last value.
func scriptArrays(script string) map[string][]string {
	re := regexp.MustCompile(`(?m)^\s*(?:if .*then )?(\w+)(\+?)=\((.*)\)(?:; fi)?$`)
	arrays := map[string][]string{}
	for _, m := range re.FindAllStringSubmatch(script, -1) {
		var ws []string
		for _, w := range shellWords(m[3]) {
			ws = append(ws, w.text)
		}
		if m[2] == "+" {
			arrays[m[1]] = append(arrays[m[1]], ws...)
		} else {
			arrays[m[1]] = ws
		}
	}
	return arrays
}

var arrayRef = regexp.MustCompile(`^"\$\{(\w+)\[@\]\}"$`)

// fluxCommands are the flux command lines of a line: from each word "flux"
// in command position to the next operator, arrays expanded, variables
// replaced by a placeholder. eval's and sh -c's strings are lines too.
func fluxCommands(line string, arrays map[string][]string) [][]string {
	var words []word
	for _, w := range shellWords(line) {
		if m := arrayRef.FindStringSubmatch(w.raw); m != nil {
			for _, a := range arrays[m[1]] {
				words = append(words, word{text: a, raw: a, fromArray: true})
			}
			continue
		}
		words = append(words, w)
	}
	var out [][]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if (w.text == "eval" || w.text == "-c") && i+1 < len(words) && !words[i+1].op {
			out = append(out, fluxCommands(words[i+1].text, arrays)...)
			i++
			continue
		}
		if strings.HasPrefix(w.raw, "'") && (len(w.raw) == 1 || !strings.HasSuffix(w.raw, "'")) {
			// The first line of a file printf writes: a line of its own.
			out = append(out, fluxCommands(w.text, arrays)...)
			continue
		}
		var prev *word
		if i > 0 {
			prev = &words[i-1]
		}
		if w.text != "flux" || w.op || !commandPosition(prev) {
			continue
		}
		var argv []string
		for i++; i < len(words) && !words[i].op; i++ {
			argv = append(argv, placeholder(words[i].text))
		}
		out = append(out, argv)
	}
	return out
}

func placeholder(s string) string {
	if strings.Contains(s, "${fluxsocket}") {
		return "local:///mnt/flux/config/run/flux/local"
	}
	return strings.NewReplacer("${cfg}", "/cfg", "${hosts}", "flux-sample-[0-3]", "${FLUX_OUTPUT_DIR}", "/tmp/out").Replace(s)
}

// checkInvocation parses argv (after "flux") as the double would run it,
// without running anything.
func checkInvocation(argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("flux without a command")
	}
	cmd, args := argv[0], argv[1:]
	if _, ok := commands[cmd]; !ok {
		return notImplemented("flux " + cmd)
	}
	sub := func(name string, table []opt, args []string) (opts, error) {
		return parseOpts(name, table, args)
	}
	var o opts
	var err error
	switch cmd {
	case "start", "broker":
		table := startOpts
		if cmd == "broker" {
			table = brokerOpts
		}
		if o, err = sub("flux "+cmd, table, args); err != nil {
			return err
		}
		attrs := map[string]string{}
		for _, s := range o.all("setattr") {
			if err := setAttr(attrs, s); err != nil {
				return err
			}
		}
		// The initial program: check the flux commands in it, if any.
		for i, w := range o.rest {
			if w == "flux" {
				return checkInvocation(o.rest[i+1:])
			}
			if w == "-c" && i+1 < len(o.rest) {
				for _, argv := range fluxCommands(o.rest[i+1], nil) {
					if err := checkInvocation(argv); err != nil {
						return err
					}
				}
				return nil
			}
		}
		return nil
	case "submit", "run", "batch":
		table := jobOpts
		if cmd == "submit" {
			table = append(append([]opt{}, jobOpts...), opt{0, "watch", false}, opt{0, "wait", false})
		}
		if o, err = sub("flux "+cmd, table, args); err != nil {
			return err
		}
		if len(o.rest) == 0 {
			return fmt.Errorf("flux %s without a command", cmd)
		}
		_, err = jobRequestFrom("flux "+cmd, o)
		return err
	case "proxy":
		if o, err = sub("flux proxy", optTables["flux proxy"], args); err != nil {
			return err
		}
		if len(o.rest) > 1 && o.rest[1] == "flux" {
			return checkInvocation(o.rest[2:])
		}
		return nil
	}
	name := "flux " + cmd
	if len(args) > 0 {
		if _, ok := optTables[name+" "+args[0]]; ok {
			name, args = name+" "+args[0], args[1:]
		}
	}
	if cmd == "module" && len(args) > 0 && (args[0] == "remove" || args[0] == "load") {
		name, args = "flux module load", args[1:]
	}
	table, ok := optTables[name]
	if !ok {
		return fmt.Errorf("no option table for %q", name)
	}
	_, err = sub(name, table, args)
	return err
}
