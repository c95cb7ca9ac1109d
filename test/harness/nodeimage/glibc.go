package nodeimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ELFNeedingGlibc finds, in the root filesystem tarball rootfs (Rootfs's),
// an executable of /usr/bin that needs a newer glibc than than (e.g. "2.36",
// bookworm's) by its symbol versions, and writes it to dst. A binary built
// on a newer Debian release than an image's, it fails there as a Flux view
// built for another OS does: the loader refuses it (version `GLIBC_2.38'
// not found). It returns the binary's path in the root filesystem and the
// newest glibc version it needs.
func ELFNeedingGlibc(rootfs, than, dst string) (string, string, error) {
	f, err := os.Open(rootfs)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", "", fmt.Errorf("%s has no executable in /usr/bin that needs a glibc newer than %s", rootfs, than)
		}
		if err != nil {
			return "", "", fmt.Errorf("cannot read %s: %w", rootfs, err)
		}
		name := "/" + strings.TrimPrefix(h.Name, "./")
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, "/usr/bin/") || h.Mode&0o111 == 0 || h.Size > 8<<20 {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", "", fmt.Errorf("cannot read %s from %s: %w", name, rootfs, err)
		}
		need := newestGlibc(b)
		if need == "" || !versionAfter(need, than) {
			continue
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			return "", "", err
		}
		return name, need, nil
	}
}

// newestGlibc is the newest GLIBC_x.y version an ELF's imported symbols
// name, "" if it is not a dynamic ELF.
func newestGlibc(b []byte) string {
	e, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	defer func() { _ = e.Close() }()
	syms, err := e.ImportedSymbols()
	if err != nil {
		return ""
	}
	newest := ""
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if ok && (newest == "" || versionAfter(v, newest)) {
			newest = v
		}
	}
	return newest
}

// versionAfter tells whether dotted version a is newer than b.
func versionAfter(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x > y
		}
	}
	return false
}
