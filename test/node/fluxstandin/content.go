package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// checkRestore checks content.restore's archive as far as the double can:
// it must be readable, and a tar archive (or gzip of one) must be one; a
// SQLite database must start with SQLite's header. Nothing is restored:
// the double has no content store.
func checkRestore(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("content.restore: %s: %s", path, errnoText(err))
	}
	defer func() { _ = f.Close() }() // read only: a close error loses nothing
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if string(head[:n]) == "SQLite format 3\x00" {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("content.restore: %s: %s", path, errnoText(err))
	}
	var r io.Reader = f
	if n >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("content.restore: %s: %s", path, err)
		}
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		_, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("content.restore: %s: not a SQLite database nor an archive flux dump writes: %s", path, err)
		}
	}
}

// checkDumpPath refuses, at start, a content.dump the double cannot write,
// rather than failing at the end.
func checkDumpPath(path string) error {
	for _, ext := range []string{".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(path, ext) {
			return nil
		}
	}
	return notImplemented("content.dump to " + path + " (only .tar, .tar.gz and .tgz)")
}

// writeDump writes content.dump's archive at shutdown. The double has no
// content store, so the archive holds one file that says so: a test can see
// that the dump was asked for and written where the scripts expect it,
// never that content was saved.
func writeDump(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %s", path, errnoText(err))
	}
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(path, "gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	body := []byte(versionLine + ": no content store, nothing was dumped\n")
	tw := tar.NewWriter(w)
	err = tw.WriteHeader(&tar.Header{Name: "FLUX-STANDIN-EMPTY-DUMP", Mode: 0o644, Size: int64(len(body)), ModTime: time.Now()})
	if err == nil {
		_, err = tw.Write(body)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil && gz != nil {
		err = gz.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
