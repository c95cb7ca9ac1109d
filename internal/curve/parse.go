package curve

import (
	"bytes"
	"fmt"
	"strings"
)

// maxLineLen is the longest line, newline excluded, that Parse accepts.
// flux-core reads with fgets into a 256-byte buffer: up to 255 bytes plus
// the terminating NUL. A longer line is silently split into two, and the
// tail is then parsed as a line of its own. Requiring the line and its
// newline to fit keeps every accepted file clear of that edge.
const maxLineLen = 254

const (
	keyCharsHint   = "keys may contain only letters, digits, '-' and '.'"
	valueCharsHint = "values may contain only letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#"
)

// ParseError is a problem in certificate text. Line is 1-based, or 0 when
// the problem concerns the file as a whole (a missing key, say). Messages
// never quote a secret-key value because they end up in user-visible
// status and events.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func lineErr(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Validate reports whether text is a certificate Flux would load.
func Validate(text []byte) error {
	_, err := Parse(text)
	return err
}

// Parse reads a certificate, enforcing at least flux-core's rules (see
// cert_read in src/common/libzmqutil/cert.c) and a few of its own where
// Flux's behaviour is accidental or surprising:
//   - control characters other than tab (and a CR before the newline) are
//     rejected, where Flux would treat some as white space;
//   - a section may appear only once, and each curve key only once, where
//     Flux merges sections and lets a later key silently win;
//   - metadata must have a non-empty "name", which the broker needs;
//   - a metadata entry must also fit the line limit as Marshal would write
//     it, so a parsed certificate can always be written back out.
//
// The first problem found is returned as a *ParseError.
func Parse(text []byte) (*Certificate, error) {
	p := parser{meta: map[string]int{}, sectionLine: map[string]int{}}
	lines := bytes.Split(text, []byte("\n"))
	for i, raw := range lines {
		if err := p.line(i+1, string(raw)); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

type parser struct {
	section     string
	sectionLine map[string]int
	meta        map[string]int // metadata key -> line it was given on
	cert        Certificate
	pubLine     int
	secLine     int
}

func (p *parser) line(n int, line string) error {
	// A trailing CR is what a CRLF file leaves; Flux strips it as white
	// space and pasted text often carries it.
	line = strings.TrimSuffix(line, "\r")
	if len(line) > maxLineLen {
		return lineErr(n, "line is %d bytes long; Flux reads lines into a 256-byte buffer, so at most %d bytes may precede the newline", len(line), maxLineLen)
	}
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return lineErr(n, "control character 0x%02x at column %d", c, i+1)
		}
	}

	indented := line != "" && (line[0] == ' ' || line[0] == '\t')
	stripped := strings.Trim(line, " \t")
	if stripped == "" || stripped[0] == '#' {
		return nil
	}

	if stripped == "metadata" || stripped == "curve" {
		if indented {
			return lineErr(n, "section header %q must start at the beginning of the line, without indentation", stripped)
		}
		if prev, ok := p.sectionLine[stripped]; ok {
			return lineErr(n, "section %q appears again (first on line %d)", stripped, prev)
		}
		p.section = stripped
		p.sectionLine[stripped] = n
		return nil
	}
	if !indented {
		if strings.Contains(stripped, "=") {
			return lineErr(n, `key = "value" lines must be indented by a space or tab`)
		}
		// Nothing of the line is repeated back: it could be part of a pasted
		// key, and the message ends up in the claim's conditions.
		return lineErr(n, "unexpected text at the beginning of the line; only the section headers \"metadata\" and \"curve\" may be unindented")
	}
	if p.section == "" {
		return lineErr(n, "indented line before any \"metadata\" or \"curve\" section header")
	}

	key, val, valCol, err := splitKV(n, line, p.section)
	if err != nil {
		return err
	}
	if p.section == "metadata" {
		return p.metadata(n, key, val, valCol)
	}
	return p.curve(n, key, val, valCol)
}

// splitKV parses `key = "value"` the way flux-core's parse_keyval does:
// split at the first '=', trim both sides, require the value to be quoted.
// valCol is the 1-based column of the first character inside the quotes.
func splitKV(n int, line, section string) (key, val string, valCol int, err error) {
	eq := strings.IndexByte(line, '=')
	if eq < 0 {
		return "", "", 0, lineErr(n, `expected key = "value" in the %s section`, section)
	}
	key = strings.Trim(line[:eq], " \t")
	if key == "" {
		return "", "", 0, lineErr(n, "missing key before '='")
	}
	if i := badKeyChar(key); i >= 0 {
		return "", "", 0, lineErr(n, "the %s key has a character Flux does not accept: %s at column %d (%s)", section, describeByte(key[i]), strings.Index(line, key)+i+1, keyCharsHint)
	}
	rest := line[eq+1:]
	quoted := strings.Trim(rest, " \t")
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return "", "", 0, lineErr(n, "the value must be enclosed in double quotes, with nothing after the closing quote")
	}
	start := eq + 1 + (len(rest) - len(strings.TrimLeft(rest, " \t"))) + 1
	return key, quoted[1 : len(quoted)-1], start + 1, nil
}

func (p *parser) metadata(n int, key, val string, valCol int) error {
	if i := badValueChar(val); i >= 0 {
		return lineErr(n, "the metadata value has a character Flux does not accept: %s at column %d (%s)", describeByte(val[i]), valCol+i, valueCharsHint)
	}
	if prev, ok := p.meta[key]; ok {
		return lineErr(n, "duplicate metadata key (first on line %d)", prev)
	}
	// The line as written may be shorter than Marshal's rendering of it (tab
	// indent, no spaces around '='); holding both to the limit means a parsed
	// certificate can always be written out again.
	if l := metaLineLen(KV{key, val}); l > maxLineLen {
		return lineErr(n, "the metadata entry is too long: written as `    key = \"value\"` it takes %d bytes, and Flux reads at most %d bytes per line", l, maxLineLen)
	}
	p.meta[key] = n
	p.cert.Metadata = append(p.cert.Metadata, KV{Key: key, Value: val})
	return nil
}

func (p *parser) curve(n int, key, val string, valCol int) error {
	var dst *[KeySize]byte
	var seen *int
	switch key {
	case "public-key":
		dst, seen = &p.cert.PublicKey, &p.pubLine
	case "secret-key":
		dst, seen = &p.cert.SecretKey, &p.secLine
	default:
		return lineErr(n, "unknown key in the curve section; Flux accepts only \"public-key\" and \"secret-key\"")
	}
	if *seen != 0 {
		return lineErr(n, "duplicate %s (first on line %d)", key, *seen)
	}
	const z85Len = KeySize / 4 * 5
	if len(val) != z85Len {
		return lineErr(n, "%s must be exactly %d Z85 characters, not %d", key, z85Len, len(val))
	}
	for i := 0; i < len(val); i++ {
		if !isZ85Char(val[i]) {
			// The offending character is outside the alphabet, so naming it
			// reveals nothing about the key.
			return lineErr(n, "%s has a character that is not Z85: %s at column %d", key, describeByte(val[i]), valCol+i)
		}
	}
	b, err := DecodeZ85(val)
	if err != nil {
		return lineErr(n, "%s is not valid Z85: a 5-character group encodes a value above 2^32-1", key)
	}
	copy(dst[:], b)
	*seen = n
	return nil
}

func (p *parser) finish() (*Certificate, error) {
	if _, ok := p.sectionLine["curve"]; !ok {
		return nil, &ParseError{Msg: "no \"curve\" section; a certificate needs public-key and secret-key in one"}
	}
	if p.pubLine == 0 {
		return nil, &ParseError{Msg: "the curve section has no public-key"}
	}
	if p.secLine == 0 {
		return nil, &ParseError{Msg: "the curve section has no secret-key"}
	}
	pub, err := derivePublic(p.cert.SecretKey)
	if err != nil {
		return nil, &ParseError{Line: p.secLine, Msg: err.Error()}
	}
	if pub != p.cert.PublicKey {
		return nil, lineErr(p.pubLine, "public-key does not belong to the secret-key on line %d (the secret key's public key is %q)", p.secLine, mustZ85(pub))
	}
	name, ok := p.meta["name"]
	if !ok {
		return nil, &ParseError{Msg: `metadata has no "name"; Flux requires one, e.g. name = "flux-cert-generator"`}
	}
	if v, _ := p.cert.Meta("name"); v == "" {
		return nil, lineErr(name, `metadata "name" is empty; Flux identifies the certificate by it`)
	}
	c := p.cert
	return &c, nil
}

// badKeyChar returns the index of the first byte flux-core's valid_key
// rejects, or -1.
func badKeyChar(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '.' {
			return i
		}
	}
	return -1
}

// badValueChar returns the index of the first byte flux-core's valid_value
// rejects, or -1. The allowed set is the Z85 alphabet plus space and tab,
// so anything outside it (notably '_', ',' and '"') is refused.
func badValueChar(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isZ85Char(c) && c != ' ' && c != '\t' {
			return i
		}
	}
	return -1
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// metaLineLen is the length of the line Marshal writes for kv.
func metaLineLen(kv KV) int {
	return len(`    `) + len(kv.Key) + len(` = ""`) + len(kv.Value)
}

// describeByte names a rejected byte. %q alone would show a stray UTF-8
// lead byte as an unrelated Latin-1 letter.
func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x (non-ASCII)", c)
}
