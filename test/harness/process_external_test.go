package harness

import "testing"

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := freePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d is invalid or repeated", ports, p)
		}
		seen[p] = true
	}
}
