package curve

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
)

const (
	pubLine  = `    public-key = "` + samplePublic + `"`
	secLine  = `    secret-key = "` + sampleSecret + `"`
	nameLine = `    name = "flux-sample"`
)

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func TestParseAccepts(t *testing.T) {
	type want struct {
		metadata []KV
	}
	cases := map[string]struct {
		reason string
		text   []byte
		want   want
	}{
		"UpstreamSample": {
			reason: "The certificate in flux-operator's custom-config example.",
			text:   []byte(curvetest.SampleCert),
			want:   want{metadata: []KV{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}}},
		},
		"NoTrailingNewline": {
			reason: "fgets returns the last line without a newline too.",
			text:   []byte(strings.TrimSuffix(curvetest.SampleCert, "\n")),
			want:   want{metadata: []KV{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}}},
		},
		"CRLF": {
			reason: "Flux strips a trailing CR as white space; pasted text often has one.",
			text:   []byte(strings.ReplaceAll(curvetest.SampleCert, "\n", "\r\n")),
			want:   want{metadata: []KV{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}}},
		},
		"TabsAndTightEquals": {
			reason: "Any space or tab indent works, and spaces around '=' are optional.",
			text:   lines("metadata", "\tname=\"flux-sample\"", "curve", "\t public-key=\t\""+samplePublic+"\"  ", " secret-key =\""+sampleSecret+"\""),
			want:   want{metadata: []KV{{"name", "flux-sample"}}},
		},
		"CommentsAndBlankLines": {
			reason: "Comment lines (indented or not) and whitespace-only lines are ignored anywhere.",
			text: lines("#   ****  Generated on 2023-04-26 22:54:42 by CZMQ  ****", "   ", "metadata", "    # a comment", "",
				nameLine, "\t", "curve", "#", pubLine, "  \t ", secLine, "# end"),
			want: want{metadata: []KV{{"name", "flux-sample"}}},
		},
		"CurveFirst": {
			reason: "Section order does not matter to Flux.",
			text:   lines("curve", pubLine, secLine, "metadata", nameLine),
			want:   want{metadata: []KV{{"name", "flux-sample"}}},
		},
		"TrailingSpaceAfterHeader": {
			reason: "Flux compares the stripped line with the section name.",
			text:   lines("metadata \t", nameLine, "curve  ", pubLine, secLine),
			want:   want{metadata: []KV{{"name", "flux-sample"}}},
		},
		"EveryValueCharacter": {
			reason: "All characters flux-core's valid_value allows, plus an empty value.",
			text:   lines("metadata", nameLine, `    x.Y-9 = "AZaz09 `+"\t"+`.-:+=^!/*?&<>()[]{}@%$#"`, `    empty = ""`, "curve", pubLine, secLine),
			want:   want{metadata: []KV{{"name", "flux-sample"}, {"x.Y-9", "AZaz09 \t.-:+=^!/*?&<>()[]{}@%$#"}, {"empty", ""}}},
		},
		"Line254Bytes": {
			reason: "A 254-byte line plus its newline fits Flux's 256-byte fgets buffer.",
			text:   lines("metadata", nameLine, `    note = "`+strings.Repeat("a", 241)+`"`, "curve", pubLine, secLine),
			want:   want{metadata: []KV{{"name", "flux-sample"}, {"note", strings.Repeat("a", 241)}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.text)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want.metadata, c.Metadata, tc.reason)
			assert.Equal(t, samplePublic, c.PublicKeyZ85(), tc.reason)
			assert.Equal(t, sampleSecret, c.SecretKeyZ85(), tc.reason)
			assert.NoError(t, Validate(tc.text), tc.reason)
		})
	}
}

func TestParseRejects(t *testing.T) {
	type want struct {
		line int    // ParseError.Line; 0 for whole-file problems
		err  string // exact error text
	}
	long := func(n int) string { return `    note = "` + strings.Repeat("a", n-13) + `"` }
	otherPublic := zmqManPairs[0][0]
	cases := map[string]struct {
		reason string
		text   []byte
		want   want
	}{
		"Empty": {
			reason: "Nothing is not a certificate.",
			text:   []byte(""),
			want:   want{err: `no "curve" section; a certificate needs public-key and secret-key in one`},
		},
		"LineTooLong": {
			reason: "A 255-byte line and its newline overflow fgets(buf, 256), which would split it.",
			text:   lines("metadata", nameLine, long(255), "curve", pubLine, secLine),
			want:   want{line: 3, err: "line 3: line is 255 bytes long; Flux reads lines into a 256-byte buffer, so at most 254 bytes may precede the newline"},
		},
		"LineTooLongInComment": {
			reason: "The limit applies to comments too: a split comment's tail is parsed as a line.",
			text:   lines("# "+strings.Repeat("x", 300), "metadata", nameLine, "curve", pubLine, secLine),
			want:   want{line: 1, err: "line 1: line is 302 bytes long; Flux reads lines into a 256-byte buffer, so at most 254 bytes may precede the newline"},
		},
		"CanonicalLineTooLong": {
			reason: "A compact line that fits but could not be written back by Marshal is refused.",
			text:   lines("metadata", nameLine, "\tnote=\""+strings.Repeat("a", 246)+"\"", "curve", pubLine, secLine),
			want:   want{line: 3, err: "line 3: the metadata entry is too long: written as `    key = \"value\"` it takes 259 bytes, and Flux reads at most 254 bytes per line"},
		},
		"ControlCharacter": {
			reason: "Vertical tab, form feed and the like are refused rather than treated as white space.",
			text:   lines("metadata", "\v"+nameLine, "curve", pubLine, secLine),
			want:   want{line: 2, err: "line 2: control character 0x0b at column 1"},
		},
		"NUL": {
			reason: "A NUL would truncate the line in C.",
			text:   lines("metadata", nameLine+"\x00", "curve", pubLine, secLine),
			want:   want{line: 2, err: "line 2: control character 0x00 at column 25"},
		},
		"StrayCR": {
			reason: "Only a CR right before the newline is tolerated.",
			text:   lines("metadata", "    name = \"a\rb\"", "curve", pubLine, secLine),
			want:   want{line: 2, err: "line 2: control character 0x0d at column 14"},
		},
		"UnknownSection": {
			reason: "Only metadata and curve are sections; names are case-sensitive.",
			text:   lines("Metadata", nameLine, "curve", pubLine, secLine),
			want:   want{line: 1, err: `line 1: unexpected text at the beginning of the line; only the section headers "metadata" and "curve" may be unindented`},
		},
		"SectionWithColon": {
			reason: "A YAML habit.",
			text:   lines("metadata:", nameLine, "curve", pubLine, secLine),
			want:   want{line: 1, err: `line 1: unexpected text at the beginning of the line; only the section headers "metadata" and "curve" may be unindented`},
		},
		"LongUnindentedText": {
			reason: "Long unindented text is refused without echoing it, as it may be key material.",
			text:   lines("metadata", nameLine, "curve", pubLine, sampleSecret, secLine),
			want:   want{line: 5, err: `line 5: unexpected text at the beginning of the line; only the section headers "metadata" and "curve" may be unindented`},
		},
		"UnindentedKeyValue": {
			reason: "Flux only reads key/value lines that start with a space or tab.",
			text:   lines("metadata", strings.TrimSpace(nameLine), "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: key = "value" lines must be indented by a space or tab`},
		},
		"IndentedSection": {
			reason: "An indented header would be read as a key/value line by Flux and fail.",
			text:   lines("metadata", nameLine, "  curve", pubLine, secLine),
			want:   want{line: 3, err: `line 3: section header "curve" must start at the beginning of the line, without indentation`},
		},
		"RepeatedSection": {
			reason: "Flux would merge repeated sections; a repeat is almost surely a paste error.",
			text:   lines("metadata", nameLine, "curve", pubLine, "metadata", secLine),
			want:   want{line: 5, err: `line 5: section "metadata" appears again (first on line 1)`},
		},
		"BeforeSection": {
			reason: "Key/value lines need a section.",
			text:   lines(nameLine, "metadata", "curve", pubLine, secLine),
			want:   want{line: 1, err: `line 1: indented line before any "metadata" or "curve" section header`},
		},
		"NoEquals": {
			reason: "Flux splits at '='.",
			text:   lines("metadata", `    name "flux-sample"`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: expected key = "value" in the metadata section`},
		},
		"EmptyKey": {
			reason: "flux-core's valid_key rejects an empty key.",
			text:   lines("metadata", nameLine, `    = "x"`, "curve", pubLine, secLine),
			want:   want{line: 3, err: `line 3: missing key before '='`},
		},
		"UnderscoreInKey": {
			reason: "Keys allow only letters, digits, '-' and '.'.",
			text:   lines("metadata", nameLine, "", "", "", "", `    foo_bar = "x"`, "curve", pubLine, secLine),
			want:   want{line: 7, err: `line 7: the metadata key has a character Flux does not accept: '_' at column 8 (keys may contain only letters, digits, '-' and '.')`},
		},
		"SpaceInKey": {
			reason: "Spaces inside a key are not trimmed away.",
			text:   lines("metadata", nameLine, `    keygen hostname = "x"`, "curve", pubLine, secLine),
			want:   want{line: 3, err: `line 3: the metadata key has a character Flux does not accept: ' ' at column 11 (keys may contain only letters, digits, '-' and '.')`},
		},
		"CurveKeyBadChar": {
			reason: "Curve keys are held to the same character rules.",
			text:   lines("metadata", nameLine, "curve", `    public_key = "`+samplePublic+`"`, secLine),
			want:   want{line: 4, err: `line 4: the curve key has a character Flux does not accept: '_' at column 11 (keys may contain only letters, digits, '-' and '.')`},
		},
		"Unquoted": {
			reason: "Values must be in double quotes.",
			text:   lines("metadata", `    name = flux-sample`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the value must be enclosed in double quotes, with nothing after the closing quote`},
		},
		"SingleQuoted": {
			reason: "Only double quotes count.",
			text:   lines("metadata", `    name = 'flux-sample'`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the value must be enclosed in double quotes, with nothing after the closing quote`},
		},
		"LoneQuote": {
			reason: "A single quote character is not a quoted value.",
			text:   lines("metadata", `    name = "`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the value must be enclosed in double quotes, with nothing after the closing quote`},
		},
		"TrailingComment": {
			reason: "Flux has no end-of-line comments: the value must end the line.",
			text:   lines("metadata", nameLine+` # the name`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the value must be enclosed in double quotes, with nothing after the closing quote`},
		},
		"UnderscoreInValue": {
			reason: "'_' is not in flux-core's value set, a common surprise for names.",
			text:   lines("metadata", `    name = "flux_sample"`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the metadata value has a character Flux does not accept: '_' at column 17 (values may contain only letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#)`},
		},
		"CommaInValue": {
			reason: "',' is not allowed either.",
			text:   lines("metadata", nameLine, `	hosts = "a,b"`, "curve", pubLine, secLine),
			want:   want{line: 3, err: `line 3: the metadata value has a character Flux does not accept: ',' at column 12 (values may contain only letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#)`},
		},
		"QuoteInValue": {
			reason: "ZPL has no escapes; an inner quote is refused.",
			text:   lines("metadata", `    name = "a"b"`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the metadata value has a character Flux does not accept: '"' at column 14 (values may contain only letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#)`},
		},
		"NonASCIIValue": {
			reason: "Only ASCII letters count as alphanumeric.",
			text:   lines("metadata", `    name = "café"`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: the metadata value has a character Flux does not accept: byte 0xc3 (non-ASCII) at column 16 (values may contain only letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#)`},
		},
		"DuplicateMetadata": {
			reason: "flux-core fails with EEXIST on a repeated metadata key.",
			text:   lines("metadata", nameLine, `    name = "other"`, "curve", pubLine, secLine),
			want:   want{line: 3, err: `line 3: duplicate metadata key (first on line 2)`},
		},
		"UnknownCurveKey": {
			reason: "The curve section holds only the two keys.",
			text:   lines("metadata", nameLine, "curve", pubLine, secLine, `    private-key = "x"`),
			want:   want{line: 6, err: `line 6: unknown key in the curve section; Flux accepts only "public-key" and "secret-key"`},
		},
		"DuplicatePublicKey": {
			reason: "Flux would let the second win silently.",
			text:   lines("metadata", nameLine, "curve", pubLine, secLine, pubLine),
			want:   want{line: 6, err: `line 6: duplicate public-key (first on line 4)`},
		},
		"ShortKey": {
			reason: "Keys are exactly 40 Z85 characters.",
			text:   lines("metadata", nameLine, "curve", `    public-key = "`+samplePublic[:39]+`"`, secLine),
			want:   want{line: 4, err: `line 4: public-key must be exactly 40 Z85 characters, not 39`},
		},
		"LongSecret": {
			reason: "Keys are exactly 40 Z85 characters.",
			text:   lines("metadata", nameLine, "curve", pubLine, `    secret-key = "`+sampleSecret+`A"`),
			want:   want{line: 5, err: `line 5: secret-key must be exactly 40 Z85 characters, not 41`},
		},
		"SpaceInSecret": {
			reason: "Space passes flux-core's value check but is not Z85.",
			text:   lines("metadata", nameLine, "curve", pubLine, `    secret-key = "`+sampleSecret[:20]+` `+sampleSecret[21:]+`"`),
			want:   want{line: 5, err: `line 5: secret-key has a character that is not Z85: ' ' at column 39`},
		},
		"UnderscoreInSecret": {
			reason: "'_' is neither a value character nor Z85.",
			text:   lines("metadata", nameLine, "curve", pubLine, `    secret-key = "_`+sampleSecret[1:]+`"`),
			want:   want{line: 5, err: `line 5: secret-key has a character that is not Z85: '_' at column 19`},
		},
		"Z85Overflow": {
			reason: "A group above 2^32-1 is refused, as libzmq's zmq_z85_decode does.",
			text:   lines("metadata", nameLine, "curve", `    public-key = "%%%%%`+samplePublic[5:]+`"`, secLine),
			want:   want{line: 4, err: `line 4: public-key is not valid Z85: a 5-character group encodes a value above 2^32-1`},
		},
		"NoCurveSection": {
			reason: "Without keys there is nothing to load.",
			text:   lines("metadata", nameLine),
			want:   want{err: `no "curve" section; a certificate needs public-key and secret-key in one`},
		},
		"NoPublicKey": {
			reason: "Both keys are required.",
			text:   lines("metadata", nameLine, "curve", secLine),
			want:   want{err: `the curve section has no public-key`},
		},
		"NoSecretKey": {
			reason: "A public certificate cannot run a broker.",
			text:   lines("metadata", nameLine, "curve", pubLine),
			want:   want{err: `the curve section has no secret-key`},
		},
		"MismatchedPair": {
			reason: "flux-core recomputes the public key from the secret and compares.",
			text:   lines("metadata", nameLine, "curve", `    public-key = "`+otherPublic+`"`, secLine),
			want:   want{line: 4, err: `line 4: public-key does not belong to the secret-key on line 5 (the secret key's public key is "` + samplePublic + `")`},
		},
		"NoName": {
			reason: "Flux needs metadata name.",
			text:   lines("metadata", `    keygen.hostname = "flux-sample-0"`, "curve", pubLine, secLine),
			want:   want{err: `metadata has no "name"; Flux requires one, e.g. name = "flux-cert-generator"`},
		},
		"NoMetadataSection": {
			reason: "No metadata means no name.",
			text:   lines("curve", pubLine, secLine),
			want:   want{err: `metadata has no "name"; Flux requires one, e.g. name = "flux-cert-generator"`},
		},
		"EmptyName": {
			reason: "An empty name is as good as none.",
			text:   lines("metadata", `    name = ""`, "curve", pubLine, secLine),
			want:   want{line: 2, err: `line 2: metadata "name" is empty; Flux identifies the certificate by it`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.text)
			require.Error(t, err, tc.reason)
			assert.Nil(t, c, tc.reason)
			assert.Equal(t, tc.want.err, err.Error(), tc.reason)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), tc.reason)
			assert.Equal(t, tc.want.line, pe.Line, tc.reason)
			assert.NotContains(t, err.Error(), sampleSecret[5:15], "errors must not leak the secret key")
			assert.Equal(t, err, Validate(tc.text), tc.reason)
		})
	}
}

// FuzzParse checks that Parse never panics, that what it accepts is a
// consistent keypair, and that Marshal writes it back to text Parse reads
// identically.
func FuzzParse(f *testing.F) {
	f.Add([]byte(curvetest.SampleCert))
	f.Add([]byte(strings.ReplaceAll(curvetest.SampleCert, "\n", "\r\n")))
	f.Add(lines("metadata", "\tname=\"x\"", "curve", pubLine, secLine))
	f.Add(lines("metadata", `    foo_bar = "x"`))
	f.Add(lines("curve", `    public-key = "%%%%%`+samplePublic[5:]+`"`, secLine))
	f.Add([]byte(""))
	f.Add([]byte("metadata\n    name = \"\"\ncurve\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := Parse(text)
		if err != nil {
			var pe *ParseError
			require.True(t, errors.As(err, &pe))
			require.Nil(t, c)
			return
		}
		pub, err := derivePublic(c.SecretKey)
		require.NoError(t, err)
		require.Equal(t, pub, c.PublicKey)
		again, err := Parse(c.Marshal())
		require.NoError(t, err)
		require.Equal(t, c, again)
	})
}
