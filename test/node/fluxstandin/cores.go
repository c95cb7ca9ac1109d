package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// localCores counts the cores this process may run on the way hwloc
// counts them for Flux: physical cores (not hardware threads) among the
// CPUs of its affinity mask. Without /sys (or /proc) it falls back to the
// CPUs Go sees. GPUs are never found: the double has no hwloc.
func localCores() int {
	cpus := allowedCPUs()
	if len(cpus) == 0 {
		return runtime.NumCPU()
	}
	cores := map[string]bool{}
	for _, c := range cpus {
		dir := "/sys/devices/system/cpu/cpu" + strconv.Itoa(c) + "/topology/"
		pkg, err1 := os.ReadFile(dir + "physical_package_id")
		core, err2 := os.ReadFile(dir + "core_id")
		if err1 != nil || err2 != nil {
			return len(cpus)
		}
		cores[strings.TrimSpace(string(pkg))+"/"+strings.TrimSpace(string(core))] = true
	}
	return len(cores)
}

// allowedCPUs is Cpus_allowed_list of /proc/self/status, expanded.
func allowedCPUs() []int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			ids, err := parseIDSet(strings.TrimSpace(v))
			if err != nil {
				return nil
			}
			return ids
		}
	}
	return nil
}

// parseIDSet reads an RFC 22 idset such as 0-3,7.
func parseIDSet(s string) ([]int, error) {
	var out []int
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, &idsetError{s}
		}
		b := a
		if isRange {
			// flux's idset_decode refuses a range that does not ascend,
			// 0-0 too.
			if b, err = strconv.Atoi(hi); err != nil || b <= a {
				return nil, &idsetError{s}
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

type idsetError struct{ s string }

func (e *idsetError) Error() string { return "invalid idset: " + e.s }

// encodeIDSet writes ids (sorted, distinct) as an RFC 22 idset: 0-3,7.
func encodeIDSet(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, strconv.Itoa(ids[i])+"-"+strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
