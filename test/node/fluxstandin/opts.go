package main

import (
	"fmt"
	"strings"
)

// opt is one option a command accepts. Flux's commands parse with Python's
// argparse or flux-core's optparse; both take -n1, -n 1, --ntasks=1 and
// --ntasks 1, clustered short flags (-vvv), and stop at the first word that
// is not an option (the command of flux submit, the initial program of flux
// start), which is all this parser does.
type opt struct {
	short byte
	long  string
	arg   bool
}

// opts is what parseOpts found: values by long name (repeatable options
// keep every value), and the words from the first positional one on.
type opts struct {
	vals map[string][]string
	rest []string
}

func (o opts) has(name string) bool { return len(o.vals[name]) > 0 }

func (o opts) count(name string) int { return len(o.vals[name]) }

// last is the option's last value, or def when it was not given.
func (o opts) last(name, def string) string {
	if v := o.vals[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func (o opts) all(name string) []string { return o.vals[name] }

// parseOpts parses args for cmd. An option the table does not have is
// refused as not implemented: the test double never silently drops one.
func parseOpts(cmd string, table []opt, args []string) (opts, error) {
	o := opts{vals: map[string][]string{}}
	byLong := map[string]opt{}
	byShort := map[byte]opt{}
	for _, t := range table {
		byLong[t.long] = t
		if t.short != 0 {
			byShort[t.short] = t
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.rest = args[i+1:]
			return o, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			t, ok := byLong[name]
			if !ok {
				return o, notImplemented(fmt.Sprintf("%s option --%s", cmd, name))
			}
			switch {
			case !t.arg && hasVal:
				return o, fmt.Errorf("%s: option --%s takes no argument", cmd, name)
			case !t.arg:
				val = ""
			case !hasVal:
				if i+1 >= len(args) {
					return o, fmt.Errorf("%s: option --%s requires an argument", cmd, name)
				}
				i++
				val = args[i] //nolint:gosec // G602: i+1 < len(args) is checked above
			}
			o.vals[name] = append(o.vals[name], val)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				t, ok := byShort[a[j]]
				if !ok {
					return o, notImplemented(fmt.Sprintf("%s option -%c", cmd, a[j]))
				}
				if !t.arg {
					o.vals[t.long] = append(o.vals[t.long], "")
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return o, fmt.Errorf("%s: option -%c requires an argument", cmd, a[j])
					}
					i++
					val = args[i] //nolint:gosec // G602: i+1 < len(args) is checked above
				}
				o.vals[t.long] = append(o.vals[t.long], val)
				break
			}
		default:
			o.rest = args[i:]
			return o, nil
		}
	}
	return o, nil
}

// errNotImplemented marks what the test double does not do. The message
// says so in the same words everywhere, so a log shows at once that a
// failure is the double's and not the project's.
type errNotImplemented struct{ what string }

func (e errNotImplemented) Error() string {
	return e.what + " is not implemented by the test double"
}

func notImplemented(what string) error { return errNotImplemented{what} }
