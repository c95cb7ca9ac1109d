package curve

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeZ85(t *testing.T) {
	type args struct {
		src []byte
	}
	type want struct {
		s      string
		errSub string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"RFC32Vector": {
			reason: "The test vector in ZeroMQ RFC 32 must encode to HelloWorld.",
			args:   args{src: []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}},
			want:   want{s: "HelloWorld"},
		},
		"Empty": {
			reason: "Zero bytes is a multiple of 4 and encodes to nothing.",
			args:   args{src: []byte{}},
			want:   want{s: ""},
		},
		"AllZero": {
			reason: "A zero group is the first alphabet character five times.",
			args:   args{src: []byte{0, 0, 0, 0}},
			want:   want{s: "00000"},
		},
		"AllOnes": {
			reason: "0xFFFFFFFF is the largest group value.",
			args:   args{src: []byte{0xFF, 0xFF, 0xFF, 0xFF}},
			want:   want{s: "%nSc0"},
		},
		"NotMultipleOf4": {
			reason: "RFC 32 has no padding, so partial groups are an error.",
			args:   args{src: []byte{1, 2, 3}},
			want:   want{errSub: "not a multiple of 4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EncodeZ85(tc.args.src)
			if tc.want.errSub != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.want.errSub, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want.s, got, tc.reason)
		})
	}
}

func TestDecodeZ85(t *testing.T) {
	type args struct {
		s string
	}
	type want struct {
		b      []byte
		errSub string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"RFC32Vector": {
			reason: "HelloWorld must decode to the RFC 32 test bytes.",
			args:   args{s: "HelloWorld"},
			want:   want{b: []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}},
		},
		"Empty": {
			reason: "The empty string is valid Z85.",
			args:   args{s: ""},
			want:   want{b: []byte{}},
		},
		"MaxGroup": {
			reason: "%nSc0 is exactly 2^32-1 and must not be taken for an overflow.",
			args:   args{s: "%nSc0"},
			want:   want{b: []byte{0xFF, 0xFF, 0xFF, 0xFF}},
		},
		"OverflowByOne": {
			reason: "%nSc1 is 2^32, one past what four bytes hold.",
			args:   args{s: "%nSc1"},
			want:   want{errSub: "exceeds 2^32-1"},
		},
		"OverflowMax": {
			reason: "%%%%% is 85^5-1, the largest five-digit value.",
			args:   args{s: "%%%%%"},
			want:   want{errSub: "exceeds 2^32-1"},
		},
		"OverflowInSecondGroup": {
			reason: "The overflow check applies to every group, with its offset reported.",
			args:   args{s: "00000%%%%%"},
			want:   want{errSub: "group at offset 5"},
		},
		"NotMultipleOf5": {
			reason: "Z85 text comes in five-character groups.",
			args:   args{s: "Hello!"},
			want:   want{errSub: "not a multiple of 5"},
		},
		"Underscore": {
			reason: "'_' is not in the alphabet.",
			args:   args{s: "Hell_"},
			want:   want{errSub: `'_' at offset 4`},
		},
		"Quote": {
			reason: "The alphabet omits '\"' so keys can sit in quoted ZPL values.",
			args:   args{s: `"ello`},
			want:   want{errSub: `'"' at offset 0`},
		},
		"Space": {
			reason: "Space is not in the alphabet.",
			args:   args{s: "Hel o"},
			want:   want{errSub: "offset 3"},
		},
		"NonASCII": {
			reason: "High bytes are not in the alphabet.",
			args:   args{s: "Hell\xff"},
			want:   want{errSub: "offset 4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeZ85(tc.args.s)
			if tc.want.errSub != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.want.errSub, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want.b, got, tc.reason)
		})
	}
}

func TestZ85RoundTrip(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    []byte
	}{
		"Key":       {reason: "A 32-byte key encodes to 40 characters and back.", src: bytes.Repeat([]byte{0xA5, 0x00, 0x7F, 0xFF}, 8)},
		"Boundary":  {reason: "Values around the group limits survive.", src: []byte{0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFE, 0x80, 0, 0, 0}},
		"RandomKey": {reason: "Arbitrary bytes survive.", src: randomBytes(t, 1024)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := EncodeZ85(tc.src)
			require.NoError(t, err, tc.reason)
			assert.Len(t, s, len(tc.src)/4*5, tc.reason)
			got, err := DecodeZ85(s)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.src, got, tc.reason)
		})
	}
}

// FuzzZ85 checks that decoding never panics and that whatever decodes
// re-encodes to the same text, i.e. the overflow check leaves exactly one
// spelling per value.
func FuzzZ85(f *testing.F) {
	for _, s := range []string{"HelloWorld", "%nSc0", "%nSc1", "%%%%%", "", "0000", "Hell_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := DecodeZ85(s)
		if err != nil {
			return
		}
		again, err := EncodeZ85(b)
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}
