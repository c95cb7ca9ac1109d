package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// waitFor polls cond every 250ms until it is true, the timeout passes, or p
// (if not nil) exits. The error names what was awaited and the last reason.
func (cp *ControlPlane) waitFor(ctx context.Context, p *process, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if p != nil {
			if err := p.alive(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s (last: %v)", timeout, what, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pollUntil is waitFor without a control plane.
func pollUntil(ctx context.Context, p *process, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	cp := &ControlPlane{opts: Options{Logf: func(string, ...any) {}}}
	return cp.waitFor(ctx, p, timeout, what, cond)
}

// healthz polls url until it answers 200.
func healthz(hc *http.Client, url string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		rsp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		_ = rsp.Body.Close()
		return rsp.StatusCode == http.StatusOK, errors.New(rsp.Status)
	}
}

// httpsHealthy polls a component's self-signed /healthz on 127.0.0.1.
func httpsHealthy(port int) func(context.Context) (bool, error) {
	return healthz(insecureHealthClient(), "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
}

// insecureHealthClient reads the self-signed health endpoints of the
// control plane's own components on 127.0.0.1.
func insecureHealthClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, loopback
}
