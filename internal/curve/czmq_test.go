package curve

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flux-framework/minicluster-crossplane/internal/curve/curvetest"
)

// The tests in this file check our certificates against CZMQ, the library
// the upstream operator and older Flux releases use to write them, plus
// libzmq's own zmq_curve_public for the key derivation. They need a C
// compiler and libczmq-dev (Debian: apt-get install libczmq-dev).
//
// CURVE_CZMQ_TEST=1 makes a missing toolchain a failure (for CI that
// installs it), CURVE_CZMQ_TEST=0 skips; unset, the tests run when the
// toolchain is there and skip otherwise.

const czmqLoadSrc = `#include <czmq.h>

int main (int argc, char *argv[])
{
    if (argc != 2)
        return 2;
    zcert_t *cert = zcert_load (argv[1]);
    if (!cert) {
        fprintf (stderr, "zcert_load failed\n");
        return 1;
    }
    char derived[41];
    if (zmq_curve_public (derived, zcert_secret_txt (cert)) != 0) {
        fprintf (stderr, "zmq_curve_public: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    const char *name = zcert_meta (cert, "name");
    const char *host = zcert_meta (cert, "keygen.hostname");
    printf ("public=%s\n", zcert_public_txt (cert));
    printf ("secret=%s\n", zcert_secret_txt (cert));
    printf ("derived=%s\n", derived);
    printf ("name=%s\n", name ? name : "<none>");
    printf ("hostname=%s\n", host ? host : "<none>");
    zcert_destroy (&cert);
    return 0;
}
`

const czmqGenSrc = `#include <czmq.h>

int main (int argc, char *argv[])
{
    for (int i = 1; i < argc; i++) {
        zcert_t *cert = zcert_new ();
        if (!cert) {
            fprintf (stderr, "zcert_new failed\n");
            return 1;
        }
        zcert_set_meta (cert, "name", "%s", "x");
        zcert_set_meta (cert, "keygen.hostname", "x-%d", i);
        if (zcert_save_secret (cert, argv[i]) != 0) {
            fprintf (stderr, "zcert_save_secret %s failed\n", argv[i]);
            return 1;
        }
        printf ("public=%s\n", zcert_public_txt (cert));
        printf ("secret=%s\n", zcert_secret_txt (cert));
        zcert_destroy (&cert);
    }
    return 0;
}
`

// czmqCompiler returns a C compiler that can build against CZMQ, or skips.
func czmqCompiler(t *testing.T) string {
	t.Helper()
	mode := os.Getenv("CURVE_CZMQ_TEST")
	if mode == "0" {
		t.Skip("CURVE_CZMQ_TEST=0")
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		if mode == "1" {
			t.Fatalf("CURVE_CZMQ_TEST=1 but "+format, args...)
		}
		t.Skipf("CZMQ oracle unavailable: "+format, args...)
	}
	if testing.Short() && mode != "1" {
		t.Skip("CZMQ oracle skipped in -short mode")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	cc, err := exec.LookPath(cc)
	if err != nil {
		unavailable("no C compiler: %v", err)
	}
	// Probing with a real compile, rather than looking for czmq.h on disk,
	// also covers a header without the library or a non-default prefix.
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	require.NoError(t, os.WriteFile(src, []byte("#include <czmq.h>\nint main (void) { return zsys_has_curve () ? 0 : 3; }\n"), 0o600))
	bin := filepath.Join(dir, "probe")
	if out, err := exec.Command(cc, "-o", bin, src, "-lczmq", "-lzmq").CombinedOutput(); err != nil {
		unavailable("cannot build against CZMQ (install libczmq-dev): %v: %s", err, firstLine(out))
	}
	if err := exec.Command(bin).Run(); err != nil {
		unavailable("libzmq has no CURVE support: %v", err)
	}
	return cc
}

func buildC(t *testing.T, cc, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	srcPath := filepath.Join(dir, name+".c")
	require.NoError(t, os.WriteFile(srcPath, []byte(src), 0o600))
	bin := filepath.Join(dir, name)
	out, err := exec.Command(cc, "-std=c99", "-Wall", "-Werror", "-o", bin, srcPath, "-lczmq", "-lzmq").CombinedOutput()
	require.NoError(t, err, "compiling %s: %s", name, out)
	return bin
}

// runC runs a helper and returns its key=value output lines in order.
func runC(t *testing.T, bin string, args ...string) []KV {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s: %s", filepath.Base(bin), stderr.String())
	var kvs []KV
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		require.True(t, ok, "unexpected output line %q", sc.Text())
		kvs = append(kvs, KV{k, v})
	}
	return kvs
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// TestCZMQLoadsOurCertificates has CZMQ's zcert_load read what Marshal
// writes, and libzmq derive the public key from the secret it read.
func TestCZMQLoadsOurCertificates(t *testing.T) {
	cc := czmqCompiler(t)
	load := buildC(t, cc, "load", czmqLoadSrc)

	sample, err := Parse([]byte(curvetest.SampleCert))
	require.NoError(t, err)
	type want struct {
		name, hostname string
	}
	cases := map[string]struct {
		reason string
		cert   func(t *testing.T) *Certificate
		want   want
	}{
		"UpstreamSample": {
			reason: "The upstream sample keys, re-marshalled.",
			cert:   func(*testing.T) *Certificate { return sample },
			want:   want{name: "flux-cert-generator", hostname: "flux-sample-0"},
		},
		"DefaultName": {
			reason: "A generated certificate with the default name.",
			cert: func(t *testing.T) *Certificate {
				c, err := Generate(nil, KV{"keygen.hostname", "flux-sample-0"})
				require.NoError(t, err)
				return c
			},
			want: want{name: "flux-cert-generator", hostname: "flux-sample-0"},
		},
		"MiniCluster": {
			reason: "What the function generates for a MiniCluster.",
			cert: func(t *testing.T) *Certificate {
				c, err := Generate(nil, KV{"name", "flux-sample"}, KV{"keygen.hostname", "flux-sample-0"})
				require.NoError(t, err)
				return c
			},
			want: want{name: "flux-sample", hostname: "flux-sample-0"},
		},
		"EveryValueCharacter": {
			reason: "CZMQ's ZPL reader keeps every character Flux allows in a value, '#' and tab included.",
			cert: func(t *testing.T) *Certificate {
				c, err := Generate(nil, KV{"name", "a b"}, KV{"keygen.hostname", "AZaz09 \t.-:+=^!/*?&<>()[]{}@%$#"})
				require.NoError(t, err)
				return c
			},
			want: want{name: "a b", hostname: "AZaz09 \t.-:+=^!/*?&<>()[]{}@%$#"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for i := range 10 {
				c := tc.cert(t)
				path := filepath.Join(t.TempDir(), "curve.cert")
				require.NoError(t, os.WriteFile(path, c.Marshal(), 0o600))
				got := runC(t, load, path)
				assert.Equal(t, []KV{
					{"public", c.PublicKeyZ85()},
					{"secret", c.SecretKeyZ85()},
					{"derived", c.PublicKeyZ85()},
					{"name", tc.want.name},
					{"hostname", tc.want.hostname},
				}, got, "%s (iteration %d)", tc.reason, i)
			}
		})
	}
}

// TestWeReadCZMQCertificates has CZMQ generate and save certificates, which
// Parse must accept, yielding CZMQ's keys and a public key that matches the
// one CZMQ derived.
func TestWeReadCZMQCertificates(t *testing.T) {
	cc := czmqCompiler(t)
	gen := buildC(t, cc, "gen", czmqGenSrc)

	const n = 25
	dir := t.TempDir()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, "cert"+strconv.Itoa(i+1))
	}
	out := runC(t, gen, paths...)
	require.Len(t, out, 2*n)

	for i, path := range paths {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		c, err := Parse(text)
		require.NoError(t, err, "CZMQ-written certificate:\n%s", text)
		assert.Equal(t, KV{"public", c.PublicKeyZ85()}, out[2*i])
		assert.Equal(t, KV{"secret", c.SecretKeyZ85()}, out[2*i+1])
		// zcert keeps metadata in a zhash, so the order it writes is not ours.
		assert.ElementsMatch(t, []KV{{"name", "x"}, {"keygen.hostname", "x-" + strconv.Itoa(i+1)}}, c.Metadata)
		if i == 0 {
			t.Logf("CZMQ wrote:\n%s", text)
		}
	}
}
