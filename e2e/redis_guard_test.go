package e2e

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
)

// TestE2ERedisKillHolderNoOverlap is two hosts on one Redis (ttl 2 s) for
// 20 s, the holder's daemon SIGKILLed mid-run again and again (the daemon
// alone: its run goes on, its keeper renewing the lease) and started
// again: no two runs of the job may overlap, and each run has one record
// on its host. Without a keeper, the killed daemon's run outlives its
// lease and the other host starts next to it.
func TestE2ERedisKillHolderNoOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	srv := redistest.New(t)
	runs := filepath.Join(t.TempDir(), "runs.txt") // outside both state dirs
	// A run lasts 4 s, longer than the TTL, and records its end also when
	// it is ended (SIGTERM: the trap; `wait` lets it run at once).
	jobs := fmt.Sprintf(`jobs:
  - name: sync
    schedule: "@every 1s"
    command: trap 'echo "end $(date +%%s%%N) $$" >> %[1]s; exit 143' TERM; echo "start $(date +%%s%%N) $$" >> %[1]s; sleep 4 & wait; trap '' TERM; echo "end $(date +%%s%%N) $$" >> %[1]s
    timeout: 30s
`, runs)
	hosts := []*sandbox{redisSandbox(t, srv.URL(), jobs), redisSandbox(t, srv.URL(), jobs)}
	daemons := []*proc{hosts[0].startDaemon(), hosts[1].startDaemon()}
	var kills []time.Time
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		since := time.Now()
		if len(kills) > 0 {
			since = kills[len(kills)-1]
		}
		var holder int
		waitFor(t, 10*time.Second, "a run after the last kill", func() bool {
			for i, d := range daemons {
				if startedSince(t, d, since) {
					holder = i
					return true
				}
			}
			return false
		})
		time.Sleep(700 * time.Millisecond) // mid-run, after a renewal or two
		if err := syscall.Kill(daemons[holder].pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		kills = append(kills, time.Now())
		daemons[holder].wait(5 * time.Second)
		daemons[holder] = hosts[holder].startDaemon()
	}
	time.Sleep(5 * time.Second) // the last kill's aftermath: its run goes on to its end
	stopDaemons(t, daemons...)

	spans := readSpans(t, runs)
	overlaps := countOverlaps(spans)
	t.Logf("%d kills, %d runs, %d overlapping pairs; killed runs ended %v after the kill (lease ttl 2 s)",
		len(kills), len(spans), overlaps, endsAfterKills(spans, kills))
	if overlaps > 0 {
		t.Errorf("%d pairs of runs overlap", overlaps)
	}
	if records := len(hosts[0].runsByID()) + len(hosts[1].runsByID()); records != len(spans) {
		t.Errorf("%d runs, %d records", len(spans), records)
	}
	if len(kills) < 3 || len(spans) < len(kills) {
		t.Errorf("%d kills, %d runs in 20 s: the test did not exercise takeovers", len(kills), len(spans))
	}
}

// endsAfterKills is, for each kill, how long after it the run that was
// in flight ended.
func endsAfterKills(spans []runSpan, kills []time.Time) []time.Duration {
	var out []time.Duration
	for _, k := range kills {
		ns := k.UnixNano()
		for _, sp := range spans {
			if sp.start < ns && ns < sp.end {
				out = append(out, time.Duration(sp.end-ns).Round(time.Millisecond))
			}
		}
	}
	return out
}
