package main

import (
	"bufio"
	"bytes"
	"crypto/ecdh"
	"fmt"
	"os"
	"strings"
)

// curveCert is a loaded CURVE certificate. The double never encrypts with
// it: loading it is the check that the project installed one Flux accepts.
type curveCert struct {
	Name      string
	PublicZ85 string
	public    []byte
	secret    []byte
}

// loadCert is overlay_cert_load of flux-core 0.88: the file must not be
// readable by group or others, and must parse as cert_read parses. Flux
// reports every parse failure as EINVAL ("Invalid argument"); the double
// says the same, then why, so a failing test shows the cause.
func loadCert(path string) (*curveCert, error) {
	fail := func(format string, args ...any) (*curveCert, error) {
		return nil, fmt.Errorf("Error loading certificate: "+format, args...)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("%s: %s", path, errnoText(err))
	}
	defer func() { _ = f.Close() }() // read only: a close error loses nothing
	st, err := f.Stat()
	if err != nil {
		return fail("%s: %s", path, errnoText(err))
	}
	// Flux checks the read bits only (S_IRGRP|S_IROTH), so does the double.
	if st.Mode().Perm()&0o044 != 0 {
		return fail("%s: readable by group/other", path)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return fail("%s: %s", path, errnoText(err))
	}
	c, err := parseCert(buf.Bytes())
	if err != nil {
		return fail("%s: Invalid argument (flux-standin: %s)", path, err)
	}
	return c, nil
}

// parseCert reads the ZPL subset cert_read reads: unindented "metadata" and
// "curve" section lines, indented key = "value" lines, # comments. Lines are
// read as fgets into a 256-byte buffer reads them, so a longer line is cut
// and its rest parsed as a line of its own, as in Flux. Beyond cert_read,
// metadata must have a non-empty name: the broker authorizes its children
// by it, and fails when there is none.
func parseCert(text []byte) (*curveCert, error) {
	c := &curveCert{}
	meta := map[string]string{}
	section := "none"
	var pubTxt, secTxt string
	n := 0
	for _, line := range fgetsLines(text, 256) {
		n++
		indent := line != "" && (line[0] == ' ' || line[0] == '\t')
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' {
			continue
		}
		switch {
		case !indent && s == "metadata":
			section = "metadata"
		case !indent && s == "curve":
			section = "curve"
		case indent && (section == "metadata" || section == "curve"):
			key, val, err := parseKeyval(s)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s", n, err)
			}
			if section == "metadata" {
				if _, dup := meta[key]; dup {
					return nil, fmt.Errorf("line %d: metadata key %q given twice (File exists)", n, key)
				}
				meta[key] = val
				continue
			}
			switch key {
			case "public-key":
				pubTxt = val
			case "secret-key":
				secTxt = val
			default:
				return nil, fmt.Errorf("line %d: unknown curve key %q", n, key)
			}
		default:
			return nil, fmt.Errorf("line %d: not a section header nor an indented key = \"value\" of one", n)
		}
	}
	var err error
	if pubTxt == "" || secTxt == "" {
		return nil, fmt.Errorf("the curve section needs both public-key and secret-key")
	}
	if c.public, err = decodeKey(pubTxt); err != nil {
		return nil, fmt.Errorf("public-key: %s", err)
	}
	if c.secret, err = decodeKey(secTxt); err != nil {
		return nil, fmt.Errorf("secret-key: %s", err)
	}
	priv, err := ecdh.X25519().NewPrivateKey(c.secret)
	if err != nil {
		return nil, fmt.Errorf("secret-key: %s", err)
	}
	if !bytes.Equal(priv.PublicKey().Bytes(), c.public) {
		return nil, fmt.Errorf("public-key is not the public key of secret-key (X25519)")
	}
	c.PublicZ85 = pubTxt
	if c.Name = meta["name"]; c.Name == "" {
		return nil, fmt.Errorf("metadata has no name")
	}
	return c, nil
}

// fgetsLines splits text as successive fgets(buf, size) calls return it:
// at each newline, or after size-1 bytes.
func fgetsLines(text []byte, size int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, len(text)+1), len(text)+1)
	for sc.Scan() {
		line := sc.Text()
		for len(line) > size-2 { // size-1 bytes, the newline among them
			out = append(out, line[:size-1])
			line = line[size-1:]
		}
		out = append(out, line)
	}
	return out
}

// parseKeyval is cert.c's parse_keyval: key = "value", the key letters,
// digits, '-' and '.', the value quoted and of the Z85 alphabet plus space
// and tab.
func parseKeyval(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf(`expected key = "value"`)
	}
	k = strings.TrimSpace(k)
	if k == "" || strings.IndexFunc(k, func(r rune) bool { return !isAlnum(r) && r != '-' && r != '.' }) >= 0 {
		return "", "", fmt.Errorf("invalid key %q", k)
	}
	v = strings.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", "", fmt.Errorf("the value of %s is not in double quotes", k)
	}
	v = v[1 : len(v)-1]
	for i := 0; i < len(v); i++ {
		if !isAlnum(rune(v[i])) && !strings.ContainsRune(".-:+=^!/*?&<>()[]{}@%$# \t", rune(v[i])) {
			return "", "", fmt.Errorf("the value of %s has a character Flux refuses at offset %d", k, i)
		}
	}
	return k, v, nil
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// z85Alphabet is ZeroMQ RFC 32's.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// decodeKey decodes a 40-character Z85 key into 32 bytes, as copy_z85_key
// and zmq_z85_decode do: exactly 40 characters, each of the alphabet, no
// group above 2^32-1.
func decodeKey(s string) ([]byte, error) {
	if len(s) != 40 {
		return nil, fmt.Errorf("%d characters, a Z85 key has 40", len(s))
	}
	out := make([]byte, 0, 32)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			d := strings.IndexByte(z85Alphabet, s[j])
			if d < 0 {
				return nil, fmt.Errorf("character %d is not Z85", j)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xffffffff {
			return nil, fmt.Errorf("group at %d is above 2^32-1", i)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
