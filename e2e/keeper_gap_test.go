package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/redistest"

	_ "modernc.org/sqlite" // history.db
)

// gapTries is how many times each backend's job kills its supervisor.
const gapTries = 20

// TestE2EKeeperGapJobKillsItsSupervisor: a job whose first instruction
// SIGKILLs its supervisor (`kill -9 $PPID`, then `sleep 1.5; exit 0`),
// 20 times per backend (file, Redis, MySQL, PostgreSQL), a daemon started
// again after each kill: the supervisor often dies before its keeper
// learnt the run's pid. Every run has one record, `ok` with exit 0, its
// pid and start; none is `timeout` or `lock lost`; and the next fire
// runs within 2 s of the run's end, also with `timeout: none` (half the
// tries).
func TestE2EKeeperGapJobKillsItsSupervisor(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	for _, backend := range []string{"file", "redis", "mysql", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			keeperGap(t, gapSandbox(t, backend))
		})
	}
}

// gapSandbox is a sandbox on backend whose jobs the test writes itself
// (gapJobs).
func gapSandbox(t *testing.T, backend string) *sandbox {
	t.Helper()
	switch backend {
	case "redis":
		return redisSandbox(t, redistest.New(t).URL(), "")
	case "mysql", "postgres":
		srv := sharedSQLServer(t, backend)
		db, _ := srv.newDB(t)
		return sqlSandbox(t, srv, db, "")
	}
	return newSandbox(t, "shutdown_grace: 3s\n")
}

// gapJobs rewrites the sandbox's jobs.yaml, keeping its backend, with the
// killing job at timeout (or disabled); a daemon reads it as it starts.
func (s *sandbox) gapJobs(timeout string, enabled bool) {
	s.t.Helper()
	b, err := os.ReadFile(s.config)
	if err != nil {
		s.t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "jobs:\n")
	job := fmt.Sprintf(`jobs:
  - name: gap
    schedule: "@every 1s"
    command: kill -9 $PPID; echo $CRONVISOR_RUN_ID $$ >> %s; sleep 1.5; exit 0
    timeout: %s
    kill_grace: 1s
    enabled: %t
`, filepath.Join(s.dir, "runs.txt"), timeout, enabled)
	if err := os.WriteFile(s.config, []byte(head+job), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func keeperGap(t *testing.T, s *sandbox) {
	start := time.Now()
	var daemons []*proc
	for i := range gapTries {
		timeout := "4s"
		if i%2 == 1 {
			timeout = "none"
		}
		s.gapJobs(timeout, true)
		d := s.cv("daemon", "--log-format", "json")
		daemons = append(daemons, d)
		// Its adopted run holds the lock until it ends (1.5 s): the next
		// fire after that runs, and kills this daemon.
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			t.Errorf("try %d: no run killed the daemon within 10 s (the last run's lock still held?)", i)
			_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
			<-d.done
		}
	}
	killed := time.Since(start)
	s.gapJobs("none", false)
	d := s.startDaemon()
	daemons = append(daemons, d)
	pids := map[string]int{} // the run's main process, as it said
	var ids []string
	for _, l := range lines(readFile(t, filepath.Join(s.dir, "runs.txt"))) {
		var id string
		var pid int
		if _, err := fmt.Sscan(l, &id, &pid); err != nil {
			t.Fatalf("runs.txt: line %q: %v", l, err)
		}
		ids, pids[id] = append(ids, id), pid
	}
	var runs map[string]run.Record
	waitFor(t, 15*time.Second, "every run recorded", func() bool {
		runs = s.runsByID()
		for _, id := range ids {
			if r := runs[id]; r.Outcome == "" || r.Outcome == run.Running {
				return false
			}
		}
		return true
	})
	stopDaemons(t, d)
	checkGapRuns(t, ids, runs)
	recorded := s.recordedPIDs()
	for _, id := range ids {
		if recorded[id] != pids[id] {
			t.Errorf("run %s: pid %d in its record, want %d", id, recorded[id], pids[id])
		}
	}
	t.Logf("%d supervisors killed by their run in %v; %d died before writing its pid into the lock record",
		gapTries, killed.Round(time.Millisecond), unsetPIDs(t, daemons))
}

// checkGapRuns checks the records of the runs ids: one each, ok, with
// start, and each run's successor started within 2 s of its end.
func checkGapRuns(t *testing.T, ids []string, runs map[string]run.Record) {
	t.Helper()
	if len(ids) != gapTries || len(runs) != len(ids) {
		t.Errorf("%d daemons killed, %d runs started, %d recorded, want %d each", gapTries, len(ids), len(runs), gapTries)
	}
	outcomes := map[run.Outcome]int{}
	var ordered []run.Record
	for _, id := range ids {
		r := runs[id]
		outcomes[r.Outcome]++
		ordered = append(ordered, r)
		if r.Outcome != run.OK || r.ExitCode == nil || *r.ExitCode != 0 {
			t.Errorf("run %s recorded %s exit %v (%q), want ok, exit 0", id, r.Outcome, exitOf(r), r.Reason)
		}
		if r.StartedAt.IsZero() || r.EndedAt.Sub(r.StartedAt) < time.Second {
			t.Errorf("run %s: %v to %v: want its start 1.5 s before its end", id, r.StartedAt, r.EndedAt)
		}
	}
	slices.SortFunc(ordered, func(a, b run.Record) int { return a.StartedAt.Compare(b.StartedAt) })
	var worst time.Duration
	for i := 1; i < len(ordered); i++ {
		gap := ordered[i].StartedAt.Sub(ordered[i-1].EndedAt)
		worst = max(worst, gap)
		if gap > 2*time.Second {
			t.Errorf("run %s started %v after run %s ended, want within 2 s", ordered[i].RunID, gap.Round(time.Millisecond), ordered[i-1].RunID)
		}
	}
	t.Logf("outcomes %v; the longest wait from a run's end to the next start %v", outcomes, worst.Round(time.Millisecond))
}

// exitOf is r's exit code for a message, "null" without one.
func exitOf(r run.Record) string {
	if r.ExitCode == nil {
		return "null"
	}
	return fmt.Sprint(*r.ExitCode)
}

// recordedPIDs reads the pid of every run from the sandbox's history
// store (history --json has no pid), with no daemon running.
func (s *sandbox) recordedPIDs() map[string]int {
	s.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.state, "history.db")+"?mode=ro")
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT run_id, COALESCE(pid, 0) FROM runs")
	if err != nil {
		s.t.Fatalf("read the runs' pids from history.db: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var pid int
		if err := rows.Scan(&id, &pid); err != nil {
			s.t.Fatal(err)
		}
		out[id] = pid
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// unsetPIDs counts the runs whose lock record never got the run's pid:
// the next daemon skipped a fire naming the dead supervisor as the
// holder. Its supervisor died right after the exec, in the gap this
// test is about (the keeper is told the pid just before the record).
func unsetPIDs(t *testing.T, daemons []*proc) int {
	n := 0
	for i := 1; i < len(daemons); i++ {
		dead := float64(daemons[i-1].pid())
		for _, r := range daemonLog(t, daemons[i]) {
			if r["msg"] == "run skipped" && r["holder_pid"] == dead {
				n++
				break
			}
		}
	}
	return n
}
