package curve

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// z85Alphabet is the ZeroMQ RFC 32 alphabet. It deliberately avoids quote
// and backslash characters, which is why a key can sit inside a ZPL
// "value" without escaping.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Decoder maps a byte to its digit value plus one, so that the zero value
// marks a byte outside the alphabet without a second lookup table.
var z85Decoder = func() (t [256]byte) {
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = byte(i + 1)
	}
	return t
}()

func isZ85Char(c byte) bool { return z85Decoder[c] != 0 }

// EncodeZ85 encodes src as Z85 (ZeroMQ RFC 32). RFC 32 defines no padding,
// so len(src) must be a multiple of 4.
func EncodeZ85(src []byte) (string, error) {
	if len(src)%4 != 0 {
		return "", fmt.Errorf("z85: input length %d is not a multiple of 4", len(src))
	}
	var b strings.Builder
	b.Grow(len(src) / 4 * 5)
	var digits [5]byte
	for i := 0; i < len(src); i += 4 {
		v := binary.BigEndian.Uint32(src[i : i+4])
		for j := 4; j >= 0; j-- {
			digits[j] = z85Alphabet[v%85]
			v /= 85
		}
		b.Write(digits[:])
	}
	return b.String(), nil
}

// DecodeZ85 decodes Z85 text. Besides length and alphabet it rejects groups
// whose value exceeds 2^32-1 ("%%%%%" is 85^5-1): libzmq refuses those, and
// accepting them would let two different strings decode to the same key.
func DecodeZ85(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85: input length %d is not a multiple of 5", len(s))
	}
	dst := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			d := z85Decoder[s[j]]
			if d == 0 {
				return nil, fmt.Errorf("z85: character %s at offset %d is not in the Z85 alphabet", describeByte(s[j]), j)
			}
			v = v*85 + uint64(d-1)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85: group at offset %d encodes %d, which exceeds 2^32-1", i, v)
		}
		dst = append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return dst, nil
}
