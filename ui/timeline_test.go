package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// extraRecords are what the wide golden adds to the fixture: a queued
// run that waited for its lock, a missed fire and a run whose host was
// lost.
func extraRecords() []run.Record {
	return []run.Record{
		{Job: "refund_orders", RunID: "r-refund-8", Outcome: run.OK, ScheduledAt: at(-6 * time.Minute),
			StartedAt: at(-5*time.Minute - 20*time.Second), EndedAt: at(-5*time.Minute - 17*time.Second), ExitCode: exit(0)},
		{Job: "rotate_logs", RunID: "r-rotate-m", Outcome: run.Skipped, ScheduledAt: at(-11 * time.Minute),
			Reason: "missed: supervisor woke 2m0s late (suspend or clock step)"},
		{Job: "backup_db", RunID: "r-backup-2", Outcome: run.Interrupted, ScheduledAt: at(-13 * time.Minute),
			StartedAt: at(-13 * time.Minute), EndedAt: at(-12 * time.Minute), Host: host,
			Reason: "host lost: no heartbeat since 2026-03-14T11:48:00Z"},
	}
}

func TestTimelineGoldenScreens(t *testing.T) {
	tests := []struct {
		name  string
		w, h  int
		extra bool
		keys  []string
	}{
		{name: "timeline_80x24", w: 80, h: 24, keys: []string{"G"}},
		{name: "timeline_200x50", w: 200, h: 50, extra: true, keys: []string{"1", "G", "left", "left", "left"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			if tc.extra {
				f.records = append(f.records, extraRecords()...)
				slices.SortStableFunc(f.records, func(a, b run.Record) int { return sortTime(b).Compare(sortTime(a)) })
			}
			m := showTimeline(t, loaded(t, f, Options{}, tc.w, tc.h), tc.keys...)
			got := m.View()
			checkScreen(t, got, tc.w, tc.h)
			compareGolden(t, tc.name, got, true)
		})
	}
}

// laneOf is the lane of job on screen, from its time axis's first column.
func laneOf(t *testing.T, m Model, job string) []rune {
	t.Helper()
	g := m.tl.geom(m.c.now())
	for _, l := range strings.Split(m.tl.View(), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, "› "), job+" ") {
			return []rune(l)[g.nameW+4:]
		}
	}
	t.Fatalf("no lane of %s on screen:\n%s", job, m.tl.View())
	return nil
}

// TestTimelineMarksAtTheirColumns: with the clock pinned, a skip sits at
// its slot's column, the running run's bar runs from its start's column
// to the now-line, and its next fire is ahead of it.
func TestTimelineMarksAtTheirColumns(t *testing.T) {
	m := showTimeline(t, loaded(t, newFake(), Options{}, 120, 30))
	g := m.tl.geom(ref)
	lane := laneOf(t, m, "sync_orders")
	checks := []struct {
		name string
		at   time.Time
		want rune
	}{
		{"the skip of 11:59:55", at(-5 * time.Second), '○'},
		{"the skip of 11:59:45", at(-15 * time.Second), '○'},
		{"the running run's start", at(-25 * time.Second), tlBar},
		{"the now-line, where the running run is", ref, tlHead},
		{"the next fire", at(5 * time.Second), tlNext},
		{"the ok run's end", at(-40*time.Second + 8200*time.Millisecond), '●'},
		{"the failed run's end", at(-90*time.Second + 6*time.Second), '✗'},
	}
	for _, c := range checks {
		if col := g.col(c.at.UnixNano()); lane[col] != c.want {
			t.Errorf("%s: column %d holds %q, want %q; the lane:\n%s", c.name, col, lane[col], c.want, string(lane))
		}
	}
}

// TestTimelineGrowsWithTheClock: the running run's bar grows as the clock
// moves, from what the console holds: nothing is read for it.
func TestTimelineGrowsWithTheClock(t *testing.T) {
	now := ref
	f := newFake()
	m := showTimeline(t, loaded(t, f, Options{Clock: func() time.Time { return now }}, 120, 30))
	length := func() int { // the columns from the head back over the bar and the skips on it
		lane := laneOf(t, m, "sync_orders")
		head := slices.Index(lane, tlHead)
		if head < 0 {
			t.Fatalf("no running run in the lane %q", string(lane))
		}
		n := 0
		for i := head - 1; i >= 0 && (lane[i] == tlBar || lane[i] == '○'); i-- {
			n++
		}
		return n
	}
	calls := len(f.called())
	before := length()
	now = now.Add(20 * time.Second)
	after := length()
	g := m.tl.geom(now)
	if grown := after - before; grown < int(20*time.Second/time.Duration(g.cell))-1 || grown < 3 {
		t.Errorf("the bar grew by %d columns in 20 s at %v a column (%d, then %d)", grown, time.Duration(g.cell), before, after)
	}
	if got := f.called()[calls:]; len(got) > 0 {
		t.Errorf("drawing read the source: %v", got)
	}
}

// TestTimelineWindowKeys: 0 to 5 pick the window, the rule says which.
func TestTimelineWindowKeys(t *testing.T) {
	for i, w := range tlWindows {
		m := showTimeline(t, loaded(t, newFake(), Options{}, 100, 30), string(rune('0'+i)))
		if m.tab != tabTimeline || m.tl.window() != w {
			t.Errorf("key %d: tab %v, window %v, want the timeline at %v", i, m.tab, m.tl.window(), w)
		}
		if !strings.Contains(m.View(), "timeline · "+w.name+" (0-5)") {
			t.Errorf("key %d: the rule does not name %s:\n%s", i, w.name, m.View())
		}
	}
}

// TestTimelineCursor: left and right move between the runs of a lane,
// up and down between lanes; enter opens the run in the job's detail,
// selected there.
func TestTimelineCursor(t *testing.T) {
	m := showTimeline(t, loaded(t, newFake(), Options{}, 120, 30), "G")
	foot := func() string { v := strings.Split(m.View(), "\n"); return v[len(v)-3] }
	if !strings.Contains(foot(), "running sync_orders since 11:59:35") {
		t.Fatalf("the cursor starts elsewhere than the newest run: %q", foot())
	}
	m, _ = press(m, "left", "left", "left")
	if !strings.Contains(foot(), "● ok sync_orders 11:59:20 took 8.2s") {
		t.Fatalf("three runs left of the running one: %q", foot())
	}
	m, _ = press(m, "up", "down")
	if !strings.Contains(foot(), "● ok sync_orders 11:59:20") {
		t.Errorf("up and down came back elsewhere: %q", foot())
	}
	m, cmd := press(m, "enter")
	if msg, ok := cmd().(openRunMsg); !ok || msg.rec.RunID != "r-sync-6" {
		t.Fatalf("enter asked for %#v, want the run r-sync-6 opened", msg)
	}
	m = drain(t, m, cmd)
	if !m.inDetail || m.detail.job != "sync_orders" || m.detail.selKey != "r-sync-6#1#run" {
		t.Errorf("detail open %v on %s, selected %q; want r-sync-6 of sync_orders", m.inDetail, m.detail.job, m.detail.selKey)
	}
	m, cmd = press(m, "esc")
	if m = drain(t, m, cmd); m.inDetail || m.tab != tabTimeline {
		t.Errorf("esc left the detail for tab %v, want the timeline", m.tab)
	}
}

// TestTimelineHelp: the ? help on the timeline lists its keys, and not
// the digits as tabs, which pick the window there.
func TestTimelineHelp(t *testing.T) {
	m := showTimeline(t, loaded(t, newFake(), Options{}, 120, 40), "?")
	h := m.helpView()
	for _, want := range []string{"0-5", "window 5m…24h", "←/h", "older run", "→/l", "newer run", "enter", "open run"} {
		if !strings.Contains(h, want) {
			t.Errorf("the timeline's help lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "1-5") {
		t.Errorf("the timeline's help offers the digits as tabs:\n%s", h)
	}
}

// TestTimelineDrawsAWaitThatGaveUp: a fire that waited for a resource's
// slot for a minute and was skipped shows its wait from its slot, and the
// skip where it gave up.
func TestTimelineDrawsAWaitThatGaveUp(t *testing.T) {
	f := newFake()
	f.records = append([]run.Record{{Job: "backup_db", RunID: "r-wait", Outcome: run.Skipped,
		ScheduledAt: at(-3 * time.Minute), EndedAt: at(-2 * time.Minute), ResourceWait: time.Minute,
		Reason: "resource db full after waiting 1m0s: held by export_a on h since 11:56:00"}}, f.records...)
	m := showTimeline(t, loaded(t, f, Options{}, 120, 30))
	g := m.tl.geom(ref)
	lane := laneOf(t, m, "backup_db")
	if col := g.col(at(-2 * time.Minute).UnixNano()); lane[col] != '○' {
		t.Errorf("the skip where it gave up: column %d holds %q; the lane:\n%s", col, lane[col], string(lane))
	}
	if col := g.col(at(-150 * time.Second).UnixNano()); lane[col] != tlWait {
		t.Errorf("the wait before it: column %d holds %q; the lane:\n%s", col, lane[col], string(lane))
	}
}

// TestAWaitFromEventToStart: a fire waiting for a resource's slot makes
// its job's row waiting with what it waits for (the row keeps it), its
// lane on the timeline draws the wait up to the now-line, and the run's
// start ends the wait and shows the slots it holds in its detail.
func TestAWaitFromEventToStart(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 120, 30)
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventRunWaiting, Job: "backup_db", RunID: "r-backup-3",
		Time: at(-2 * time.Minute), Resource: "db", Held: 2, Size: 2, Until: at(time.Minute)})
	j, _ := m.c.data.job("backup_db")
	if j.State != ctl.StateWaiting || j.WaitingFor == nil || j.WaitingFor.RunID != "r-backup-3" {
		t.Fatalf("after run_waiting: state %q, waiting for %+v", j.State, j.WaitingFor)
	}
	if got := nowText(j, ref); got != "waiting for db (2/2 held), gives up in 1m" {
		t.Errorf("the row says %q", got)
	}
	m = showTimeline(t, m)
	g := m.tl.geom(ref)
	lane := laneOf(t, m, "backup_db")
	for _, d := range []time.Duration{-110 * time.Second, -30 * time.Second} {
		if col := g.col(at(d).UnixNano()); lane[col] != tlWait {
			t.Errorf("the wait at %v: column %d holds %q; the lane:\n%s", d, col, lane[col], string(lane))
		}
	}
	m = feed(t, m, f, ctl.WireEvent{Type: ctl.EventRunStarted, Job: "backup_db", RunID: "r-backup-3", Time: ref,
		StartedAt: ref, PID: 4242, Lock: "backup_db", Resources: []string{"db/0"}})
	j, _ = m.c.data.job("backup_db")
	if j.WaitingFor != nil || j.State != ctl.StateRunning {
		t.Errorf("after the start: state %q, waiting for %+v", j.State, j.WaitingFor)
	}
	if got := runText(j, ref); !strings.Contains(got, "slots db/0") {
		t.Errorf("the detail's run line %q names no slot", got)
	}
	if got := nowText(j, ref); !strings.Contains(got, "holds db/0") {
		t.Errorf("the row %q names no slot", got)
	}
}

// TestRecordDetailSlots: a run's record names its slots and its wait for
// them; a skip after a wait leaves the wait to its reason, which says it.
func TestRecordDetailSlots(t *testing.T) {
	tests := []struct {
		name string
		r    run.Record
		want string
	}{
		{"waited", run.Record{Outcome: run.OK, Resources: []string{"db/0", "db/1"}, ResourceWait: 41 * time.Second},
			"slots db/0 db/1 · waited 41s for a slot"},
		{"took at once", run.Record{Outcome: run.OK, Resources: []string{"db/0"}}, "slots db/0"},
		{"gave up", run.Record{Outcome: run.Skipped, ResourceWait: time.Minute, Reason: "resource db full after waiting 1m0s"},
			"resource db full after waiting 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recordDetail(tt.r); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLocksKeepRoomForResources: with more locks than the screen holds,
// the resources still show under the table, and the last lock, selected,
// is on screen above them.
func TestLocksKeepRoomForResources(t *testing.T) {
	f := newFake()
	for i := range 60 {
		name := "lock_" + itoa(100+i)
		f.locks = append(f.locks, ctl.LockStatus{Lock: name})
	}
	f.resources = []ctl.ResourceStatus{{Resource: "db", Size: 2, Held: 1,
		Slots: []ctl.SlotStatus{{Slot: 0, Held: true, PID: 1, Host: "h", Job: "export_a", RunID: "r-a", Since: at(-time.Minute)}, {Slot: 1}}}}
	m := pressRead(t, loaded(t, f, Options{}, 80, 24), "tab", "G")
	screen := m.View()
	checkScreen(t, screen, 80, 24)
	for _, want := range []string{"RESOURCES", "db  1/2 held: db/0 export_a", "lock_159"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
}
