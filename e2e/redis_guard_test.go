package e2e

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/redistest"
)

// TestE2ERedisKillHolderNoOverlap is two hosts on one Redis (ttl 2 s) for
// 20 s, the holder's daemon SIGKILLed mid-run again and again (the daemon
// alone: its run goes on, its keeper renewing the lease) and started
// again: no two runs of the job may overlap, and each run has one record
// on its host. Without a keeper, the killed daemon's run outlives its
// lease and the other host starts next to it.
func TestE2ERedisKillHolderNoOverlap(t *testing.T) {
	t.Parallel()
	srv := redistest.New(t)
	runs := filepath.Join(t.TempDir(), "runs.txt") // outside both state dirs
	// A run lasts 4 s, longer than the TTL, and records its end also when
	// it is ended (SIGTERM: the trap; `wait` lets it run at once).
	jobs := fmt.Sprintf(`jobs:
  - name: sync
    schedule: "@every 1s"
    command: trap 'echo "end $(date +%%s%%N) $$" >> %[1]s; exit 143' TERM; echo "start $(date +%%s%%N) $$" >> %[1]s; sleep 4 & wait; echo "end $(date +%%s%%N) $$" >> %[1]s
    timeout: 30s
`, runs)
	hosts := []*sandbox{redisSandbox(t, srv.URL(), jobs), redisSandbox(t, srv.URL(), jobs)}
	daemons := []*proc{startDaemon(t, hosts[0]), startDaemon(t, hosts[1])}
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
		daemons[holder] = startDaemon(t, hosts[holder])
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

// startedSince reports whether d logged the start of a run after t0.
func startedSince(t *testing.T, d *proc, t0 time.Time) bool {
	for _, r := range daemonLog(t, d) {
		if r["msg"] != "run started" {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, r["time"].(string)); err == nil && at.After(t0) {
			return true
		}
	}
	return false
}

// readSpans reads the "start NS PID" / "end NS PID" lines of path, one
// span per pid; a span without an end fails the test, since every run
// records its end, also when ended.
func readSpans(t *testing.T, path string) []runSpan {
	t.Helper()
	byPID := spansByPID(t, path)
	var out []runSpan
	for pid, sp := range byPID {
		if sp.start == 0 || sp.end == 0 {
			t.Errorf("run %s has no start or no end: %+v", pid, *sp)
			continue
		}
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b runSpan) int { return cmp.Compare(a.start, b.start) })
	return out
}

// countOverlaps counts the pairs of spans that overlap in time.
func countOverlaps(spans []runSpan) int {
	n := 0
	for i := range spans {
		for j := i + 1; j < len(spans) && spans[j].start < spans[i].end; j++ {
			n++
		}
	}
	return n
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
