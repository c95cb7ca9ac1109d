package nodeimage

import (
	"archive/tar"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeLayer writes a layer's tar stream. A file on disk must still be as
// planned: its size is in the header already written.
func writeLayer(w io.Writer, es []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range es {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		switch {
		case e.src != "":
			if err := copyFile(tw, e.src, h.Size); err != nil {
				return err
			}
		case len(e.data) > 0:
			if _, err := tw.Write(e.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, src string, size int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if _, err := io.CopyN(w, f, size); err != nil {
		return fmt.Errorf("%s changed while being copied: %w", src, err)
	}
	return nil
}

// layerOf streams es as a layer. go-containerregistry reads a layer more
// than once (digest, diff ID, writing); each read makes the stream anew.
func layerOf(es []entry) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { _ = pw.CloseWithError(writeLayer(pw, es)) }()
		return pr, nil
	}, tarball.WithCompressedCaching)
}
