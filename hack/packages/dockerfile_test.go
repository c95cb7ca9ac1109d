package main

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// distrolessNonroot is the Dockerfile's runtime base; the images built here
// reproduce what a static binary uses of it (a CA bundle, the nonroot user,
// its environment).
const distrolessNonroot = "gcr.io/distroless/static-debian12:nonroot"

// stage is what a runtime stage of the Dockerfile says about its image.
type stage struct {
	Base       string
	Binary     string // where COPY puts the binary
	Entrypoint []string
	User       string
	Ports      []string
}

// dockerStages reads the runtime stages (those FROM the distroless base) of
// the Dockerfile, by name.
func dockerStages(t *testing.T) map[string]*stage {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	out := map[string]*stage{}
	var cur *stage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			cur = nil
			if len(fields) == 4 && strings.EqualFold(fields[2], "AS") && fields[1] != "golang:1.26" {
				cur = &stage{Base: fields[1]}
				out[fields[3]] = cur
			}
		case "COPY":
			if cur != nil {
				cur.Binary = fields[len(fields)-1]
			}
		case "ENTRYPOINT":
			if cur != nil {
				if err := json.Unmarshal([]byte(strings.Join(fields[1:], " ")), &cur.Entrypoint); err != nil {
					t.Fatalf("ENTRYPOINT is not an exec form: %v", err)
				}
			}
		case "USER":
			if cur != nil {
				cur.User = fields[1]
			}
		case "EXPOSE":
			if cur != nil {
				for _, p := range fields[1:] {
					if !strings.Contains(p, "/") {
						p += "/tcp"
					}
					cur.Ports = append(cur.Ports, p)
				}
			}
		}
	}
	return out
}

// files lists an image's files (the last layer wins) with their content.
func files(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out["/"+strings.TrimSuffix(h.Name, "/")] = string(b)
		}
		_ = rc.Close()
	}
	return out
}

// TestImagesMatchDockerfile builds each runtime image as make packages does
// and compares it with the Dockerfile's stage of the same name: base,
// binary path, entrypoint, user and ports; and checks the image holds what
// the distroless base would give the binary.
func TestImagesMatchDockerfile(t *testing.T) {
	stages := dockerStages(t)
	ca := "-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"
	for _, p := range packages {
		if p.binary == "" {
			continue
		}
		t.Run(p.binary, func(t *testing.T) {
			s, ok := stages[p.binary]
			if !ok {
				t.Fatalf("the Dockerfile has no runtime stage %q (docker build --target %s)", p.binary, p.binary)
			}
			img, err := runtimeImage([]byte("binary"), p.binary, p.port, "amd64", []byte(ca))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			var ports []string
			for port := range cfg.Config.ExposedPorts {
				ports = append(ports, port)
			}
			got := stage{Base: distrolessNonroot, Binary: "/" + p.binary, Entrypoint: cfg.Config.Entrypoint, User: cfg.Config.User, Ports: ports}
			if diff := cmp.Diff(*s, got); diff != "" {
				t.Errorf("Dockerfile stage %s (-) and make packages' image (+) differ:\n%s", p.binary, diff)
			}
			fs := files(t, img)
			for path, want := range map[string]string{
				"/" + caBundlePath: ca,
				"/" + p.binary:     "binary",
			} {
				if fs[path] != want {
					t.Errorf("%s in the image: %q, want %q", path, fs[path], want)
				}
			}
			if !strings.Contains(fs["/etc/passwd"], "nonroot:x:65532:65532:") || !strings.Contains(fs["/etc/group"], "nonroot:x:65532:") {
				t.Errorf("the image's passwd and group do not name the nonroot user 65532:\n%s%s", fs["/etc/passwd"], fs["/etc/group"])
			}
			if _, ok := fs["/tmp"]; !ok {
				t.Errorf("the image has no /tmp")
			}
			if diff := cmp.Diff([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}, cfg.Config.Env); diff != "" {
				t.Errorf("environment (distroless static's): -want, +got:\n%s", diff)
			}
		})
	}
}

// ldflags returns the -ldflags="..." of the line of text that builds
// ./cmd/<binary> for an image (go build -trimpath), with vars expanded (textually) and the build argument
// VERSION, ${VERSION} or $(VERSION), written VERSION.
func ldflags(t *testing.T, text, binary string, vars map[string]string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "go build -trimpath") || !strings.Contains(line, "./cmd/"+binary) {
			continue
		}
		_, rest, ok := strings.Cut(line, `-ldflags="`)
		if !ok {
			t.Fatalf("%q builds ./cmd/%s without -ldflags", strings.TrimSpace(line), binary)
		}
		flags, _, _ := strings.Cut(rest, `"`)
		for k, v := range vars {
			flags = strings.ReplaceAll(flags, k, v)
		}
		return strings.NewReplacer("${VERSION}", "VERSION", "$(VERSION)", "VERSION").Replace(flags)
	}
	t.Fatalf("no line builds ./cmd/%s", binary)
	return ""
}

// TestBuildFlagsMatchDockerfile: the Dockerfile and make packages
// (Makefile build-linux) build the binaries with the same linker flags,
// the function's version (function.Version, stamped on what it composes)
// included.
func TestBuildFlagsMatchDockerfile(t *testing.T) {
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(mk), "\n") {
		if k, v, ok := strings.Cut(line, " := "); ok && !strings.ContainsAny(k, " \t") {
			vars["$("+k+")"] = v
		}
	}
	for _, p := range packages {
		if p.binary == "" {
			continue
		}
		d, m := ldflags(t, string(docker), p.binary, nil), ldflags(t, string(mk), p.binary, vars)
		if d != m {
			t.Errorf("./cmd/%s: the Dockerfile links with %q, make packages with %q", p.binary, d, m)
		}
		if p.binary == "function" && !strings.Contains(m, "-X github.com/flux-framework/minicluster-crossplane/function.Version=VERSION") {
			t.Errorf("./cmd/function: make packages links with %q, without the function's version", m)
		}
	}
}
