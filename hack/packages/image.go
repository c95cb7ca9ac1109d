package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The runtime user of every image: distroless's "nonroot", so the images
// built here and the Dockerfile's (gcr.io/distroless/static-debian12:nonroot)
// run as the same uid.
const (
	nonrootUID   = 65532
	nonrootUser  = "65532:65532"
	caBundlePath = "etc/ssl/certs/ca-certificates.crt"
)

// imageEnv is the environment distroless static sets: the burst
// controller talks TLS to target clusters and needs the CA bundle.
var imageEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=/" + caBundlePath,
}

// entry is one file or directory of a layer.
type entry struct {
	name string
	mode int64
	dir  bool
	data []byte
}

// baseEntries is the base every runtime image gets instead of an empty
// one: what distroless static provides that a static Go binary uses — a CA
// bundle (taken from the build machine, Debian's ca-certificates, as
// distroless takes Debian's), a passwd and group file naming the nonroot
// user, its home and /tmp.
func baseEntries(caBundle []byte) []entry {
	return []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnobody:x:65534:\nnonroot:x:%d:\n", nonrootUID))},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonrootUID, nonrootUID))},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: caBundlePath, mode: 0o644, data: caBundle},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
}

// layer is a deterministic layer of entries: fixed times, the order
// given, nonroot's home owned by nonroot.
func layer(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if e.name == "home/nonroot/" {
			h.Uid, h.Gid = nonrootUID, nonrootUID
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// runtimeImage is a package's runtime image for linux/<arch>: the base
// layer, then one layer with the static binary at /<entry>, run as nonroot.
func runtimeImage(binary []byte, entryName, port, arch string, caBundle []byte) (v1.Image, error) {
	base, err := layer(baseEntries(caBundle))
	if err != nil {
		return nil, err
	}
	app, err := layer([]entry{{name: entryName, mode: 0o755, data: binary}})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, app)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = arch, "linux"
	cfg.Config.Entrypoint = []string{"/" + entryName}
	cfg.Config.User = nonrootUser
	cfg.Config.Env = imageEnv
	cfg.Config.ExposedPorts = map[string]struct{}{port: {}}
	cfg.Created = v1.Time{Time: time.Unix(0, 0)}
	return mutate.ConfigFile(img, cfg)
}

// writeImage writes the runtime image of binary as an OCI image tarball.
func writeImage(binary, entryName, port, repo, arch, caBundle, path string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("%w (build it with make build-linux)", err)
	}
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return fmt.Errorf("cannot read the CA bundle for the image: %w (install Debian's ca-certificates, or pass -ca-bundle)", err)
	}
	img, err := runtimeImage(data, entryName, port, arch, ca)
	if err != nil {
		return err
	}
	ref, err := name.NewTag("flux-framework/" + repo + ":latest")
	if err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}
