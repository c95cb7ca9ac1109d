package curve

import (
	"bytes"
	"crypto/ecdh"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
)

// The sample pair from flux-operator's examples/tests/custom-config, a
// certificate CZMQ made and Flux brokers have loaded.
const (
	samplePublic = "}D{Y3<amLLl*TIt>@b*umPD-nBr#I}[PnV!lZBkW"
	sampleSecret = "5khD%TixeW<j<6ssPNG>s<nY1E}5)fyk@TI)g8Xu" //nolint:gosec // G101: a published sample key, not a credential
)

// Two more pairs from the zmq_curve(7) manual page, written by libzmq's
// own keygen.
var zmqManPairs = [][2]string{
	{"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"},
	{"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID", "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"},
}

func z85Reader(t testing.TB, s string) io.Reader {
	b, err := DecodeZ85(s)
	require.NoError(t, err)
	return bytes.NewReader(b)
}

func TestGenerate(t *testing.T) {
	type args struct {
		rand     io.Reader
		metadata []KV
	}
	type want struct {
		metadata []KV
		public   string
		secret   string
		errSub   string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NoMetadata": {
			reason: "Without a name the upstream default is added, and the reader's bytes become the secret key.",
			args:   args{rand: z85Reader(t, sampleSecret)},
			want: want{
				metadata: []KV{{"name", "flux-cert-generator"}},
				public:   samplePublic,
				secret:   sampleSecret,
			},
		},
		"MiniClusterMetadata": {
			reason: "A caller's name is kept and no default is added; order is preserved.",
			args: args{
				rand:     z85Reader(t, sampleSecret),
				metadata: []KV{{"name", "flux-sample"}, {"keygen.hostname", "flux-sample-0"}},
			},
			want: want{
				metadata: []KV{{"name", "flux-sample"}, {"keygen.hostname", "flux-sample-0"}},
				public:   samplePublic,
				secret:   sampleSecret,
			},
		},
		"HostnameOnly": {
			reason: "The default name goes first, before the caller's entries, as the upstream operator writes it.",
			args: args{
				rand:     z85Reader(t, sampleSecret),
				metadata: []KV{{"keygen.hostname", "flux-sample-0"}},
			},
			want: want{
				metadata: []KV{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}},
				public:   samplePublic,
				secret:   sampleSecret,
			},
		},
		"ShortReader": {
			reason: "A reader that runs dry must not yield a partly zero key.",
			args:   args{rand: bytes.NewReader(make([]byte, 31))},
			want:   want{errSub: "reading random secret key"},
		},
		"BadKey": {
			reason: "Metadata Flux would reject must fail here, not at broker start.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"foo_bar", "x"}}},
			want:   want{errSub: `metadata key "foo_bar" has a character Flux does not accept: '_'`},
		},
		"EmptyKey": {
			reason: "Flux rejects an empty key.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"", "x"}}},
			want:   want{errSub: "metadata key is empty"},
		},
		"BadValue": {
			reason: "Commas are not allowed in values.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"name", "a,b"}}},
			want:   want{errSub: `metadata value of "name" has a character Flux does not accept: ','`},
		},
		"QuoteInValue": {
			reason: "A quote would end the ZPL value early.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"name", `a"b`}}},
			want:   want{errSub: `has a character Flux does not accept: '"'`},
		},
		"Duplicate": {
			reason: "Flux refuses a repeated metadata key.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"name", "a"}, {"name", "b"}}},
			want:   want{errSub: `duplicate metadata key "name"`},
		},
		"EmptyName": {
			reason: "An empty name is as good as none.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"name", ""}}},
			want:   want{errSub: `metadata "name" is empty`},
		},
		"TooLong": {
			reason: "An entry whose line would not fit Flux's line buffer is refused.",
			args:   args{rand: z85Reader(t, sampleSecret), metadata: []KV{{"name", strings.Repeat("a", 250)}}},
			want:   want{errSub: "would make a 263-byte line"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Generate(tc.args.rand, tc.args.metadata...)
			if tc.want.errSub != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.want.errSub, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want.metadata, c.Metadata, tc.reason)
			assert.Equal(t, tc.want.public, c.PublicKeyZ85(), tc.reason)
			assert.Equal(t, tc.want.secret, c.SecretKeyZ85(), tc.reason)
		})
	}
}

func TestGenerateRandom(t *testing.T) {
	a, err := Generate(nil, KV{"name", "x"})
	require.NoError(t, err)
	b, err := Generate(nil, KV{"name", "x"})
	require.NoError(t, err)
	assert.NotEqual(t, a.SecretKey, b.SecretKey, "nil must mean crypto/rand, not a fixed key")
	assert.NotEqual(t, [KeySize]byte{}, a.SecretKey)
}

// TestPublicKeyDerivation checks X25519 against vectors made elsewhere:
// RFC 7748 section 6.1 (raw bytes), the upstream sample, and the zmq_curve(7)
// pairs (Z85).
func TestPublicKeyDerivation(t *testing.T) {
	cases := map[string]struct {
		reason string
		secret []byte
		public []byte
	}{
		"RFC7748Alice": {
			reason: "Alice's keypair from RFC 7748 section 6.1.",
			secret: mustHex(t, "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"),
			public: mustHex(t, "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"),
		},
		"RFC7748Bob": {
			reason: "Bob's keypair from RFC 7748 section 6.1.",
			secret: mustHex(t, "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"),
			public: mustHex(t, "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"),
		},
		"FluxOperatorSample": {
			reason: "The pair in flux-operator's custom-config example.",
			secret: mustZ85Decode(t, sampleSecret),
			public: mustZ85Decode(t, samplePublic),
		},
		"ZmqManServer": {
			reason: "Server pair from zmq_curve(7).",
			secret: mustZ85Decode(t, zmqManPairs[0][1]),
			public: mustZ85Decode(t, zmqManPairs[0][0]),
		},
		"ZmqManClient": {
			reason: "Client pair from zmq_curve(7).",
			secret: mustZ85Decode(t, zmqManPairs[1][1]),
			public: mustZ85Decode(t, zmqManPairs[1][0]),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Generate(bytes.NewReader(tc.secret))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.public, c.PublicKey[:], tc.reason)

			// The same pair written as a certificate must also be accepted.
			parsed, err := Parse(c.Marshal())
			require.NoError(t, err, tc.reason)
			assert.Equal(t, c, parsed, tc.reason)
		})
	}
}

func TestMarshal(t *testing.T) {
	c, err := Generate(z85Reader(t, sampleSecret), KV{"name", "flux-sample"}, KV{"keygen.hostname", "flux-sample-0"})
	require.NoError(t, err)
	want := `#   ****  Generated by minicluster-crossplane  ****
#   ZeroMQ CURVE **Secret** Certificate
#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

metadata
    name = "flux-sample"
    keygen.hostname = "flux-sample-0"
curve
    public-key = "}D{Y3<amLLl*TIt>@b*umPD-nBr#I}[PnV!lZBkW"
    secret-key = "5khD%TixeW<j<6ssPNG>s<nY1E}5)fyk@TI)g8Xu"
`
	assert.Equal(t, want, string(c.Marshal()))
	assert.Equal(t, c.Marshal(), c.Marshal(), "Marshal must be deterministic")
}

func TestRoundTrip(t *testing.T) {
	cases := map[string]struct {
		reason   string
		metadata []KV
	}{
		"Default":     {reason: "Only the default name."},
		"MiniCluster": {reason: "What the function passes.", metadata: []KV{{"name", "flux-sample"}, {"keygen.hostname", "flux-sample-0"}}},
		"AllValueChars": {
			reason:   "Every character Flux allows in a value, including space and tab, survives.",
			metadata: []KV{{"name", "a"}, {"x.y-Z9", "AZaz09 \t.-:+=^!/*?&<>()[]{}@%$#"}, {"empty", ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for range 20 {
				c, err := Generate(nil, tc.metadata...)
				require.NoError(t, err, tc.reason)
				got, err := Parse(c.Marshal())
				require.NoError(t, err, tc.reason)
				assert.Equal(t, c, got, tc.reason)

				// Independently of derivePublic: the public key is the X25519
				// public key of the secret.
				priv, err := ecdh.X25519().NewPrivateKey(c.SecretKey[:])
				require.NoError(t, err)
				assert.Equal(t, priv.PublicKey().Bytes(), got.PublicKey[:], tc.reason)
				assert.Len(t, got.PublicKeyZ85(), 40)
				assert.Len(t, got.SecretKeyZ85(), 40)
			}
		})
	}
}

func TestMeta(t *testing.T) {
	c, err := Parse([]byte(curvetest.SampleCert))
	require.NoError(t, err)
	v, ok := c.Meta("keygen.hostname")
	assert.True(t, ok)
	assert.Equal(t, "flux-sample-0", v)
	_, ok = c.Meta("missing")
	assert.False(t, ok)
}

func TestParseErrorType(t *testing.T) {
	_, err := Parse([]byte("metadata\n    foo_bar = \"x\"\n"))
	var pe *ParseError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, 2, pe.Line)
	assert.Equal(t, `line 2: the metadata key has a character Flux does not accept: '_' at column 8 (keys may contain only letters, digits, '-' and '.')`, err.Error())
}

func BenchmarkGenerateMarshal(b *testing.B) {
	for b.Loop() {
		c, err := Generate(nil, KV{"name", "flux-sample"}, KV{"keygen.hostname", "flux-sample-0"})
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Marshal()
	}
}

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func mustZ85Decode(t testing.TB, s string) []byte {
	b, err := DecodeZ85(s)
	require.NoError(t, err)
	return b
}
