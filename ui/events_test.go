package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

func TestEventsUpdateTheStore(t *testing.T) {
	started := ctl.WireEvent{Type: ctl.EventRunStarted, Job: "backup_db", RunID: "r-b2", Time: ref,
		StartedAt: ref, Deadline: at(10 * time.Minute), PID: 5555, Lock: "backup_db"}
	tests := []struct {
		name  string
		evs   []ctl.WireEvent
		check func(t *testing.T, m Model)
	}{
		{name: "run started", evs: []ctl.WireEvent{started}, check: func(t *testing.T, m Model) {
			j, _ := m.c.data.job("backup_db")
			if j.State != ctl.StateRunning || j.PID != 5555 || j.Holder == nil || j.Holder.PID != 5555 || j.Holder.Host != host {
				t.Errorf("job %+v, want running pid 5555 holding its lock on %s", j, host)
			}
			if l := lockNamed(m, "backup_db"); !l.Held || l.PID != 5555 || l.RunID != "r-b2" {
				t.Errorf("lock %+v, want held by run r-b2", l)
			}
		}},
		{name: "run finished", evs: []ctl.WireEvent{started, {Type: ctl.EventRunFinished, Job: "backup_db", RunID: "r-b2",
			Time: at(time.Minute), StartedAt: ref, Outcome: "failed", ExitCode: exitCode(3), PID: 5555}},
			check: func(t *testing.T, m Model) {
				j, _ := m.c.data.job("backup_db")
				if j.State != ctl.StateIdle || j.Holder != nil || j.LastOutcome != "failed" || j.Counts.Runs != 2 || j.Counts.Failures != 1 {
					t.Errorf("job %+v, want idle, free, last failed, 2 runs 1 failure", j)
				}
				if r := m.c.data.records[0]; r.RunID != "r-b2" || r.Outcome != "failed" || *r.ExitCode != 3 {
					t.Errorf("newest record %+v, want the failed run", r)
				}
				if lockNamed(m, "backup_db").Held {
					t.Error("lock still held after its run finished")
				}
			}},
		{name: "skip names its holder", evs: []ctl.WireEvent{{Type: ctl.EventRunSkipped, Job: "sync_orders", RunID: "r-s9",
			Time: ref, Slot: ref, Outcome: "skipped", Reason: "lock held",
			Holder: &run.Holder{PID: syncPID, Host: host, Job: "sync_orders", RunID: "r-sync-7", Since: at(-3 * time.Second)}}},
			check: func(t *testing.T, m Model) {
				j, _ := m.c.data.job("sync_orders")
				if j.Counts.Skips != 213 || j.LastOutcome != "skipped" {
					t.Errorf("job %+v, want one more skip", j)
				}
				want := "skipped 0s ago: held by pid 4321@web-1 for 3.0s"
				if got := m.jobs.summary(); !strings.Contains(got, want) {
					t.Errorf("summary %q, want %q", got, want)
				}
			}},
		{name: "output goes to the job's tail", evs: output("sync_orders", "one", "!two"), check: func(t *testing.T, m Model) {
			want := []string{"stdout | one", "stderr | two"}
			if got := m.c.data.tail("sync_orders"); !slices.Equal(got, want) {
				t.Errorf("tail %q, want %q", got, want)
			}
		}},
		{name: "reload refused", evs: []ctl.WireEvent{{Type: ctl.EventConfigReloaded, Time: ref, Jobs: 7,
			Problems: []string{"jobs.yaml:3:5: bad"}, Reason: "jobs.yaml:3:5: bad"}},
			check: func(t *testing.T, m Model) {
				if s := m.statusLine(); !strings.Contains(s, "jobs.yaml refused, old jobs kept") {
					t.Errorf("status %q, want the refusal", s)
				}
				if b := strings.Join(m.banners(), "\n"); !strings.Contains(b, "jobs.yaml:3:5: bad") {
					t.Errorf("banner %q, want the problem", b)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			m := loaded(t, f, Options{}, 120, 30)
			m = selectJob(t, m, "sync_orders")
			m = feed(t, m, f, tc.evs...)
			tc.check(t, m)
			if changes := tc.evs[0].Type != ctl.EventRunOutput; m.dirty != changes {
				t.Errorf("re-reads the state: %v, want %v", m.dirty, changes)
			}
		})
	}
}

func exitCode(n int) *int { return &n }

func TestTailKeepsTheLastLines(t *testing.T) {
	tests := []struct {
		lines     int
		wantFirst string
		wantLen   int
	}{
		{3, "l0", 3},
		{tailLines, "l0", tailLines},
		{tailLines + 7, "l7", tailLines},
		{3*tailLines + 1, "l1001", tailLines},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.lines), func(t *testing.T) {
			var r ring
			for i := range tc.lines {
				r.add("l"+itoa(i), ref)
			}
			got := r.all()
			if len(got) != tc.wantLen || got[0] != tc.wantFirst || got[len(got)-1] != "l"+itoa(tc.lines-1) {
				t.Errorf("%d lines from %q to %q, want %d from %q", len(got), got[0], got[len(got)-1], tc.wantLen, tc.wantFirst)
			}
		})
	}
}

// TestTailSplitsLinesReadAtOnce: an output event holds every line one
// read brought; each is a line of the tail.
func TestTailSplitsLinesReadAtOnce(t *testing.T) {
	s := newStore()
	s.apply(ctl.WireEvent{Type: ctl.EventRunOutput, Job: "j", Stream: "stderr", Line: "a\n\nb"})
	if got, want := s.tail("j"), []string{"stderr | a", "stderr | ", "stderr | b"}; !slices.Equal(got, want) {
		t.Errorf("tail %q, want %q", got, want)
	}
	var many []string
	for i := range tailLines + 5 {
		many = append(many, "l"+itoa(i))
	}
	s.apply(ctl.WireEvent{Type: ctl.EventRunOutput, Job: "k", Stream: "stdout", Line: strings.Join(many, "\n")})
	if got := s.tail("k"); len(got) != tailLines || got[0] != "stdout | l5" || got[len(got)-1] != "stdout | l"+itoa(tailLines+4) {
		t.Errorf("tail of %d lines from %q to %q, want the last %d", len(got), got[0], got[len(got)-1], tailLines)
	}
}

func TestWaitEventsCoalesces(t *testing.T) {
	tests := []struct {
		name       string
		pending    int
		close      bool
		wantBatch  int
		wantClosed bool
	}{
		{"one", 1, false, 1, false},
		{"a burst is one message", 100, false, 100, false},
		{"a flood is cut at maxBatch", maxBatch + 10, false, maxBatch, false},
		{"events then close", 3, true, 3, true},
		{"closed", 0, true, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan ctl.WireEvent, maxBatch+10)
			for range tc.pending {
				ch <- ctl.WireEvent{Type: ctl.EventRunOutput}
			}
			if tc.close {
				close(ch)
			}
			msg := waitEvents(ch)().(eventsMsg)
			if len(msg.events) != tc.wantBatch || msg.closed != tc.wantClosed {
				t.Errorf("batch of %d, closed %v; want %d, %v", len(msg.events), msg.closed, tc.wantBatch, tc.wantClosed)
			}
		})
	}
}

func TestDaemonLostAndBack(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	close(f.events)
	m, cmd := follow(t, m, waitEvents(m.events))
	if !m.conn.lost || cmd == nil {
		t.Fatalf("lost %v, reconnect scheduled %v; want both", m.conn.lost, cmd != nil)
	}
	if !strings.Contains(m.View(), "daemon unreachable at "+sockPath+" — reconnecting…") {
		t.Errorf("no banner:\n%s", m.View())
	}
	steps := []struct {
		name      string
		msg       tea.Msg
		wantLost  bool
		wantTries int
	}{
		{"a second loss schedules nothing more", snapshotMsg{err: fmt.Errorf("%w on %s", ctl.ErrNoDaemon, sockPath)}, true, 1},
		{"the retry fails", subscribedMsg{err: fmt.Errorf("%w on %s", ctl.ErrNoDaemon, sockPath)}, true, 1},
		{"the scheduled retry", reconnectMsg{attempt: 1}, true, 1},
		{"and fails again, backing off", subscribedMsg{err: ctl.ErrNoDaemon}, true, 2},
		{"the next retry", reconnectMsg{attempt: 2}, true, 2},
		{"succeeds", subscribedMsg{ch: make(chan ctl.WireEvent)}, false, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			m, _ = m.update(s.msg)
			if m.conn.lost != s.wantLost || m.conn.attempt != s.wantTries {
				t.Errorf("lost %v after %d attempts, want %v after %d", m.conn.lost, m.conn.attempt, s.wantLost, s.wantTries)
			}
		})
	}
	if strings.Contains(m.View(), "unreachable") || !strings.Contains(m.statusLine(), "reconnected") {
		t.Errorf("after reconnecting the screen still says lost or not reconnected:\n%s", m.View())
	}
}

func TestOtherErrorsKeepTheLink(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	m, _ = m.update(actionMsg{err: fmt.Errorf("%w: %q", ctl.ErrUnknownJob, "gone")})
	if m.conn.lost || !strings.Contains(m.statusLine(), `unknown job: "gone"`) {
		t.Errorf("lost %v, status %q; want the error shown, the link kept", m.conn.lost, m.statusLine())
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{{1, 500 * time.Millisecond}, {2, time.Second}, {3, 2 * time.Second}, {6, 10 * time.Second}, {50, 10 * time.Second}}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.attempt), func(t *testing.T) {
			if got := backoff(tc.attempt); got != tc.want {
				t.Errorf("backoff(%d) = %s, want %s", tc.attempt, got, tc.want)
			}
		})
	}
}

func TestTickRefetches(t *testing.T) {
	tests := []struct {
		name      string
		prep      func(m Model) Model
		clock     time.Duration // after ref
		wantFetch bool          // a read is in flight after the tick
	}{
		{"nothing changed", func(m Model) Model { return m }, 0, false},
		{"an event changed state", func(m Model) Model { m.stale["backup_db"] = true; return m }, 0, true},
		{"a read is in flight", func(m Model) Model { m.stale["backup_db"], m.fetching = true, true; return m }, 0, true},
		{"a reload or resync", func(m Model) Model { m.needFull = true; return m }, 0, true},
		{"a while passed", func(m Model) Model { return m }, refreshEvery, true},
		{"a fire came due", func(m Model) Model { return m }, 5 * time.Second, true},
		{"the source is lost", func(m Model) Model { m.stale["backup_db"], m.conn.lost = true, true; return m }, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := ref
			f := newFake()
			m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 80, 24)
			m = tc.prep(m)
			now = ref.Add(tc.clock)
			m, _ = m.update(tickMsg(now))
			if m.fetching != tc.wantFetch {
				t.Errorf("fetching %v, want %v", m.fetching, tc.wantFetch)
			}
		})
	}
}

// TestSavedLog reads a run's saved log through the source, never from
// the disk itself: the source's own reading (history.TailFile) is tested
// in history.
func TestSavedLog(t *testing.T) {
	long := strings.Repeat("x", 100)
	p := writeLog(t, "stdout | a", "stderr | b")
	big := writeLog(t, append(slices.Repeat([]string{long}, 3000), "stdout | last")...)
	recs := []run.Record{{Job: "j", RunID: "r1", LogPath: p}, {Job: "j", RunID: "r2", LogPath: big}, {Job: "j", RunID: "r3"}}
	tests := []struct {
		name    string
		run     string
		want    []string // the first lines, then the last
		wantErr error
	}{
		{name: "whole", run: "r1", want: []string{"stdout | a", "stderr | b"}},
		{name: "the end of a big one", run: "r2", want: []string{"… [first 40905 bytes not shown]", long}},
		{name: "none", run: "r3", wantErr: ctl.ErrNoLog},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.records = recs
			msg := readLog(context.Background(), f, "j", tc.run)().(logMsg)
			if !errors.Is(msg.err, tc.wantErr) || (tc.wantErr == nil && msg.err != nil) {
				t.Fatalf("err %v, want %v", msg.err, tc.wantErr)
			}
			if n := len(tc.want); n > 0 && (len(msg.lines) < n || !slices.Equal(msg.lines[:n], tc.want)) {
				t.Errorf("lines start %q, want %q", msg.lines[:min(n, len(msg.lines))], tc.want)
			}
			if slices.Contains(f.called(), "log j "+tc.run) != true || msg.run != tc.run {
				t.Errorf("calls %v, message for run %q; want the source asked for run %s", f.called(), msg.run, tc.run)
			}
		})
	}
}

func TestOffBeat(t *testing.T) {
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		at, want time.Duration // after a whole second
	}{
		{0, 500 * time.Millisecond},
		{2 * time.Millisecond, 498 * time.Millisecond},
		{500 * time.Millisecond, time.Second},
		{700 * time.Millisecond, 800 * time.Millisecond},
		{999 * time.Millisecond, 501 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := offBeat(base.Add(tc.at)); got != tc.want {
			t.Errorf("offBeat(+%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestRefreshReadsLocksWhenNeeded(t *testing.T) {
	now := ref
	f := newFake()
	m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 80, 24)
	// Off the locks tab only the held locks are kept (the status line
	// counts them); showing the tab reads them all at once, and leaving it
	// lets the free ones go.
	held := len(heldLocks(f.locks))
	if got := len(m.c.data.locks); got != held || held == 0 || held == len(f.locks) {
		t.Fatalf("start-up kept %d locks, want the %d held of %d", got, held, len(f.locks))
	}
	shown := pressRead(t, m, "2")
	if got := len(shown.c.data.locks); got != len(f.locks) {
		t.Errorf("locks tab shows %d locks, want %d", got, len(f.locks))
	}
	if shown = pressRead(t, shown, "1"); len(shown.c.data.locks) != held {
		t.Errorf("back on the jobs tab %d locks kept, want %d", len(shown.c.data.locks), held)
	}
	tests := []struct {
		name  string
		tab   tab
		after time.Duration
		want  bool
	}{
		{"jobs view, a second later", tabJobs, time.Second, false},
		{"locks view, a second later", tabLocks, time.Second, true},
		{"jobs view, a refresh period later", tabJobs, refreshEvery, true},
	}
	for _, tc := range tests {
		m := m
		m.tab = tc.tab
		if got := m.locksDue(ref.Add(tc.after)); got != tc.want {
			t.Errorf("%s: locksDue %v, want %v", tc.name, got, tc.want)
		}
	}
	// A refresh without locks keeps the locks already shown and does not
	// ask the source for them.
	before := len(f.called())
	msg := m.fetchSnapshot(false)()
	if calls := f.called()[before:]; !slices.Equal(calls, []string{"jobs"}) {
		t.Errorf("calls %v, want [jobs]", calls)
	}
	m, _ = m.update(msg)
	if got := len(m.c.data.locks); got != held {
		t.Errorf("after a jobs-only refresh %d locks, want %d kept", got, held)
	}
}

// lockNamed is the store's lock of that name; zero if it keeps none.
func lockNamed(m Model, name string) ctl.LockStatus {
	for _, l := range m.c.data.locks {
		if l.Lock == name {
			return l
		}
	}
	return ctl.LockStatus{}
}
