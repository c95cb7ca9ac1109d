package nodeimage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
)

// imageFormat is hashed into every image's cache key: bump it when the way
// layers or config are made changes, so stale tarballs are rewritten.
const imageFormat = "nodeimage-image-v1"

// inputsKey digests everything the tarball is made of. Files on disk count
// by size and mtime, not content: reading a flux-core install tree on
// every run to find it unchanged would cost as much as writing it.
func inputsKey(img Image, layers [][]entry) (string, error) {
	type keyEntry struct {
		Name, Link string
		Type       byte
		Mode, Size int64
		UID, GID   int
		MTime      int64
		Data       string `json:",omitempty"`
		Src        string `json:",omitempty"`
		SrcMTime   int64  `json:",omitempty"`
	}
	k := struct {
		Format, Ref, Base    string
		BaseSize, BaseMTime  int64
		Env, Entrypoint, Cmd []string
		WorkingDir, User     string
		Layers               [][]keyEntry
	}{
		Format: imageFormat, Ref: img.Ref, Base: img.Base,
		Env: imageEnv(img.Env), Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir, User: img.User,
	}
	if img.Base != "" {
		fi, err := os.Stat(img.Base)
		if err != nil {
			return "", err
		}
		k.BaseSize, k.BaseMTime = fi.Size(), fi.ModTime().UnixNano()
	}
	for _, es := range layers {
		var kl []keyEntry
		for _, e := range es {
			ke := keyEntry{Name: e.hdr.Name, Link: e.hdr.Linkname, Type: e.hdr.Typeflag, Mode: e.hdr.Mode, Size: e.hdr.Size, UID: e.hdr.Uid, GID: e.hdr.Gid, MTime: e.hdr.ModTime.Unix()}
			if e.data != nil {
				sum := sha256.Sum256(e.data)
				ke.Data = hex.EncodeToString(sum[:])
			}
			if e.src != "" {
				fi, err := os.Stat(e.src)
				if err != nil {
					return "", err
				}
				ke.Src, ke.SrcMTime = e.src, fi.ModTime().UnixNano()
			}
			kl = append(kl, ke)
		}
		k.Layers = append(k.Layers, kl)
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
