package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setupDirs checks the rundir and the local-uri's directory as Flux does
// (they must exist and belong to this user) and makes a rundir when none
// is given.
func (b *broker) setupDirs() error {
	if d, ok := b.attrs["rundir"]; ok {
		if err := checkDir(d); err != nil {
			return fmt.Errorf("rundir %s", err)
		}
		b.rundir = d
	} else {
		d, err := os.MkdirTemp("", "flux-")
		if err != nil {
			return fmt.Errorf("rundir: %s", errnoText(err))
		}
		b.rundir, b.ownRundir = d, true
		b.attrs["rundir"] = d
	}
	if d, ok := b.attrs["statedir"]; ok {
		if err := checkDir(d); err != nil {
			return fmt.Errorf("statedir %s", err)
		}
	}
	uri, ok := b.attrs["local-uri"]
	if !ok {
		uri = fmt.Sprintf("local://%s/local-%d", b.rundir, b.rank)
		b.attrs["local-uri"] = uri
	}
	path, ok := strings.CutPrefix(uri, "local://")
	if !ok {
		return fmt.Errorf("local-uri is malformed")
	}
	if err := checkDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("local-uri directory %s", err)
	}
	if len(path) > 107 {
		return fmt.Errorf("local-uri length of %d bytes exceeds max 107 AF_UNIX socket path length", len(path))
	}
	b.localPath = path
	return nil
}

// checkDir is rundir_checkdir: a directory this user owns.
func checkDir(d string) error {
	st, err := os.Stat(d)
	if err != nil {
		return fmt.Errorf("%s: %s", d, errnoText(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: Not a directory", d)
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) != os.Getuid() {
		return fmt.Errorf("%s: not owned by instance owner", d)
	}
	return nil
}

// setupAttrs reads the attributes the double acts on, refusing values Flux
// refuses and those it cannot honour.
func (b *broker) setupAttrs(conf map[string]any) error {
	b.quorum = b.size
	if v, ok := b.attrs["broker.quorum"]; ok {
		switch v {
		case "0":
			b.quorum = 1
		case fmt.Sprintf("0-%d", b.size-1):
			b.quorum = b.size
		default:
			q, err := strconv.Atoi(v)
			if err != nil || q < 1 || q > b.size {
				return fmt.Errorf("Error parsing broker.quorum attribute")
			}
			b.quorum = q
		}
	}
	b.attrs["broker.quorum"] = strconv.Itoa(b.quorum)
	duration := func(name string, def time.Duration) (time.Duration, error) {
		v, ok := b.attrs["tbon."+name]
		if !ok {
			s, err := tableString(conf, "tbon", name)
			if err != nil || s == "" {
				return def, err
			}
			v = s
		}
		d, err := parseFSD(v)
		if err != nil {
			return 0, fmt.Errorf("Error parsing tbon.%s attribute", name)
		}
		if d == 0 {
			d = def
		}
		return d, nil
	}
	var err error
	if b.connectTimeout, err = duration("connect_timeout", 30*time.Second); err != nil {
		return err
	}
	if b.peerTimeout, err = duration("tcp_user_timeout", 20*time.Second); err != nil {
		return err
	}
	for _, rc := range []string{"broker.rc1_path", "broker.rc3_path"} {
		if v := b.attrs[rc]; v != "" {
			return notImplemented(rc + " (the double runs no rc scripts; set it empty)")
		}
	}
	if v, ok := b.attrs["content.restore"]; ok && b.rank == 0 {
		if err := checkRestore(v); err != nil {
			return err
		}
		b.log.logf(logNotice, "content.restore=%s: readable; nothing restored: the double has no content store", v)
	}
	if v, ok := b.attrs["content.dump"]; ok && b.rank == 0 {
		if err := checkDumpPath(v); err != nil {
			return err
		}
		b.contentDump = v
	}
	if b.rank < 0 {
		return fmt.Errorf("%s not found in hosts", b.hostname)
	}
	b.attrs["rank"] = strconv.Itoa(b.rank)
	b.attrs["size"] = strconv.Itoa(b.size)
	b.attrs["version"] = fluxVersion
	b.attrs["broker.pid"] = strconv.Itoa(os.Getpid())
	b.attrs["broker.boot-method"] = "config"
	var hosts []string
	for _, h := range b.boot.Hosts {
		hosts = append(hosts, h.Host)
	}
	b.attrs["hostlist"] = encodeHostlist(hosts)
	b.attrs["tbon.level"] = strconv.Itoa(b.topo.level(b.rank))
	b.attrs["tbon.descendants"] = strconv.Itoa(len(b.topo.subtree(b.rank)) - 1)
	b.attrs["instance-level"] = "0"
	b.attrs["security.owner"] = strconv.Itoa(os.Getuid())
	return nil
}

// removeRundir removes a rundir the broker made itself, as Flux cleans up
// its temporary rundir.
func (b *broker) removeRundir() {
	if b.ownRundir {
		_ = os.RemoveAll(b.rundir) // best effort on the way out: nothing is left to report to
	}
}
