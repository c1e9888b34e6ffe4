package ui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// fakeStateDir is the state dir as a console without its daemon reads it:
// here sync_orders' run has ended (its lock is free) and it finished ok.
type fakeStateDir struct {
	jobs    []ctl.JobStatus
	locks   []ctl.LockStatus
	records []run.Record
}

func newFakeStateDir() *fakeStateDir {
	jobs := fixtureJobs()
	for i := range jobs {
		jobs[i].NextRun = time.Time{} // nothing schedules without a daemon
		if jobs[i].Name == "sync_orders" {
			jobs[i].State, jobs[i].RunID, jobs[i].PID, jobs[i].Holder = ctl.StateIdle, "", 0, nil
			jobs[i].StartedAt, jobs[i].Deadline, jobs[i].LastOutcome = time.Time{}, time.Time{}, "ok"
		}
		if jobs[i].Name == "refund_orders" { // queued in a daemon that is gone
			jobs[i].State, jobs[i].Holder = ctl.StateIdle, nil
		}
	}
	locks := fixtureLocks()
	for i := range locks {
		if locks[i].Lock == "orders" {
			locks[i].Held = false
		}
	}
	recs := fixtureRecords()
	recs[0].Outcome, recs[0].EndedAt, recs[0].ExitCode = "ok", at(5*time.Second), exit(0)
	return &fakeStateDir{jobs: jobs, locks: locks, records: recs}
}

func (f *fakeStateDir) Jobs(context.Context) ([]ctl.JobStatus, error)   { return f.jobs, nil }
func (f *fakeStateDir) Locks(context.Context) ([]ctl.LockStatus, error) { return f.locks, nil }

func (f *fakeStateDir) History(context.Context, ctl.HistoryQuery) ([]run.Record, error) {
	return f.records, nil
}

func (f *fakeStateDir) Log(_ context.Context, job, runID string) (ctl.RunLog, error) {
	return recordLog(f.records, job, runID)
}

// loseToStateDir closes the daemon's stream and answers the console's
// read of the state dir.
func loseToStateDir(t *testing.T, m Model, f *fakeSource) Model {
	t.Helper()
	close(f.events)
	m, _ = m.update(waitEvents(m.events)())
	if !m.offline.fetching {
		t.Fatal("losing the daemon did not read the state dir")
	}
	m, _ = m.update(m.fetchOffline()())
	return m
}

var refusedReload = ctl.WireEvent{Type: ctl.EventConfigReloaded, Time: at(-3 * time.Second), Jobs: 7,
	Problems: []string{
		`/srv/app/jobs.yaml:14:15: timeout: invalid duration "90x" (want a Go duration such as 90s, 10m or 1h30m)`,
		`/srv/app/jobs.yaml:22:5: unknown key "colour"`,
	}}

// movingClock is a clock the test sets.
type movingClock struct{ now time.Time }

func (c *movingClock) Now() time.Time { return c.now }

// TestALostDaemonFreezesTheScreen: once the daemon is gone, a running row
// stops ticking (it is what the daemon said when it went away), and the
// state dir's reading replaces it: the run ended, its lock is free.
func TestALostDaemonFreezesTheScreen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		offline  bool
		wantRow  string // sync_orders' state cell after 40 s
		wantNote string
	}{
		{"without a state dir, frozen", false, "▶ 25s/1m30s", "nothing below is live: as it was at 12:00:00"},
		{"with a state dir, its reading", true, "· idle", "read from the state dir at 12:00:40"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &movingClock{now: ref}
			f := newFake()
			opts := Options{Clock: clk.Now}
			if tc.offline {
				opts.Offline = newFakeStateDir()
			}
			m := loaded(t, f, opts, 100, 24)
			close(f.events)
			m, _ = m.update(waitEvents(m.events)())
			clk.now = at(40 * time.Second)
			if tc.offline {
				m, _ = m.update(m.fetchOffline()())
			}
			m, _ = m.update(tickMsg(clk.now))
			screen := m.View()
			row := lineWith(screen, "  sync_orders  ") // its own row, not refund_orders' holder
			if !strings.Contains(row, tc.wantRow) {
				t.Errorf("sync_orders row %q, want %q", row, tc.wantRow)
			}
			if strings.Contains(row, "1m05s") {
				t.Errorf("sync_orders row %q ticks on without its daemon", row)
			}
			if !strings.Contains(screen, tc.wantNote) || !strings.Contains(screen, "12:00:40") {
				t.Errorf("screen does not say %q with the clock at 12:00:40:\n%s", tc.wantNote, screen)
			}
			if m.c.st.run.GetForeground() != m.grey.run.GetForeground() {
				t.Error("the lost console is not greyed out")
			}
			// Back: live again, the daemon's snapshot is read.
			m, cmd := m.update(subscribedMsg{ch: make(chan ctl.WireEvent)})
			if !m.c.asOf.IsZero() || cmd == nil {
				t.Errorf("after reconnecting: frozen at %v, re-read %v; want live and a re-read", m.c.asOf, cmd != nil)
			}
		})
	}
}

func lineWith(screen, sub string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestARefusedReloadStaysUntilAGoodOne: the banner lists every problem,
// outlives the status line's few seconds, and goes with a good reload. A
// console that attaches later learns it from the daemon's status.
func TestARefusedReloadStaysUntilAGoodOne(t *testing.T) {
	clk := &movingClock{now: ref}
	f := newFake()
	m := loaded(t, f, Options{Clock: clk.Now}, 80, 24)
	m = feed(t, m, f, refusedReload)
	clk.now = at(time.Minute)
	m, _ = m.update(tickMsg(clk.now))
	screen := m.View()
	for _, want := range []string{`unknown key "colour"`, "such as 90s, 10m or 1h30m)", "refused at 11:59:57"} {
		if !strings.Contains(screen, want) {
			t.Errorf("a minute later the screen lacks %q:\n%s", want, screen)
		}
	}
	checkScreen(t, screen, 80, 24)
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventConfigReloaded, Time: clk.now, Jobs: 7,
		Reason: "1 job changed, 0 added, 0 removed; +144 -0 slots in 24h; fires at reload: none"})
	if screen := m.View(); strings.Contains(screen, "refused") {
		t.Errorf("after a good reload the banner stays:\n%s", screen)
	}
	if m.status != "jobs.yaml reloaded: 7 jobs; 1 job changed, 0 added, 0 removed; +144 -0 slots in 24h; fires at reload: none" {
		t.Errorf("after a reload the status line says %q, want the count and the reload's summary", m.status)
	}

	f2 := newFake()
	f2.daemon = ctl.DaemonStatus{Refused: refusedReload.Problems, RefusedAt: refusedReload.Time}
	late := loaded(t, f2, Options{}, 80, 24)
	if !strings.Contains(late.View(), `unknown key "colour"`) {
		t.Errorf("a console attaching after the refusal does not show it:\n%s", late.View())
	}
}

// TestARefusedReloadBannerIsBounded: many problems take at most a third
// of the screen, and say how many lines were left out.
func TestARefusedReloadBannerIsBounded(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	var problems []string
	for i := range 30 {
		problems = append(problems, "jobs.yaml:"+itoa(i+1)+":3: unknown key")
	}
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventConfigReloaded, Time: ref, Problems: problems})
	b := m.banners()
	if len(b) > 24/3 || !strings.Contains(b[len(b)-1], "more lines; `cronvisor validate` lists every problem") {
		t.Errorf("banner of %d lines ending %q, want at most 8 ending with the count left out", len(b), b[len(b)-1])
	}
	checkScreen(t, m.View(), 80, 24)
}

// TestShuttingDownIsShown: the daemon's drain shows until its stream
// ends, counting the runs still finishing.
func TestShuttingDownIsShown(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventShuttingDown, Time: ref, Jobs: 1})
	if !strings.Contains(m.View(), "daemon shutting down: 1 run finishing") {
		t.Errorf("no shutting-down banner:\n%s", m.View())
	}
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventRunFinished, Job: "sync_orders", RunID: "r-sync-7",
		Time: ref, StartedAt: at(-25 * time.Second), Outcome: "ok"})
	if !strings.Contains(m.View(), "daemon shutting down: 0 runs finishing") {
		t.Errorf("the banner does not count down:\n%s", m.View())
	}
}

// TestSavedLogsComeFromTheSource: an attached console asks its daemon for
// a run's log; with the daemon gone, it asks the state dir.
func TestSavedLogsComeFromTheSource(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lose     bool
		wantLine string
		wantCall bool // the daemon was asked
	}{
		{"attached: the daemon", false, "stdout | from the daemon", true},
		{"daemon gone: the state dir", true, "stdout | from the state dir", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, sd := newFake(), newFakeStateDir()
			f.records[2].LogPath = writeLog(t, "stdout | from the daemon")
			sd.records[2].LogPath = writeLog(t, "stdout | from the state dir")
			m := openSync(t, loaded(t, f, Options{Offline: sd}, 80, 24), f)
			if tc.lose {
				m = loseToStateDir(t, m, f)
			}
			before := len(f.called())
			m, cmd := press(m, "down", "down", "down") // live, skip, skip, the ok run r-sync-6
			msg := cmd().(logMsg)
			if asked := slices.Contains(f.called()[before:], "log sync_orders r-sync-6"); asked != tc.wantCall || msg.run != "r-sync-6" {
				t.Errorf("daemon asked %v for run %q, want %v for r-sync-6", asked, msg.run, tc.wantCall)
			}
			if !slices.Equal(msg.lines, []string{tc.wantLine}) {
				t.Errorf("log %q (%v), want %q", msg.lines, msg.err, tc.wantLine)
			}
			if m, _ = m.update(msg); !strings.Contains(m.View(), strings.TrimPrefix(tc.wantLine, "stdout | ")) {
				t.Errorf("the log is not on screen:\n%s", m.View())
			}
		})
	}
}
