// Package curvetest holds what the tests of several packages share about
// CURVE certificates: a sample certificate Flux brokers have loaded, and the
// check that a message repeats no piece of a key.
package curvetest

import "strings"

// SampleCert is the certificate of flux-operator's custom-config example
// verbatim (YAML block indentation removed), which Flux brokers have loaded.
const SampleCert = `metadata
    name = "flux-cert-generator"
    keygen.hostname = "flux-sample-0"
curve
    public-key = "}D{Y3<amLLl*TIt>@b*umPD-nBr#I}[PnV!lZBkW"
    secret-key = "5khD%TixeW<j<6ssPNG>s<nY1E}5)fyk@TI)g8Xu"
`

// PieceLen is the shortest piece of a key a message must not repeat.
const PieceLen = 8

// Piece returns a piece of PieceLen bytes of one of keys that msg repeats,
// or "".
func Piece(msg string, keys ...string) string {
	for _, k := range keys {
		for i := 0; i+PieceLen <= len(k); i++ {
			if strings.Contains(msg, k[i:i+PieceLen]) {
				return k[i : i+PieceLen]
			}
		}
	}
	return ""
}
