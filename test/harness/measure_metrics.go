package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// What the control plane's processes use, for load tests.

// FunctionMetricsURL is the function's Prometheus endpoint
// (--metrics-address).
func (cp *ControlPlane) FunctionMetricsURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(cp.ports.fnMetrics) + "/metrics"
}

// RunFunctionCalls is how many RunFunction calls the running function
// process has answered (any status code), from its gRPC server metrics
// (grpc_server_handled_total, both proto versions). It counts from the
// process's start.
func (cp *ControlPlane) RunFunctionCalls(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.FunctionMetricsURL(), nil)
	if err != nil {
		return 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read-only
	if rsp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", cp.FunctionMetricsURL(), rsp.Status)
	}
	var n float64
	found := false
	sc := bufio.NewScanner(rsp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "grpc_server_handled_total{") || !strings.Contains(line, `grpc_method="RunFunction"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		n += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s has no grpc_server_handled_total for RunFunction", cp.FunctionMetricsURL())
	}
	return int64(n), nil
}

// Usage is what a process has used so far, from /proc.
type Usage struct {
	// CPU is user plus system CPU time (utime + stime of /proc/PID/stat).
	CPU time.Duration
	// RSS is the resident set size now (VmRSS), PeakRSS its high-water mark
	// (VmHWM), in bytes.
	RSS, PeakRSS int64
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports (the kernel ABI fixes it, whatever
// CONFIG_HZ is).
const clockTicks = 100

// ProcessUsage reads a process's CPU time and memory from /proc (Linux).
func ProcessUsage(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return u, err
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so
	// count fields after the last ')'. utime and stime are fields 14 and
	// 15, i.e. 12th and 13th after the comm.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: only %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	u.CPU = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &u.RSS
		case "VmHWM":
			dst = &u.PeakRSS
		default:
			continue
		}
		fs := strings.Fields(v) // "12345 kB"
		if len(fs) != 2 || fs[1] != "kB" {
			return u, fmt.Errorf("/proc/%d/status: %s: unexpected value %q", pid, k, v)
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status: %s: %w", pid, k, err)
		}
		*dst = n * 1024
	}
	return u, nil
}

// APIServerRequests is kube-apiserver's apiserver_request_total since it
// started, summed by "VERB group/resource[/subresource]" (group "" for the
// core API), e.g. "PUT flux-framework.org/miniclusters/status". A dry run
// counts under "VERB(dry-run) ...".
func (cp *ControlPlane) APIServerRequests(ctx context.Context) (map[string]float64, error) {
	m := map[string]float64{}
	err := cp.scrapeAPIServer(ctx, func(name string, l map[string]string, v float64) {
		if name != "apiserver_request_total" {
			return
		}
		verb := l["verb"]
		if d := l["dry_run"]; d != "" && d != "false" {
			verb += "(dry-run)"
		}
		key := verb + " " + l["group"] + "/" + l["resource"]
		if s := l["subresource"]; s != "" {
			key += "/" + s
		}
		m[key] += v
	})
	return m, err
}

// apiserverMetrics is the text of kube-apiserver's /metrics.
func (cp *ControlPlane) apiserverMetrics(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.Config.Host+"/metrics", nil)
	if err != nil {
		return "", err
	}
	rsp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer rsp.Body.Close() //nolint:errcheck // read-only
	if rsp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %s", rsp.Status)
	}
	b, err := io.ReadAll(rsp.Body)
	return string(b), err
}

// labels parses the labels of a Prometheus text-format sample,
// name{k="v",...}; values here never hold quotes or backslashes.
func labels(sample string) map[string]string {
	m := map[string]string{}
	_, rest, ok := strings.Cut(sample, "{")
	if !ok {
		return m
	}
	for rest != "" && rest != "}" {
		k, after, ok := strings.Cut(rest, `="`)
		if !ok {
			break
		}
		v, after, _ := strings.Cut(after, `"`)
		m[strings.TrimLeft(k, ",")] = v
		rest = after
	}
	return m
}
