package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// What the function and kube-apiserver count (their /metrics), for load
// tests: requests and writes, where the audit log (measure_audit.go) says
// who made them.

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

// EtcdWrites is kube-apiserver's etcd_requests_total for the operations
// that write (create, update, delete) since it started, summed by
// "operation group/resource" (e.g. "update flux-framework.org/miniclusters").
// A request that changes nothing (an apply or update of identical content)
// is answered without a write to etcd, so these count the writes that
// changed something, where apiserver_request_total counts requests.
func (cp *ControlPlane) EtcdWrites(ctx context.Context) (map[string]float64, error) {
	m := map[string]float64{}
	err := cp.scrapeAPIServer(ctx, func(name string, l map[string]string, v float64) {
		if name != "etcd_requests_total" {
			return
		}
		switch op := l["operation"]; op {
		case "create", "update", "delete":
			res := l["resource"]
			if res == "" {
				res = l["type"] // older label
			}
			m[op+" "+l["group"]+"/"+res] += v
		}
	})
	return m, err
}

// scrapeAPIServer calls f with every sample of kube-apiserver's /metrics.
func (cp *ControlPlane) scrapeAPIServer(ctx context.Context, f func(name string, labels map[string]string, v float64)) error {
	body, err := cp.apiserverMetrics(ctx)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return fmt.Errorf("metric line %q: %w", line, err)
		}
		name, _, _ := strings.Cut(line[:i], "{")
		f(name, labels(line[:i]), v)
	}
	return sc.Err()
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
