package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Job ids are FLUIDs as flux-core makes them (libutil/fluid.c): 40 bits of
// milliseconds since the instance started, 14 of generator id (the rank),
// 10 of sequence; shown in F58, base 58 behind an "ƒ" (or "f").

const f58Digits = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

type fluidGen struct {
	mu    sync.Mutex
	start time.Time
	last  uint64
	seq   uint64
}

func (g *fluidGen) next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ts := uint64(time.Since(g.start).Milliseconds()) //nolint:gosec // G115: time.Since of a past monotonic time is never negative
	if ts <= g.last {
		ts = g.last
		g.seq++
		if g.seq >= 1024 {
			ts++
			g.seq = 0
		}
	} else {
		g.seq = 0
	}
	g.last = ts
	return ts<<24 | g.seq
}

// utf8Locale is how a Flux command decides between "ƒ" and "f": a UTF-8
// locale in the environment, unless FLUX_F58_FORCE_ASCII is set.
func utf8Locale() bool {
	if os.Getenv("FLUX_F58_FORCE_ASCII") != "" {
		return false
	}
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if s := os.Getenv(v); s != "" {
			s = strings.ToLower(s)
			return strings.Contains(s, "utf-8") || strings.Contains(s, "utf8")
		}
	}
	return false
}

// f58 writes id as Flux shows job ids to people.
func f58(id uint64) string {
	prefix := "f"
	if utf8Locale() {
		prefix = "ƒ"
	}
	return prefix + f58Plain(id)
}

func f58Plain(id uint64) string {
	if id == 0 {
		return string(f58Digits[0])
	}
	var b []byte
	for id > 0 {
		b = append(b, f58Digits[id%58])
		id /= 58
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// parseJobID reads a job id as flux commands take them: F58 with either
// prefix, decimal, or 0x hexadecimal.
func parseJobID(s string) (uint64, error) {
	for _, p := range []string{"ƒ", "f"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" {
			var id uint64
			for i := 0; i < len(rest); i++ {
				d := strings.IndexByte(f58Digits, rest[i])
				if d < 0 {
					goto notF58
				}
				id = id*58 + uint64(d)
			}
			return id, nil
		}
	}
notF58:
	if strings.HasPrefix(s, "0x") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: invalid jobid", s)
	}
	return id, nil
}
