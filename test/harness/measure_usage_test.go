package harness

import (
	"os"
	"testing"
	"time"
)

func TestProcessUsage(t *testing.T) {
	// Burn some CPU so the test process has used at least a tick.
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	u, err := ProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.RSS <= 0 || u.PeakRSS < u.RSS || u.RSSAnon <= 0 || u.RSSFile <= 0 || u.RSSAnon+u.RSSFile > u.RSS {
		t.Errorf("ProcessUsage(self) = %+v, want CPU > 0, 0 < RSS <= PeakRSS and RssAnon, RssFile > 0 within RSS", u)
	}
	if _, err := ProcessUsage(-1); err == nil {
		t.Error("ProcessUsage(-1) did not fail")
	}
}
