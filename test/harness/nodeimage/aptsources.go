package nodeimage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// aptSource is one apt source: deb822 stanza or one-line entry.
type aptSource struct {
	types, uris, suites, components []string
	signedBy                        string
	disabled                        bool
}

// aptSourceFiles lists apt's source files under etcApt in the order apt
// reads them.
func aptSourceFiles(etcApt string) []string {
	files := []string{filepath.Join(etcApt, "sources.list")}
	d := filepath.Join(etcApt, "sources.list.d")
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".list") || strings.HasSuffix(n, ".sources")) {
			files = append(files, filepath.Join(d, n))
		}
	}
	return files
}

// hostMirrors turns the host's apt sources for suite into mmdebstrap
// MIRROR arguments, one-line style, so the rootfs comes from the mirror (or
// proxy) the host already uses. Passing any mirror stops mmdebstrap adding
// the updates and security suites itself, so those are taken from the host
// too.
func hostMirrors(files []string, suite string) ([]string, error) {
	want := []string{suite, suite + "-updates", suite + "-security"}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read apt sources: %w", err)
		}
		var srcs []aptSource
		if strings.HasSuffix(f, ".sources") {
			srcs = parseDeb822(string(b))
		} else {
			srcs = parseOneLine(string(b))
		}
		for _, s := range srcs {
			if s.disabled || !slices.Contains(s.types, "deb") {
				continue
			}
			for _, u := range s.uris {
				for _, su := range s.suites {
					if !slices.Contains(want, su) {
						continue
					}
					l := "deb "
					if s.signedBy != "" {
						l += "[signed-by=" + s.signedBy + "] "
					}
					l += u + " " + su
					comps := s.components
					if len(comps) == 0 {
						comps = []string{"main"}
					}
					l += " " + strings.Join(comps, " ")
					if !slices.Contains(out, l) {
						out = append(out, l)
					}
				}
			}
		}
	}
	return out, nil
}

// parseDeb822 reads the stanzas of a .sources file.
func parseDeb822(data string) []aptSource {
	var out []aptSource
	fields := map[string]string{}
	last := ""
	flush := func() {
		if len(fields) == 0 {
			return
		}
		s := aptSource{
			types:      strings.Fields(fields["types"]),
			uris:       strings.Fields(fields["uris"]),
			suites:     strings.Fields(fields["suites"]),
			components: strings.Fields(fields["components"]),
			disabled:   strings.EqualFold(strings.TrimSpace(fields["enabled"]), "no"),
		}
		// Signed-By may also hold a whole key inline, which does not fit a
		// one-line entry; mmdebstrap then finds the keyring itself.
		if sb := strings.TrimSpace(fields["signed-by"]); strings.HasPrefix(sb, "/") && !strings.ContainsAny(sb, " \n") {
			s.signedBy = sb
		}
		out = append(out, s)
		fields, last = map[string]string{}, ""
	}
	for _, line := range strings.Split(data, "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				fields[last] += "\n" + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
	}
	flush()
	return out
}

// parseOneLine reads a sources.list: "deb [opt=val ...] URI SUITE COMP...".
func parseOneLine(data string) []aptSource {
	var out []aptSource
	for _, line := range strings.Split(data, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		s := aptSource{types: []string{f[0]}}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			// Options may be written "[ a=b c=d ]" or "[a=b]".
			var opts []string
			for len(f) > 0 {
				o := f[0]
				f = f[1:]
				end := strings.HasSuffix(o, "]")
				if o = strings.Trim(o, "[]"); o != "" {
					opts = append(opts, o)
				}
				if end {
					break
				}
			}
			for _, o := range opts {
				if k, v, ok := strings.Cut(o, "="); ok && strings.EqualFold(k, "signed-by") && strings.HasPrefix(v, "/") {
					s.signedBy = v
				}
			}
		}
		if len(f) < 2 {
			continue
		}
		s.uris, s.suites, s.components = []string{f[0]}, []string{f[1]}, f[2:]
		out = append(out, s)
	}
	return out
}
