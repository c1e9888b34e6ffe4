package ui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// TestTimelineFollowsEvents: a run's end that the stream brings shows at
// once, without a read of the history.
func TestTimelineFollowsEvents(t *testing.T) {
	f := newFake()
	m := showTimeline(t, loaded(t, f, Options{}, 120, 30))
	n := len(f.called())
	m = feed(t, m, f,
		ctl.WireEvent{Type: ctl.EventRunStarted, Job: "backup_db", RunID: "r-b9", PID: 99, Time: at(-50 * time.Second), StartedAt: at(-50 * time.Second), Slot: at(-50 * time.Second)},
		ctl.WireEvent{Type: ctl.EventRunFinished, Job: "backup_db", RunID: "r-b9", Time: at(-30 * time.Second),
			StartedAt: at(-50 * time.Second), Slot: at(-50 * time.Second), Outcome: run.Failed, ExitCode: exitCode(3)})
	g := m.tl.geom(ref)
	lane := laneOf(t, m, "backup_db")
	if c := g.col(at(-30 * time.Second).UnixNano()); lane[c] != '✗' || lane[c-1] != tlBar {
		t.Errorf("the failed run does not end at column %d: %q", c, string(lane))
	}
	for _, c := range f.called()[n:] {
		if strings.HasPrefix(c, "history") {
			t.Errorf("the event brought a read: %s", c)
		}
	}
}

// TestTimelineLanesByHost: with a history shared by several hosts, a job
// has a lane on each host that ran it.
func TestTimelineLanesByHost(t *testing.T) {
	f := newFake()
	f.records = append([]run.Record{
		{Job: "sync_orders", RunID: "r-w2", Outcome: run.OK, ScheduledAt: at(-3 * time.Second), StartedAt: at(-3 * time.Second),
			EndedAt: at(-2 * time.Second), Host: "web-2.example.com"},
		{Job: "sync_orders", RunID: "r-w1", Outcome: run.OK, ScheduledAt: at(-70 * time.Second), StartedAt: at(-70 * time.Second),
			EndedAt: at(-65 * time.Second), Host: host},
	}, f.records...)
	m := showTimeline(t, loaded(t, f, Options{}, 120, 30))
	var labels []string
	for _, l := range m.tl.lanes {
		labels = append(labels, m.tl.label(l))
	}
	want := []string{"backup_db", "cleanup_tmp", "refund_orders", "report_weekly", "rotate_logs", "send_digest",
		"sync_orders@web-1", "sync_orders@web-2"}
	if !slices.Equal(labels, want) {
		t.Errorf("lanes %q, want %q", labels, want)
	}
	if lane := string(laneOf(t, m, "sync_orders@web-2")); strings.ContainsRune(lane, tlHead) || !strings.ContainsRune(lane, '●') {
		t.Errorf("web-2's lane has web-1's running run, or not its own ok run: %q", lane)
	}
}

// TestTimelineReads: the timeline reads the window's history once, of
// all jobs; a longer window reads again; a read that comes back full is
// followed by one read of each job on screen, and nothing more.
func TestTimelineReads(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 120, 30)
	histories := func(from int) []string {
		var out []string
		for _, c := range f.called()[from:] {
			if strings.HasPrefix(c, "history") {
				out = append(out, c)
			}
		}
		return out
	}
	n := len(f.called())
	m = showTimeline(t, m)
	if got := histories(n); !slices.Equal(got, []string{"history "}) {
		t.Errorf("opening read %q, want one read of all jobs", got)
	}
	n = len(f.called())
	m, _ = press(m, "left")
	m = drain(t, m, send(timelineNeedMsg{}))
	if got := histories(n); len(got) != 0 {
		t.Errorf("a move read %q again", got)
	}
	m, cmd := press(m, "5")
	drain(t, m, cmd)
	if got := histories(n); !slices.Equal(got, []string{"history "}) {
		t.Errorf("the 24-h window read %q, want one read of all jobs", got)
	}

	f = newFake()
	for i := range tlPage {
		f.records = append(f.records, run.Record{Job: "sync_orders", RunID: "r-many-" + strconv.Itoa(i), Outcome: run.OK,
			ScheduledAt: at(-time.Duration(i) * time.Millisecond), StartedAt: at(-time.Duration(i) * time.Millisecond)})
	}
	slices.SortStableFunc(f.records, func(a, b run.Record) int { return sortTime(b).Compare(sortTime(a)) })
	m = loaded(t, f, Options{}, 120, 30)
	n = len(f.called())
	showTimeline(t, m)
	want := []string{"history "}
	for _, j := range fixtureJobs() {
		want = append(want, "history "+j.Name)
	}
	if got := histories(n); !slices.Equal(got, want) {
		t.Errorf("a full read was followed by %q, want %q", got, want)
	}
}
