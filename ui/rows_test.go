package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// idleJobs are n jobs none of which fires within the hour after ref.
func idleJobs(n int) []ctl.JobStatus {
	jobs := manyJobs(n)
	for i := range jobs {
		jobs[i].NextRun = ref.Add(time.Hour + time.Duration(i)*time.Millisecond)
	}
	return jobs
}

// tickFor runs the reads of the ticks of secs simulated seconds after
// *now, as onTick would, feeding each read's answer back.
func tickFor(t *testing.T, m Model, now *time.Time, secs int) Model {
	t.Helper()
	for range secs {
		*now = now.Add(time.Second)
		var cmd tea.Cmd
		m, cmd = m.readDue(*now)
		if cmd != nil {
			m, _ = m.update(cmd())
		}
	}
	return m
}

// reads are the fake's calls since before that read jobs: "jobs" for the
// whole table, "jobs A,B" by name.
func reads(f *fakeSource, before int) []string {
	return slices.DeleteFunc(f.called()[before:], func(c string) bool { return !strings.HasPrefix(c, "jobs") })
}

// TestIdleConsoleReadsOnlyTheRowsOnScreen holds the console's idle cost
// deterministically: over a simulated minute with nothing firing, it
// never reads the whole table, and reads by name only the rows on
// screen, once a refresh period.
func TestIdleConsoleReadsOnlyTheRowsOnScreen(t *testing.T) {
	now := ref
	f := newFake()
	f.jobs = idleJobs(10000)
	m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
	before := len(f.called())
	m = tickFor(t, m, &now, 60)
	got := reads(f, before)
	if want := int(time.Minute / refreshEvery); len(got) != want {
		t.Errorf("%d reads in a minute, want %d (one a refresh period): %v", len(got), want, got)
	}
	shown := "jobs " + strings.Join(m.shownJobs(), ",")
	for _, r := range got {
		if r != shown {
			t.Fatalf("read %q, want only the rows on screen (%d of them)", r, len(m.shownJobs()))
		}
	}
}

// TestWhatTheStreamSaysIsReadByName: every change keeps the table true
// without reading it whole, except a reload or a resync, which say
// everything may have changed.
func TestWhatTheStreamSaysIsReadByName(t *testing.T) {
	tests := []struct {
		name     string
		ev       ctl.WireEvent
		wantRead string
		check    func(t *testing.T, j ctl.JobStatus)
	}{
		{"a pause from another client, off screen", ctl.WireEvent{Type: ctl.EventJobPaused, Job: "job_9000"}, "jobs job_9000",
			func(t *testing.T, j ctl.JobStatus) {
				if !j.Paused || j.State != ctl.StatePaused {
					t.Errorf("job_9000 %s paused %v, want paused at once", j.State, j.Paused)
				}
			}},
		{"a start off screen", ctl.WireEvent{Type: ctl.EventRunStarted, Job: "job_9000", RunID: "r9", PID: 9, StartedAt: ref}, "jobs job_9000",
			func(t *testing.T, j ctl.JobStatus) {
				if j.State != ctl.StateRunning || j.PID != 9 {
					t.Errorf("job_9000 %s pid %d, want running at once", j.State, j.PID)
				}
			}},
		{"a resync", ctl.WireEvent{Type: ctl.EventResync}, "jobs", nil},
		{"a reload", ctl.WireEvent{Type: ctl.EventConfigReloaded, Jobs: 10000}, "jobs", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := ref
			f := newFake()
			f.jobs = idleJobs(10000)
			m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
			m = feed(t, m, f, tc.ev)
			if tc.check != nil {
				j, _ := m.c.data.job(tc.ev.Job)
				tc.check(t, j)
			}
			before := len(f.called())
			m = tickFor(t, m, &now, 1)
			if got := reads(f, before); !slices.Equal(got, []string{tc.wantRead}) {
				t.Errorf("reads %v, want [%s]", got, tc.wantRead)
			}
		})
	}
}

// TestAFirePassedIsRead: the daemon moves a job's next fire when it
// fires; the console reads that job, whether or not it is on screen.
func TestAFirePassedIsRead(t *testing.T) {
	now := ref
	f := newFake()
	f.jobs = idleJobs(10000)
	f.jobs[7000].NextRun = ref.Add(1500 * time.Millisecond)
	m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
	before := len(f.called())
	tickFor(t, m, &now, 3)
	if got := reads(f, before); !slices.Equal(got, []string{"jobs job_7000"}) {
		t.Errorf("reads %v, want [jobs job_7000]", got)
	}
}

// TestAMovedFireIsReadWhenItPasses: a read that moves a job's next fire
// is where the console looks next; where the fire was before, it no
// longer looks.
func TestAMovedFireIsReadWhenItPasses(t *testing.T) {
	tests := []struct {
		name  string
		first time.Duration // job_7000's next fire at the load
		moved time.Duration // and as the read an event started brings it
		want  []string      // the reads of the three seconds after the event's
	}{
		{"moved sooner", time.Hour, 2500 * time.Millisecond, []string{"jobs job_7000"}},
		{"moved later", 2500 * time.Millisecond, time.Hour, nil},
		{"unmoved", 2500 * time.Millisecond, 2500 * time.Millisecond, []string{"jobs job_7000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := ref
			f := newFake()
			f.jobs = idleJobs(10000)
			f.jobs[7000].NextRun = ref.Add(tc.first)
			m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
			f.mu.Lock()
			f.jobs[7000].NextRun = ref.Add(tc.moved)
			f.mu.Unlock()
			m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventJobResumed, Job: "job_7000"})
			m = tickFor(t, m, &now, 1) // reads job_7000, for the event
			before := len(f.called())
			tickFor(t, m, &now, 3)
			if got := reads(f, before); !slices.Equal(got, tc.want) {
				t.Errorf("reads %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRowsComingOnScreenAreRead: a row scrolled into view (G) is read at
// the next tick, so that an outside lock holder shows within a second.
func TestRowsComingOnScreenAreRead(t *testing.T) {
	now := ref
	f := newFake()
	f.jobs = idleJobs(10000)
	m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
	m, _ = press(m, "G")
	before := len(f.called())
	tickFor(t, m, &now, 1)
	got := reads(f, before)
	if len(got) != 1 || !strings.Contains(got[0], "job_9999") || strings.Contains(got[0], "job_0000") {
		t.Errorf("reads %v, want the last rows'", got)
	}
}

// TestADaemonWithoutReadsByNameIsReadWhole: against an older daemon the
// console says so and falls back to reading the whole table.
func TestADaemonWithoutReadsByNameIsReadWhole(t *testing.T) {
	now := ref
	f := newFake()
	m := loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 40)
	m, _ = m.update(rowsMsg{err: errors.Join(errors.New("GET /v1/jobs?name="), ctl.ErrUnsupported)})
	if !m.fullReads || !strings.Contains(m.statusLine(), "reads the whole table") {
		t.Fatalf("fullReads %v, status %q; want the fallback said", m.fullReads, m.statusLine())
	}
	before := len(f.called())
	m = tickFor(t, m, &now, 1)
	if got := reads(f, before); !slices.Equal(got, []string{"jobs"}) {
		t.Errorf("reads %v, want [jobs]", got)
	}
}

// BenchmarkKeysOnTenThousandJobs is the answer to G and to a "/" filter
// typed on 10,000 jobs: Update and the View that follows.
func BenchmarkKeysOnTenThousandJobs(b *testing.B) {
	for _, keys := range [][]string{{"G"}, {"/", "j", "o", "b", "_", "9", "9"}} {
		b.Run(strings.Join(keys, ""), func(b *testing.B) {
			f := newFake()
			f.jobs = idleJobs(10000)
			m0 := New(f, Options{Title: sockPath, Clock: fixedClock})
			m0, _ = m0.update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m0, _ = m0.update(snapshotMsg{jobs: f.jobs, locks: f.locks, withLocks: true})
			b.ReportAllocs()
			for b.Loop() {
				m := m0
				for _, k := range keys {
					m, _ = m.update(keyMsg(k))
					_ = m.View()
				}
			}
		})
	}
}
