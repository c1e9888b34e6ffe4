package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keptJobs are the jobs of TestE2EFleetKeeperAndDaemonKilledKeepTheLock:
// each fires every second under a lock of its own and runs 10 s,
// writing its own start (with what its fd 3 is) and end (ns, host, pid)
// to dir/NAME.txt, also when it is ended (SIGTERM): the ground truth the
// test judges by.
func keptJobs(dir string, n int) string {
	var b strings.Builder
	b.WriteString("jobs:\n")
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("k%d.txt", i))
		fmt.Fprintf(&b, `  - name: k%d
    schedule: "@every 1s"
    command: trap 'echo "E $(date +%%s%%N) $(hostname) $$" >> %[2]s; exit 143' TERM; echo "S $(date +%%s%%N) $(hostname) $$ $(readlink /proc/$$/fd/3)" >> %[2]s; sleep 10; trap '' TERM; echo "E $(date +%%s%%N) $(hostname) $$" >> %[2]s
    timeout: 60s
    kill_grace: 1s
`, i, f)
	}
	return b.String()
}

// keptRun is one run of a keptJob, from its own lines; End is zero while
// it goes on.
type keptRun struct {
	job, host  string
	fd3        string // what the run's fd 3 was
	pid        int
	start, end time.Time
}

// keptRuns reads the runs of the n keptJobs in dir, by job, in order of
// start.
func keptRuns(t *testing.T, dir string, n int) map[string][]keptRun {
	t.Helper()
	out := map[string][]keptRun{}
	for i := range n {
		job := fmt.Sprintf("k%d", i)
		byPID := map[int]*keptRun{}
		var order []*keptRun
		for _, l := range lines(readFile(t, filepath.Join(dir, job+".txt"))) {
			f := strings.Fields(l)
			if len(f) < 4 {
				continue // a line being written
			}
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			pid, _ := strconv.Atoi(f[3])
			at := time.Unix(0, ns)
			switch f[0] {
			case "S":
				r := &keptRun{job: job, host: f[2], pid: pid, start: at}
				if len(f) > 4 {
					r.fd3 = f[4]
				}
				byPID[pid] = r
				order = append(order, r)
			case "E":
				if r := byPID[pid]; r != nil {
					r.end = at
				}
			}
		}
		for _, r := range order {
			out[job] = append(out[job], *r)
		}
	}
	return out
}

// overlaps lists the pairs of a job's runs whose intervals meet.
func overlaps(runs map[string][]keptRun) []string {
	var bad []string
	for job, rs := range runs {
		for i, a := range rs {
			for _, b := range rs[i+1:] {
				aEnd, bEnd := a.end, b.end
				if aEnd.IsZero() {
					aEnd = time.Now()
				}
				if bEnd.IsZero() {
					bEnd = time.Now()
				}
				if a.start.Before(bEnd) && b.start.Before(aEnd) {
					bad = append(bad, fmt.Sprintf("%s: %s pid %d [%s, %s] and %s pid %d [%s, %s]", job,
						a.host, a.pid, a.start.Format(time.StampMilli), a.end.Format(time.StampMilli),
						b.host, b.pid, b.start.Format(time.StampMilli), b.end.Format(time.StampMilli)))
				}
			}
		}
	}
	return bad
}

// busiest is the host running the most runs started before since, and
// those runs.
func busiest(runs map[string][]keptRun, since time.Time) (string, []keptRun) {
	by := map[string][]keptRun{}
	for _, rs := range runs {
		for _, r := range rs {
			if r.end.IsZero() && r.start.Before(since) {
				by[r.host] = append(by[r.host], r)
			}
		}
	}
	host := ""
	for h, rs := range by {
		if len(rs) > len(by[host]) {
			host = h
		}
	}
	return host, by[host]
}

// goingOn lists host's runs that have no end yet, however young.
func goingOn(runs map[string][]keptRun, host string) []keptRun {
	var out []keptRun
	for _, rs := range runs {
		for _, r := range rs {
			if r.end.IsZero() && r.host == host {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestE2EFleetKeeperAndDaemonKilledKeepTheLock: three hosts (daemons in
// UTS namespaces of their own, each with its state dir) share a MySQL
// or PostgreSQL lock backend; ten jobs fire every second, each under
// its own lock, and run 10 s. The host running the most of them has its
// daemon and its keeper SIGKILLed together, its runs going on: each of
// them is a try. The runs hold their lock's session (fd 3), so the
// server keeps every lock until its run has ended, and only then does a
// peer run the job again: 0 overlapping intervals by the jobs' own
// timestamps, and each killed run's job run again after its end. Rounds
// (the killed host started again) go on until 10 tries per backend.
func TestE2EFleetKeeperAndDaemonKilledKeepTheLock(t *testing.T) {
	if testing.Short() {
		t.Skip("three daemons per backend, 10-s runs and kills: a minute")
	}
	const jobs, wantTries = 10, 10
	sqlKinds(t, func(t *testing.T, kind string) {
		srv := sharedSQLServer(t, kind)
		db, _ := srv.newDB(t)
		dir := t.TempDir()
		names := []string{"host-a", "host-b", "host-c"}
		hosts := map[string]*sandbox{}
		daemons := map[string]*proc{}
		for _, n := range names {
			hosts[n] = sqlSandbox(t, srv, db, keptJobs(dir, jobs))
			daemons[n] = hosts[n].startHost(n)
		}
		defer func() {
			if t.Failed() {
				for _, n := range names {
					t.Logf("%s:\n%s", n, tail(daemons[n].stderr(), 30))
				}
			}
		}()
		var killed []keptRun // the tries
		deadline := time.Now().Add(100 * time.Second)
		for len(killed) < wantTries && time.Now().Before(deadline) {
			var victim string
			var theirs []keptRun
			// Runs a second old: a supervisor killed at the instant of a
			// start leaves its keeper to end that run (it cannot tell
			// whether it started), which is not what this test is after.
			waitFor(t, 20*time.Second, "a host running 3 jobs or more", func() bool {
				victim, theirs = busiest(keptRuns(t, dir, jobs), time.Now().Add(-time.Second))
				return len(theirs) >= 3
			})
			_ = syscall.Kill(daemons[victim].pid(), syscall.SIGKILL)
			keepers := hosts[victim].killKeepers()
			daemons[victim].wait(5 * time.Second)
			if keepers != 1 {
				t.Errorf("killed %d keepers of %s, want 1", keepers, victim)
			}
			t.Logf("%s killed with %d runs going on", victim, len(theirs))
			killed = append(killed, theirs...)
			// Every run the kill left, the younger ones too: one still
			// going when the host starts again would be counted in its
			// next round, with no keeper of the new daemon's to kill.
			waitEnded(t, dir, jobs, goingOn(keptRuns(t, dir, jobs), victim), hosts[victim])
			daemons[victim] = hosts[victim].startHost(victim)
		}
		waitFor(t, 10*time.Second, "a peer runs each killed run's job again", func() bool {
			runs := keptRuns(t, dir, jobs)
			for _, k := range killed {
				if rerun(runs, k) == nil {
					return false
				}
			}
			return true
		})
		var live []*proc
		for _, n := range names {
			live = append(live, daemons[n])
		}
		stopDaemons(t, live...)
		runs := keptRuns(t, dir, jobs)
		t.Logf("%d tries (runs going on when their host's daemon and keeper were killed), %d runs in all", len(killed), countRuns(runs))
		if len(killed) < wantTries {
			t.Errorf("%d tries in the time allowed, want %d", len(killed), wantTries)
		}
		if bad := overlaps(runs); len(bad) > 0 {
			t.Errorf("%d overlapping runs:\n%s", len(bad), strings.Join(bad, "\n"))
		}
		checkRerun(t, runs, killed)
		for _, k := range killed {
			if !strings.HasPrefix(k.fd3, "socket:") {
				t.Errorf("%s's run on %s had fd 3 %q, want its lock's session socket", k.job, k.host, k.fd3)
			}
		}
	})
}

// waitEnded waits for the killed runs of host s to end, each at its own
// end (10 s), and fails the test with what is known of them otherwise.
func waitEnded(t *testing.T, dir string, jobs int, runs []keptRun, s *sandbox) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); !allEnded(t, dir, jobs, runs); time.Sleep(100 * time.Millisecond) {
		if time.Now().Before(end) {
			continue
		}
		for _, r := range runs {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.pid))
			t.Logf("%s pid %d: %q", r.job, r.pid, grepLine(string(st), "State"))
		}
		ends, _ := filepath.Glob(filepath.Join(s.state, "runs", "*.end")) // what its keeper wrote, if it ended them
		for _, e := range ends {
			b, _ := os.ReadFile(e)
			t.Logf("%s: %s", e, b)
		}
		t.Fatalf("the killed host's runs did not all end within 15 s")
	}
}

// allEnded reports whether every one of runs has its end line, or is
// gone without one (a run younger than a second at the kill is ended
// by its keeper with SIGKILL: its supervisor could not tell it started).
func allEnded(t *testing.T, dir string, jobs int, runs []keptRun) bool {
	all := keptRuns(t, dir, jobs)
	for _, k := range runs {
		for _, r := range all[k.job] {
			if r.pid == k.pid && r.end.IsZero() && !gone(r.pid) {
				return false
			}
		}
	}
	return true
}

// rerun is the first run of k's job that started after k ended, nil if
// none yet.
func rerun(runs map[string][]keptRun, k keptRun) *keptRun {
	var end time.Time
	for _, r := range runs[k.job] {
		if r.pid == k.pid {
			end = r.end
		}
	}
	if end.IsZero() {
		return nil
	}
	for _, r := range runs[k.job] {
		if r.start.After(end) {
			return &r
		}
	}
	return nil
}

// checkRerun fails the test unless each killed run went on to its own
// end (10 s) and its job ran again after it, within seconds: the lock
// was neither freed early nor left stuck.
func checkRerun(t *testing.T, runs map[string][]keptRun, killed []keptRun) {
	t.Helper()
	var gaps []time.Duration
	for _, k := range killed {
		var end time.Time
		for _, r := range runs[k.job] {
			if r.pid == k.pid {
				end = r.end
			}
		}
		next := rerun(runs, k)
		switch {
		case end.Sub(k.start) < 9*time.Second:
			t.Errorf("%s's run on %s (pid %d) lasted %v, want its 10 s", k.job, k.host, k.pid, end.Sub(k.start))
		case next == nil:
			var all []string
			for _, r := range runs[k.job] {
				all = append(all, fmt.Sprintf("%s pid %d [%s, %s]", r.host, r.pid, r.start.Format(time.StampMilli), r.end.Format(time.StampMilli)))
			}
			t.Errorf("%s was not run again after its killed run on %s (pid %d) ended; its runs:\n%s", k.job, k.host, k.pid, strings.Join(all, "\n"))
		default:
			gaps = append(gaps, next.start.Sub(end))
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	if len(gaps) > 0 {
		t.Logf("a peer ran the job again %v to %v after the killed run ended", gaps[0].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond))
		if worst := gaps[len(gaps)-1]; worst > 5*time.Second {
			t.Errorf("a job ran again only %v after its killed run ended, want within seconds", worst)
		}
	}
}

func countRuns(runs map[string][]keptRun) int {
	n := 0
	for _, rs := range runs {
		n += len(rs)
	}
	return n
}

func grepLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
