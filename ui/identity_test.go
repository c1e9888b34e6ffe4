package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// newerRuns are n fresh ok runs of sync_orders, newest first, that
// arrive after the fixture's.
func newerRuns(n int) []run.Record {
	var recs []run.Record
	for i := n; i > 0; i-- {
		slot := at(time.Duration(i) * time.Second)
		recs = append(recs, run.Record{Job: "sync_orders", RunID: "r-new-" + itoa(i), Outcome: run.OK,
			ScheduledAt: slot, StartedAt: slot, EndedAt: slot.Add(time.Second), ExitCode: exit(0)})
	}
	return recs
}

// syncPage is sync_orders' history page as the source now answers it:
// the fresh runs on top of the fixture's.
func syncPage(f *fakeSource, fresh []run.Record) []run.Record {
	var out []run.Record
	for _, r := range append(fresh, f.records...) {
		if r.Job == "sync_orders" {
			out = append(out, r)
		}
	}
	return out
}

// TestDetailSelectionHoldsTheRun is issue 25's point 2: in the detail of
// a job that keeps firing, the selected run stays selected while new
// runs push it down, and the output's title and body name that run.
func TestDetailSelectionHoldsTheRun(t *testing.T) {
	f := newFake()
	f.records[2].LogPath = writeLog(t, "stdout | the output of r-sync-6")
	m := openSync(t, loaded(t, f, Options{}, 80, 30), f)
	m, cmd := press(m, "down", "down", "down") // live, skip, skip, the ok run r-sync-6
	if r, _ := m.detail.selected(); r.RunID != "r-sync-6" {
		t.Fatalf("selected %q, want r-sync-6", r.RunID)
	}
	logCmd := cmd // the log is still being read when the page moves
	for n := 1; n <= 3; n++ {
		m, _ = m.update(historyMsg{job: "sync_orders", recs: syncPage(f, newerRuns(n))})
		r, _ := m.detail.selected()
		if r.RunID != "r-sync-6" {
			t.Fatalf("after %d new runs the selection is %q, want r-sync-6", n, r.RunID)
		}
		if want := itoa(4+n) + " of " + itoa(10+n); !strings.Contains(m.View(), want) {
			t.Errorf("after %d new runs the counter is not %q:\n%s", n, want, m.View())
		}
	}
	m, _ = follow(t, m, logCmd)
	screen := m.View()
	if !strings.Contains(screen, "run r-sync-6") || !strings.Contains(screen, "the output of r-sync-6") {
		t.Errorf("the output's title and body are not both r-sync-6's:\n%s", screen)
	}
}

// TestDetailLogOfAnotherRunIsDropped: a log read for a run that is no
// longer selected never shows under the selected run's title.
func TestDetailLogOfAnotherRunIsDropped(t *testing.T) {
	f := newFake()
	f.logs = map[string][]string{"r-sync-6": {"stdout | six"}, "r-sync-old0": {"stdout | old zero"}}
	m := openSync(t, loaded(t, f, Options{}, 80, 30), f)
	m, first := press(m, "down", "down", "down") // r-sync-6
	m, _ = press(m, "down")                      // r-sync-old0, its log not read yet
	m, _ = follow(t, m, first)                   // r-sync-6's log arrives late
	if s := m.View(); strings.Contains(s, "six") || !strings.Contains(s, "run r-sync-old0") {
		t.Errorf("r-sync-6's log shows under r-sync-old0:\n%s", s)
	}
}

// TestSavedLogFoundWithoutALogPath: a run whose record names no log file
// still shows its saved log when the daemon has it; only when the daemon
// has none does the view say so.
func TestSavedLogFoundWithoutALogPath(t *testing.T) {
	f := newFake()
	f.records[2].LogPath = ""
	f.logs = map[string][]string{"r-sync-6": {"stdout | found by its run id"}}
	m := openSync(t, loaded(t, f, Options{}, 80, 30), f)
	m, cmd := press(m, "down", "down", "down")
	m, _ = follow(t, m, cmd)
	if s := m.View(); !strings.Contains(s, "found by its run id") || strings.Contains(s, "no saved log") {
		t.Errorf("the saved log of r-sync-6 is not shown:\n%s", s)
	}
	m, cmd = press(m, "down") // r-sync-old0: no log anywhere
	m, _ = follow(t, m, cmd)
	if s := m.View(); !strings.Contains(s, "no saved log for run r-sync-old0") {
		t.Errorf("a run without a log does not say so:\n%s", s)
	}
}

// TestHistorySelectionHoldsTheRecord: the history tab's cursor stays on
// its record when new records arrive at the top.
func TestHistorySelectionHoldsTheRecord(t *testing.T) {
	f := newFake()
	m, _ := press(loaded(t, f, Options{}, 80, 30), "3", "down", "down")
	want := recKey(m.c.data.records[m.hist.rows[m.hist.cur.pos]])
	f.records = append(newerRuns(3), f.records...)
	m, _ = follow(t, m, m.fetchHistory(""))
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "backup_db", RunID: "r-live-skip",
		Slot: at(9 * time.Second), Time: at(9 * time.Second), Reason: "paused"})
	if got := recKey(m.c.data.records[m.hist.rows[m.hist.cur.pos]]); got != want {
		t.Errorf("the history cursor moved from %s to %s", want, got)
	}
}

// TestJobsAndLocksSelectionHoldsTheName: the jobs and locks tables keep
// their selection by name when a snapshot reorders them.
func TestJobsAndLocksSelectionHoldsTheName(t *testing.T) {
	f := newFake()
	m := selectJob(t, loaded(t, f, Options{}, 80, 24), "refund_orders")
	m = pressRead(t, m, "tab", "down", "down") // the locks: report_weekly
	jobs, locks := slices.Clone(f.jobs), slices.Clone(f.locks)
	slices.Reverse(jobs)
	slices.Reverse(locks)
	m, _ = m.update(snapshotMsg{jobs: jobs, locks: locks, withLocks: true})
	if m.jobs.name() != "refund_orders" || m.locks.name() != "report_weekly" {
		t.Errorf("selections %q and %q, want refund_orders and report_weekly", m.jobs.name(), m.locks.name())
	}
}

// TestOneRecordOneRow is issue 25's point 3: a record that the stream
// delivers after a history page already had it (or before the store
// wrote it, then in the next page) is on one row, whichever came first.
func TestOneRecordOneRow(t *testing.T) {
	skip := ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "backup_db", RunID: "r-backup-s9",
		Slot: at(3 * time.Second), Time: at(3*time.Second + 20*time.Millisecond), Reason: "lock held"}
	stored := run.Record{Job: "backup_db", RunID: "r-backup-s9", Outcome: run.Skipped,
		ScheduledAt: at(3 * time.Second), Reason: "lock held", Attempt: 1}
	for _, tc := range []struct {
		name        string
		eventFirst  bool
		pageHasSkip bool
	}{
		{"the page, then the late event", false, true},
		{"the event, then a page read before the write", true, false},
		{"the event, then a page with it", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			m, _ := press(loaded(t, f, Options{}, 80, 30), "3")
			if tc.pageHasSkip {
				f.records = append([]run.Record{stored}, f.records...)
			}
			if tc.eventFirst {
				m = feed(t, m, f, skip)
				m, _ = follow(t, m, m.fetchHistory(""))
			} else {
				m, _ = follow(t, m, m.fetchHistory(""))
				m = feed(t, m, f, skip)
			}
			n := 0
			for _, i := range m.hist.rows {
				if m.c.data.records[i].RunID == "r-backup-s9" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the skip is on %d rows, want 1", n)
			}
		})
	}
}

// TestKeyBurstIsAppliedInOrder is issue 25's point 7: keys that arrive
// in one read (one KeyRunes message with several runes, as
// `tmux send-keys j j j` gives) are each applied, in order.
func TestKeyBurstIsAppliedInOrder(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	m, _ = m.update(keyMsg("jjj"))
	if m.jobs.cur.pos != 3 {
		t.Errorf("jjj moved the cursor to row %d, want 3", m.jobs.cur.pos)
	}
	m, _ = m.update(keyMsg("kk"))
	if m.jobs.cur.pos != 1 {
		t.Errorf("kk moved the cursor to row %d, want 1", m.jobs.cur.pos)
	}
	m, _ = m.update(keyMsg("/sync"))
	if !m.jobs.filter.editing || m.jobs.filter.input.Value() != "sync" || len(m.jobs.rows) != 1 {
		t.Errorf("/sync typed at once: filter %q (editing %v), %d rows; want sync, 1 row",
			m.jobs.filter.input.Value(), m.jobs.filter.editing, len(m.jobs.rows))
	}
}

// TestDetailBurstMovesThreeRuns: j j j in one read picks the third older
// entry of the detail's runs list.
func TestDetailBurstMovesThreeRuns(t *testing.T) {
	f := newFake()
	m := openSync(t, loaded(t, f, Options{}, 80, 30), f)
	m, _ = m.update(keyMsg("jjj"))
	if r, _ := m.detail.selected(); m.detail.sel != 3 || r.RunID != "r-sync-6" {
		t.Errorf("jjj selected entry %d (%q), want 3 (r-sync-6)", m.detail.sel, r.RunID)
	}
}
