package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// TestCircuitBreakerLosesNoChange pins that a change of a MiniCluster is
// composed while Crossplane's circuit breaker drops the composite's watch
// events. Crossplane opens it when a composite gets a burst of events, as
// its status ping-pong under informer lag produces (crossplane/crossplane
// #7062; it tripped in a CI run of TestTenantsV2), and then passes one
// event in 30 seconds: a change that comes right after another event is
// dropped, and with the function's day-long TTL it would wait for the
// next resync. Here the breaker is made to trip at once (a bucket of 10
// events, refilled every 1,000 seconds, open for 10 minutes); the
// function answers a composite whose Responsive condition is False with a
// 30-second TTL, so the dropped change is composed within a minute. The
// v2 shape: the MiniCluster is the composite that carries the condition.
func TestCircuitBreakerLosesNoChange(t *testing.T) {
	requireE2E(t)
	cp := startOwnControlPlane(t, harness.Options{Name: "breaker", Shape: driver.ShapeV2, CrossplaneFlags: []string{
		"--circuit-breaker-burst=10", "--circuit-breaker-refill-rate=0.001", "--circuit-breaker-cooldown=10m",
	}})
	const ns, name = "breaker", "flux-sample"
	createNamespace(t, cp, ns)
	createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
	runningCluster(t, cp, ns, name)

	responsiveFalse := func() error {
		c, err := getClaim(t, cp, ns, name)
		if err != nil {
			return err
		}
		if st, msg := condition(c, "Responsive"); st != "False" {
			return fmt.Errorf("Responsive=%s %s: the circuit breaker is not open", st, msg)
		}
		return nil
	}
	eventually(t, time.Minute, "Crossplane's circuit breaker is open (Responsive=False)", responsiveFalse)

	// An event the breaker passes (it lets one through every 30 seconds,
	// so the test waits that long), and its reconcile done; then the
	// change, which comes too soon after it and is dropped.
	time.Sleep(31 * time.Second)
	if err := mergePatch(t, cp, ns, name, `{"metadata":{"annotations":{"e2e.flux-framework.org/probe":"1"}}}`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	changed := time.Now()
	if err := mergePatch(t, cp, ns, name, `{"spec":{"size":3}}`); err != nil {
		t.Fatal(err)
	}
	waitJobSize(t, cp, ns, name, 3)
	t.Logf("the Job was scaled %s after the change", time.Since(changed).Round(100*time.Millisecond))
	if err := responsiveFalse(); err != nil {
		t.Errorf("after the scale: %v; want the breaker still open, or this test proves nothing", err)
	}
}
