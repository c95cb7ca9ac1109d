package main

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// attrFlag is how the broker treats an attribute given with -S.
type attrFlag int

const (
	attrSettable attrFlag = iota
	attrReadonly          // may not be set on the command line
)

// attrTable is flux-core 0.88's registered attributes (src/broker/attr.c):
// -S of any other name fails with "unknown attribute", as in Flux, so a
// typo in the scripts' broker options fails the test.
var attrTable = []struct {
	pattern string
	flag    attrFlag
}{
	{"rank", attrReadonly}, {"size", attrReadonly}, {"version", attrReadonly},
	{"rundir", attrSettable}, {"rundir-cleanup", attrSettable},
	{"statedir", attrSettable}, {"statedir-cleanup", attrSettable},
	{"security.owner", attrReadonly}, {"local-uri", attrSettable},
	{"parent-uri", attrReadonly}, {"instance-level", attrReadonly},
	{"jobid", attrReadonly}, {"jobid-path", attrReadonly},
	{"parent-kvs-namespace", attrReadonly}, {"hostlist", attrSettable},
	{"hostname", attrSettable}, {"broker.mapping", attrReadonly},
	{"broker.critical-ranks", attrSettable}, {"broker.boot-method", attrSettable},
	{"broker.pid", attrReadonly}, {"broker.quorum", attrSettable},
	{"broker.quorum-warn", attrSettable}, {"broker.shutdown-warn", attrSettable},
	{"broker.shutdown-timeout", attrSettable}, {"broker.cleanup-timeout", attrSettable},
	{"broker.unload-builtins-timeout", attrSettable}, {"broker.rc1_path", attrSettable},
	{"broker.rc3_path", attrSettable}, {"broker.rc2_none", attrSettable},
	{"broker.rc2_pgrp", attrSettable}, {"broker.exit-restart", attrSettable},
	{"broker.module-nopanic", attrSettable}, {"broker.starttime", attrReadonly},
	{"broker.sd-notify", attrSettable}, {"broker.sd-stop-timeout", attrSettable},
	{"broker.exit-norestart", attrSettable}, {"broker.recovery-mode", attrSettable},
	{"broker.uuid", attrReadonly}, {"conf.shell_initrc", attrSettable},
	{"conf.shell_pluginpath", attrSettable}, {"config.path", attrSettable},
	{"tbon.topo", attrSettable}, {"tbon.descendants", attrReadonly},
	{"tbon.level", attrReadonly}, {"tbon.maxlevel", attrReadonly},
	{"tbon.endpoint", attrReadonly}, {"tbon.parent-endpoint", attrReadonly},
	{"tbon.zmqdebug", attrSettable}, {"tbon.zmq_io_threads", attrSettable},
	{"tbon.child_rcvhwm", attrSettable}, {"tbon.prefertcp", attrSettable},
	{"tbon.interface-hint", attrSettable}, {"tbon.torpid_min", attrSettable},
	{"tbon.torpid_max", attrSettable}, {"tbon.tcp_user_timeout", attrSettable},
	{"tbon.connect_timeout", attrSettable}, {"log-ring-size", attrSettable},
	{"log-forward-level", attrSettable}, {"log-critical-level", attrSettable},
	{"log-filename", attrSettable}, {"log-syslog-enable", attrSettable},
	{"log-syslog-level", attrSettable}, {"log-stderr-mode", attrSettable},
	{"log-stderr-level", attrSettable}, {"log-level", attrSettable},
	{"content.backing-module", attrSettable}, {"content.hash", attrSettable},
	{"content.dump", attrSettable}, {"content.restore", attrSettable},
	{"cron.directory", attrSettable},
	{"test.*", attrSettable}, {"test-ro.*", attrReadonly}, {"test-nr.*", attrSettable},
	{"test-im.*", attrSettable}, {"test-rd.*", attrSettable},
	{"vendor.*", attrSettable}, {"tbon.fanout", attrSettable},
}

// setAttr records -S name=value as attr_set_cmdline does. A name given
// without =value is set to the empty string (-Sbroker.rc2_none).
func setAttr(attrs map[string]string, arg string) error {
	name, val, _ := strings.Cut(arg, "=")
	for _, a := range attrTable {
		if ok, _ := path.Match(a.pattern, name); ok {
			if a.flag == attrReadonly {
				return fmt.Errorf("%s: attribute may not be set on the command line", name)
			}
			attrs[name] = val
			return nil
		}
	}
	return fmt.Errorf("%s: unknown attribute", name)
}

// parseFSD parses an RFC 23 Flux Standard Duration: a non-negative number
// with an optional unit, ms, s, m, h or d (seconds without one).
func parseFSD(s string) (time.Duration, error) {
	unit := time.Second
	num := s
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}} {
		if strings.HasSuffix(s, u.suffix) {
			num, unit = strings.TrimSuffix(s, u.suffix), u.d
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || num == "" || strings.ContainsAny(num, "eE+-xXnN") {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return time.Duration(f * float64(unit)), nil
}

// formatFSD writes a duration as Flux's fsd() does for people: 1.234s,
// 12.3s, 1.5m, 2h.
func formatFSD(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 1e-3:
		return "0s"
	case s < 10:
		return strconv.FormatFloat(s, 'f', 3, 64) + "s"
	case s < 60:
		return strconv.FormatFloat(s, 'g', 4, 64) + "s"
	case s < 3600:
		return strconv.FormatFloat(s/60, 'g', 4, 64) + "m"
	case s < 86400:
		return strconv.FormatFloat(s/3600, 'g', 4, 64) + "h"
	}
	return strconv.FormatFloat(s/86400, 'g', 4, 64) + "d"
}
