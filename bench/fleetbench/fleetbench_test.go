package fleetbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSmokeFleet is the fleet benchmark's smoke run: five hosts, ten jobs
// every 2 s, a 20-s window. Every slot is run once, by one host, with at
// most one record and two connections per slot fleet-wide.
func TestSmokeFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("five daemons for about 40 s (-short)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cronvisor")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r, err := Run(Config{Bin: bin, Hosts: 5, Jobs: 10, Every: 2 * time.Second, Duration: 20 * time.Second,
		Dir: dir, Log: os.Stderr})
	t.Log(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.Slots != 100 || r.RunOnce != r.Slots || r.Missed != 0 || r.Twice != 0 {
		t.Errorf("%d slots: run once %d, missed %d, twice %d; want 100, all run once", r.Slots, r.RunOnce, r.Missed, r.Twice)
	}
	if r.Records > r.Slots || r.Skips != 0 {
		t.Errorf("%d records (%d skips) for %d slots, want one a slot and no skip", r.Records, r.Skips, r.Slots)
	}
	if r.Connections > 2*r.Slots {
		t.Errorf("%d connections for %d slots, want at most 2 a slot", r.Connections, r.Slots)
	}
}
