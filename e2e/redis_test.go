package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
)

func TestE2ERedisTwoHostsNeverOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	srv := redistest.New(t)
	shared := t.TempDir() // both "hosts" write the runs here
	jobs := fmt.Sprintf(`jobs:
  - name: sync
    schedule: "@every 1s"
    command: echo "start $(date +%%s%%N) $$" >> %[1]s/runs.txt; sleep 2.5; echo "end $(date +%%s%%N) $$" >> %[1]s/runs.txt
    timeout: 10s
  - name: tick
    schedule: "* * * * * *"
    command: echo "$CRONVISOR_SCHEDULED_AT $$" >> %[1]s/tick.txt; sleep 0.05
    timeout: 5s
`, shared)
	a, b := redisSandbox(t, srv.URL(), jobs), redisSandbox(t, srv.URL(), jobs)
	da, db := a.startDaemon(), b.startDaemon()
	start := time.Now()
	time.Sleep(15 * time.Second)
	stop := time.Now()
	stopDaemons(t, da, db)

	if runs := checkNoOverlap(t, filepath.Join(shared, "runs.txt"), false); runs < 4 {
		t.Errorf("only %d runs of sync in 15 s", runs)
	}
	first := start.Truncate(time.Second).Add(2 * time.Second)
	last := stop.Truncate(time.Second).Add(-time.Second)
	checkSlots(t, filepath.Join(shared, "tick.txt"), first, last)

	// Skips name the other daemon's run: its pid and host.
	runPIDs := map[string]map[string]float64{} // daemon -> run id -> job pid
	for name, d := range map[string]*proc{"a": da, "b": db} {
		runPIDs[name] = map[string]float64{}
		for _, r := range daemonLog(t, d) {
			if r["msg"] == "run started" && r["job"] == "sync" {
				runPIDs[name][r["run_id"].(string)] = r["pid"].(float64)
			}
		}
	}
	crossSkips := 0
	daemons := map[string]*proc{"a": da, "b": db}
	for name, d := range daemons {
		other := map[string]string{"a": "b", "b": "a"}[name]
		for _, r := range daemonLog(t, d) {
			if r["msg"] != "run skipped" || r["job"] != "sync" || r["holder_run_id"] == nil {
				continue
			}
			if pid, ok := runPIDs[other][r["holder_run_id"].(string)]; ok {
				crossSkips++
				// Until the run's process has started, the record names
				// its supervisor (a fire in the same millisecond sees that).
				supervisor := float64(daemons[other].pid())
				if (r["holder_pid"] != pid && r["holder_pid"] != supervisor) || r["holder_host"] == "" {
					t.Errorf("skip names holder pid %v host %v; the other host's run had pid %v (supervisor %v)", r["holder_pid"], r["holder_host"], pid, supervisor)
				}
			}
		}
	}
	if crossSkips == 0 {
		t.Error("no skip names a run of the other host")
	}
}

func TestE2ERedisTakeoverAfterTTL(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits out Redis lease TTLs; runs in the full suite")
	}
	t.Parallel()
	srv := redistest.New(t)
	arg := sleepArg("44.4")
	jobs := `jobs:
  - name: long
    schedule: "@every 1s"
    command: sleep ` + arg + `
    timeout: 60s
`
	a, b := redisSandbox(t, srv.URL(), jobs), redisSandbox(t, srv.URL(), jobs)
	da := a.startDaemon()
	waitFor(t, 10*time.Second, "a runs the job", func() bool { return strings.Contains(da.stderr(), `"msg":"run started"`) })
	db := b.startDaemon()
	waitFor(t, 10*time.Second, "b skips", func() bool { return strings.Contains(db.stderr(), `"msg":"run skipped"`) })
	// SIGKILL a's daemon, its run's keeper and the run. Nobody renews the
	// lease; b may take over only once the 2 s TTL has run out.
	_ = syscall.Kill(-da.pid(), syscall.SIGKILL)
	if a.killKeepers() == 0 {
		t.Fatal("a's run has no keeper")
	}
	killCmdline(arg)
	killed := time.Now()
	da.wait(5 * time.Second)
	var took time.Duration
	waitFor(t, 10*time.Second, "b takes over", func() bool {
		for _, r := range daemonLog(t, db) {
			if r["msg"] == "run started" {
				at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
				took = at.Sub(killed)
				return true
			}
		}
		return false
	})
	t.Logf("b took over %v after the kill (ttl 2s)", took)
	if took < 1500*time.Millisecond || took > 4*time.Second {
		t.Errorf("b took over %v after the kill, want after the 2 s TTL (and within ~1 s of it)", took)
	}
	for _, p := range withCmdline(arg) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	stopDaemons(t, db)
}

func TestE2ERedisOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits out a Redis outage and its recovery; runs in the full suite")
	}
	t.Parallel()
	srv := redistest.New(t)
	s := redisSandbox(t, srv.URL(), `jobs:
  - name: guarded
    schedule: "@every 1s"
    command: echo "$CRONVISOR_SCHEDULED_AT $CRONVISOR_FENCING_TOKEN" >> ran.txt; sleep 3
    timeout: 30s
    kill_grace: 1s
`)
	d := s.startDaemon()
	waitFor(t, 10*time.Second, "a run", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	srv.Stop()
	down := time.Now()
	waitFor(t, 10*time.Second, "lease lost", func() bool { return strings.Contains(d.stderr(), `"reason":"lock lost"`) })
	time.Sleep(3 * time.Second)
	ranDuring := 0
	for _, r := range daemonLog(t, d) {
		at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
		if r["msg"] == "run started" && at.After(down) {
			ranDuring++
		}
	}
	if ranDuring > 0 {
		t.Fatalf("%d runs started while Redis was down: unguarded", ranDuring)
	}
	if !strings.Contains(d.stderr(), "lock backend unreachable") {
		t.Fatalf("fires during the outage are not recorded as skipped for the backend:\n%s", tail(d.stderr(), 10))
	}
	srv.Start()
	up := time.Now()
	waitFor(t, 15*time.Second, "runs resume", func() bool {
		for _, r := range daemonLog(t, d) {
			at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
			if r["msg"] == "run started" && at.After(up) {
				return true
			}
		}
		return false
	})
	tokens := map[string]bool{}
	for _, l := range lines(readFile(t, filepath.Join(s.dir, "ran.txt"))) {
		f := strings.Fields(l)
		if len(f) != 2 || tokens[f[1]] {
			t.Errorf("run line %q: want a slot and a fresh fencing token", l)
		}
		tokens[f[1]] = true
	}
	stopDaemons(t, d)
	_ = os.Remove(filepath.Join(s.dir, "ran.txt"))
}
