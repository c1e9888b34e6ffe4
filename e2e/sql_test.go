package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watchedJob is a job that, as it starts, appends to DIR/overlaps.txt
// every earlier run of it still alive (not a zombie), then records
// "start NS PID" in DIR/runs.txt and sleeps secs. A lost SQL lock ends a
// run with SIGKILL at once (the lock is already gone), so a run cannot
// record its own end; each new run checks its predecessors instead.
func watchedJob(name, dir, secs string) string {
	return fmt.Sprintf(`  - name: %[1]s
    schedule: "@every 1s"
    command: for p in $(cat %[2]s/pids.txt 2>/dev/null); do if [ -e /proc/$p ] && ! grep -q '^State:[[:space:]]*Z' /proc/$p/status 2>/dev/null; then echo "$$ started beside $p at $(date +%%s%%N) $(grep State /proc/$p/status) $(tr '\\0' ' ' < /proc/$p/cmdline)" >> %[2]s/overlaps.txt; fi; done; echo $$ >> %[2]s/pids.txt; echo "start $(date +%%s%%N) $$" >> %[2]s/runs.txt; sleep %[3]s
    timeout: 60s
    kill_grace: 1s
`, name, dir, secs)
}

// checkWatched fails the test if a run of a watchedJob in dir started
// beside another, and returns the pids of its runs in order.
func checkWatched(t *testing.T, dir string) []int {
	t.Helper()
	if o := readFile(t, filepath.Join(dir, "overlaps.txt")); o != "" {
		t.Errorf("runs overlapped: %q; runs: %q", o, readFile(t, filepath.Join(dir, "runs.txt")))
	}
	var pids []int
	for _, l := range lines(readFile(t, filepath.Join(dir, "pids.txt"))) {
		n, _ := strconv.Atoi(l)
		pids = append(pids, n)
	}
	return pids
}

// gone reports whether pid has exited (or is a zombie).
func gone(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || isZombie(pid) || len(st) == 0
}

// lockLostAt is when d logged the end of a run for lock loss.
func lockLostAt(t *testing.T, d *proc) (time.Time, bool) {
	for _, r := range daemonLog(t, d) {
		if r["msg"] == "run finished" && r["reason"] == "lock lost" {
			at, err := time.Parse(time.RFC3339Nano, r["time"].(string))
			return at, err == nil
		}
	}
	return time.Time{}, false
}

// Two hosts on one database, a job every second that runs 2.2 s, for
// 15 s: no two runs overlap and the skips name the other host's run; a
// job every second runs each slot exactly once.
func TestE2ESQLTwoHostsNeverOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	sqlKinds(t, func(t *testing.T, kind string) {
		// A server of its own: on the shared one, other tests' sessions
		// (MySQL's named locks are the server's, not a database's) and
		// load came between a run's end and the next fire.
		srv := newSQLServer(t, kind)
		db, _ := srv.newDB(t)
		shared := t.TempDir()
		jobs := fmt.Sprintf(`jobs:
  - name: sync
    schedule: "@every 1s"
    command: echo "start $(date +%%s%%N) $$" >> %[1]s/runs.txt; sleep 2.2; echo "end $(date +%%s%%N) $$" >> %[1]s/runs.txt; env > %[1]s/env.txt
    timeout: 10s
  - name: tick
    schedule: "* * * * * *"
    command: echo "$CRONVISOR_SCHEDULED_AT $$" >> %[1]s/tick.txt; sleep 0.05
    timeout: 5s
`, shared)
		a, b := sqlSandbox(t, srv, db, jobs), sqlSandbox(t, srv, db, jobs)
		da, dbd := a.startDaemon(), b.startDaemon()
		start := time.Now()
		time.Sleep(15 * time.Second)
		stop := time.Now()
		stopDaemons(t, da, dbd)

		// A run and its release end 0.8 s before the fire after next: on a
		// loaded machine 0.5 s (a 2.5-s run) was sometimes too little, and
		// that fire was skipped as lock held too.
		if runs := checkNoOverlap(t, filepath.Join(shared, "runs.txt"), false); runs < 4 {
			t.Errorf("only %d runs of sync in 15 s (from %s):\n%s\na:\n%s\nb:\n%s", runs, start.Format(time.StampMilli),
				readFile(t, filepath.Join(shared, "runs.txt")), tail(da.stderr(), 40), tail(dbd.stderr(), 40))
		}
		first := start.Truncate(time.Second).Add(2 * time.Second)
		last := stop.Truncate(time.Second).Add(-time.Second)
		checkSlots(t, filepath.Join(shared, "tick.txt"), first, last)

		crossSkips := 0
		daemons := map[string]*proc{"a": da, "b": dbd}
		for name, d := range daemons {
			other := daemons[map[string]string{"a": "b", "b": "a"}[name]]
			otherRuns := map[any]bool{}
			for _, r := range daemonLog(t, other) {
				if r["msg"] == "run started" && r["job"] == "sync" {
					otherRuns[r["run_id"]] = true
				}
			}
			for _, r := range daemonLog(t, d) {
				if r["msg"] == "run skipped" && r["job"] == "sync" && otherRuns[r["holder_run_id"]] {
					crossSkips++
					if r["holder_host"] == "" || r["holder_pid"] == nil {
						t.Errorf("skip names holder %v on %v", r["holder_pid"], r["holder_host"])
					}
				}
			}
		}
		if crossSkips == 0 {
			t.Error("no skip names a run of the other host")
		}
		env := readFile(t, filepath.Join(shared, "env.txt"))
		if !strings.Contains(env, "CRONVISOR_FENCING_TOKEN=") {
			t.Error("the job's environment has no CRONVISOR_FENCING_TOKEN")
		}
		for what, text := range map[string]string{"a job's environment": env, "daemon a's log": da.stderr(), "daemon b's log": dbd.stderr()} {
			if strings.Contains(text, dbSecret) || strings.Contains(text, "CV_E2E_DB_PASSWORD") {
				t.Errorf("%s shows the database password or its variable", what)
			}
		}
	})
}

// Killing the holder's connection on the server (KILL, or
// pg_terminate_backend) is lock loss: the run is ended within the
// documented bound, 2×the 1 s keep-alive.
func TestE2ESQLKilledConnectionEndsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts the SQL test servers; runs in the full suite")
	}
	sqlKinds(t, func(t *testing.T, kind string) {
		srv := sharedSQLServer(t, kind)
		db, raw := srv.newDB(t)
		dir := t.TempDir()
		s := sqlSandbox(t, srv, db, "jobs:\n"+watchedJob("long", dir, "30"))
		d := s.startDaemon()
		waitFor(t, 15*time.Second, "a run", func() bool { return len(checkWatched(t, dir)) > 0 })
		time.Sleep(300 * time.Millisecond)
		pid := checkWatched(t, dir)[0]
		if _, err := raw.Exec(srv.killConn, holderConn(t, raw, srv, db, "long")); err != nil {
			t.Fatalf("kill the holder's connection: %v", err)
		}
		killed := time.Now()
		waitFor(t, 10*time.Second, "the run ended", func() bool { return gone(pid) })
		ended := time.Since(killed)
		waitFor(t, 10*time.Second, "lock lost", func() bool { _, ok := lockLostAt(t, d); return ok })
		stopDaemons(t, d)
		t.Logf("the run ended %v after its connection was killed (bound 2 s)", ended.Round(time.Millisecond))
		if ended > 4*time.Second { // the bound, plus slack for a loaded machine
			t.Errorf("the run ended %v after its connection was killed, want within ~2 s", ended)
		}
		checkWatched(t, dir)
	})
}

// The server stopped mid-run: the holder's run is ended (its lock went
// with the connection), no run starts anywhere while the server is down
// (those fires are skipped as unreachable), and runs resume once it is
// back, never two at a time.
func TestE2ESQLServerDown(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts and stops its own SQL servers; runs in the full suite")
	}
	sqlKinds(t, func(t *testing.T, kind string) {
		srv := newSQLServer(t, kind) // stopped below: not the shared one
		db, _ := srv.newDB(t)
		dir := t.TempDir()
		jobs := "jobs:\n" + watchedJob("long", dir, "30")
		a, b := sqlSandbox(t, srv, db, jobs), sqlSandbox(t, srv, db, jobs)
		da, dbd := a.startDaemon(), b.startDaemon()
		waitFor(t, 15*time.Second, "a run", func() bool { return len(checkWatched(t, dir)) > 0 })
		time.Sleep(500 * time.Millisecond)
		pid := checkWatched(t, dir)[0]
		srv.stop()
		down := time.Now()
		waitFor(t, 10*time.Second, "the run ended", func() bool { return gone(pid) })
		ended := time.Since(down)
		time.Sleep(2 * time.Second)
		for _, d := range []*proc{da, dbd} {
			for _, r := range daemonLog(t, d) {
				at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
				if r["msg"] == "run started" && at.After(down) {
					t.Errorf("a run started at %v with the server down since %v", at, down)
				}
			}
		}
		if !strings.Contains(da.stderr()+dbd.stderr(), "lock backend unreachable") {
			t.Errorf("fires with the server down are not skipped as unreachable:\n%s", tail(da.stderr(), 5))
		}
		if err := srv.start(); err != nil {
			t.Fatal(err)
		}
		up := time.Now()
		waitFor(t, 20*time.Second, "runs resume", func() bool { return startedSince(t, da, up) || startedSince(t, dbd, up) })
		// The daemon logs "run started" as it execs; the job's own line
		// comes a moment later, and a stop in between would lose it.
		waitFor(t, 5*time.Second, "the resumed run's own record", func() bool { return len(checkWatched(t, dir)) >= 2 })
		stopDaemons(t, da, dbd)
		t.Logf("the run in flight ended %v after the server stopped (bound 2 s)", ended.Round(time.Millisecond))
		if ended > 4*time.Second {
			t.Errorf("the run in flight ended %v after the server stopped, want within ~2 s", ended)
		}
		if len(checkWatched(t, dir)) < 2 {
			t.Error("no run after the restart")
		}
	})
}

// The holder's supervisor SIGKILLed alone: the run's keeper (and the run
// itself, fd 3) holds the session's connection, so the lock lives on with
// the run, which runs to its end; the other host takes over without ever
// running beside it.
func TestE2ESQLSupervisorKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	sqlKinds(t, func(t *testing.T, kind string) {
		srv := sharedSQLServer(t, kind)
		db, _ := srv.newDB(t)
		dir := t.TempDir()
		jobs := "jobs:\n" + watchedJob("sync", dir, "5")
		hosts := []*sandbox{sqlSandbox(t, srv, db, jobs), sqlSandbox(t, srv, db, jobs)}
		daemons := []*proc{hosts[0].startDaemon(), hosts[1].startDaemon()}
		var ends []time.Duration
		for range 3 {
			seen := len(checkWatched(t, dir))
			var holder int
			waitFor(t, 15*time.Second, "a new run", func() bool { return len(checkWatched(t, dir)) > seen })
			time.Sleep(200 * time.Millisecond) // its start is logged
			for i, d := range daemons {
				if strings.Contains(d.stderr(), `"msg":"run started"`) && startedSince(t, d, time.Now().Add(-2*time.Second)) {
					holder = i
				}
			}
			pids := checkWatched(t, dir)
			pid := pids[len(pids)-1]
			time.Sleep(500 * time.Millisecond)
			if err := syscall.Kill(daemons[holder].pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			waitFor(t, 10*time.Second, "the killed supervisor's run ends", func() bool { return gone(pid) })
			ends = append(ends, time.Since(killed).Round(time.Millisecond))
			daemons[holder].wait(5 * time.Second)
			daemons[holder] = hosts[holder].startDaemon()
		}
		stopDaemons(t, daemons...)
		t.Logf("killed supervisors' runs ended %v after the kill", ends)
		for _, d := range ends {
			if d < 3*time.Second {
				// Its keeper holds the session, and so the lock: the run
				// goes on to its end (5 s, killed 0.5-0.7 s in).
				t.Errorf("a killed supervisor's run ended %v after the kill, want it to run on to its end", d)
			}
		}
		if n := len(checkWatched(t, dir)); n < 3 {
			t.Errorf("%d runs for 3 kills: the other host did not take over", n)
		}
		runs := len(checkWatched(t, dir))
		if records := len(hosts[0].runsByID()) + len(hosts[1].runsByID()); records != runs { // runsByID fails on a double
			t.Errorf("%d runs, %d records", runs, records)
		}
	})
}

// `cronvisor locks --json` on one host shows the other host's run as the
// holder, and a mysql/psql session holding the documented name or key as
// foreign; a run beside it is skipped naming that session.
func TestE2ESQLLocksShowHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts the SQL test servers; runs in the full suite")
	}
	sqlKinds(t, func(t *testing.T, kind string) {
		srv := sharedSQLServer(t, kind)
		db, _ := srv.newDB(t)
		jobs := fmt.Sprintf(`jobs:
  - name: long
    schedule: "@every 1s"
    command: sleep %s
    timeout: 60s
  - name: spare
    schedule: "@yearly"
    command: "true"
    timeout: 10s
`, sleepArg("33.3"))
		a, b := sqlSandbox(t, srv, db, jobs), sqlSandbox(t, srv, db, jobs)
		da := a.startDaemon()
		waitFor(t, 15*time.Second, "a run", func() bool { return strings.Contains(da.stderr(), `"msg":"run started"`) })
		time.Sleep(300 * time.Millisecond)
		row := b.locksJSON("long")
		if !row.Held || row.Foreign || row.Job != "long" || row.PID == 0 || row.PID == da.pid() {
			t.Errorf("locks --json on b: %+v, want held by a's run of long", row)
		}
		stopDaemons(t, da)

		foreignSession(t, kind, srv, db, srv.prefix(db)+"spare")
		waitFor(t, 10*time.Second, "the foreign session holds the lock", func() bool { return b.locksJSON("spare").Held })
		row = b.locksJSON("spare")
		if !row.Foreign || !strings.Contains(row.Cmdline, kind) {
			t.Errorf("locks --json: %+v, want a foreign %s session", row, kind)
		}
		code, _, stderr := b.runCV(20*time.Second, "run", "spare")
		if !strings.Contains(stderr, "skipped: lock held by") || !strings.Contains(stderr, "outside cronvisor: "+kind) {
			t.Errorf("run spare beside a foreign holder: exit %d, stderr %q; want a skip naming it", code, stderr)
		}
	})
}

// foreignSession holds the lock of full name from the server's own
// command-line client, using the documented name or key, until the test
// ends.
func foreignSession(t *testing.T, kind string, srv sqlServer, db, full string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	if kind == "mysql" {
		q := fmt.Sprintf("SELECT GET_LOCK(IF(LENGTH('%[1]s') <= 64, '%[1]s', CONCAT(LEFT('%[1]s', 47), '~', LEFT(SHA2('%[1]s', 256), 16))), 0); SELECT SLEEP(60);", full)
		cmd = exec.Command("mysql", "--no-defaults", "-h127.0.0.1", "-P"+strconv.Itoa(srv.port), "-uroot", db, "-e", q)
	} else {
		q := fmt.Sprintf("SELECT pg_advisory_lock(('x' || left(encode(sha256(convert_to('%s', 'UTF8')), 'hex'), 16))::bit(64)::bigint); SELECT pg_sleep(60);", full)
		cmd = exec.Command("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", "postgres", "-d", db, "-c", q)
	}
	cmd.Env = append(os.Environ(), "PGAPPNAME=psql")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s client: %v", kind, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}
