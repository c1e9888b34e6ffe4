package ui

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/ctl"
)

var update = flag.Bool("update", false, "rewrite the golden screens (and docs/screens)")

// feed delivers events through the model's subscription, as the program
// would: into the source's channel, then one waitEvents batch.
func feed(t *testing.T, m Model, f *fakeSource, evs ...ctl.WireEvent) Model {
	t.Helper()
	for _, ev := range evs {
		f.events <- ev
	}
	if m.events == nil {
		t.Fatal("the model has no subscription")
	}
	m, _ = follow(t, m, waitEvents(m.events))
	return m
}

func output(job string, lines ...string) []ctl.WireEvent {
	var evs []ctl.WireEvent
	for i, l := range lines {
		stream := "stdout"
		if strings.HasPrefix(l, "!") {
			stream, l = "stderr", l[1:]
		}
		evs = append(evs, ctl.WireEvent{Type: ctl.EventRunOutput, Job: job, RunID: "r-sync-7",
			Time: at(time.Duration(i-20) * time.Second), Stream: stream, Line: l})
	}
	return evs
}

var syncOutput = output("sync_orders",
	"fetching orders since 2026-03-14T11:59:25Z",
	"page 1: 200 orders",
	"page 2: 200 orders",
	"page 3: 143 orders",
	"!warn: order 88412 has no customer, skipped",
	"writing 542 orders to the warehouse",
	"batch 1/3 committed",
	"batch 2/3 committed",
)

// screens are the golden cases: each starts from the loaded fixture.
var screens = []struct {
	name string
	w, h int
	opts Options
	prep func(t *testing.T, m Model, f *fakeSource) Model
	doc  bool // also a docs/screens capture
}{
	{name: "jobs", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "G") // sync_orders, the running one, is last by name
		return m
	}},
	{name: "jobs_wide", w: 120, h: 30, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "G")
		return m
	}},
	{name: "jobs_200", w: 200, h: 30, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "G")
		return m
	}},
	// The jobs pane at the two sizes issue 43 holds it to: sorted by the
	// next fire (N) at 80x24, as it opens at 200x50.
	{name: "jobs_80x24", w: 80, h: 24, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "N")
		return m
	}},
	{name: "jobs_200x50", w: 200, h: 50, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "G")
		return m
	}},
	{name: "columns", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "c", "down", "down", "down", "down", "down", "down", "down", "down", " ")
		return m
	}},
	{name: "command_strip", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, cmd := press(m, "g", "p")
		return untilAction(t, m, cmd)
	}},
	// The preview under the table at 80 columns, beside it at 200.
	{name: "jobs_preview_80x24", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		return selectJob(t, m, "refund_orders")
	}},
	{name: "jobs_preview_200x50", w: 200, h: 50, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		return selectJob(t, feed(t, m, f, syncOutput...), "sync_orders")
	}},
	{name: "hosts", w: 80, h: 24, doc: true, prep: showHosts},
	{name: "hosts_200x50", w: 200, h: 50, doc: true, prep: showHosts},
	{name: "jobs_filtered", w: 80, h: 24, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "/", "o", "r", "d", "enter", "s")
		return m
	}},
	{name: "detail", w: 80, h: 24, doc: true, prep: openSync},
	{name: "detail_wide", w: 120, h: 30, doc: true, prep: openSync},
	{name: "detail_200", w: 200, h: 40, doc: true, prep: openSync},
	{name: "detail_80x24", w: 80, h: 24, doc: true, prep: openSync},
	{name: "detail_200x50", w: 200, h: 50, doc: true, prep: openSync},
	// logs: the log full screen, a search on and its matches marked.
	{name: "logs_80x24", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(openSync(t, m, f), "f", "/", "o", "r", "d", "e", "r", "s", "enter", "n")
		return m
	}},
	{name: "logs_200x50", w: 200, h: 50, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(openSync(t, m, f), "f", "t", "/", "o", "r", "d", "e", "r", "s", "enter", "n")
		return m
	}},
	{name: "detail_advice", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, cmd := press(selectJob(t, m, "refund_orders"), "enter")
		m, cmd = follow(t, m, cmd)
		m, _ = follow(t, m, cmd)
		return m
	}},
	{name: "detail_log", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		p := writeLog(t, "stdout | fetching orders since 2026-03-14T11:58:55Z", "stdout | page 1: 88 orders",
			"stderr | warn: slow response from the warehouse (2.1s)", "stdout | writing 88 orders", "stdout | done")
		f.records[2].LogPath = p
		m = openSync(t, m, f)
		m, cmd := press(m, "down", "down", "down") // live, skip, skip, the ok run
		m, _ = follow(t, m, cmd)
		return m
	}},
	{name: "detail_skip", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m = openSync(t, m, f)
		m, _ = press(m, "down")
		return m
	}},
	{name: "locks", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m = pressRead(t, m, "tab", "G") // tmp, held by flock(1)
		return m
	}},
	{name: "locks_wide", w: 120, h: 30, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m = pressRead(t, m, "tab", "down")
		return m
	}},
	{name: "locks_resources", w: 120, h: 30, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		f.resources = []ctl.ResourceStatus{{Resource: "db", Size: 2, Held: 2,
			Slots: []ctl.SlotStatus{
				{Slot: 0, Held: true, PID: 4242, Host: "db-host-1", Job: "export_a", RunID: "r-a", Since: at(-3 * time.Minute)},
				{Slot: 1, Held: true, PID: 4343, Host: "db-host-2", Job: "export_b", RunID: "r-b", Since: at(-time.Minute)}},
			Waiters: []ctl.WaiterStatus{{Job: "export_c", RunID: "r-c", Host: "db-host-1", Since: at(-10 * time.Second), Until: at(50 * time.Second)}}},
			{Resource: "backup_disk", Size: 1, Slots: []ctl.SlotStatus{{Slot: 0}}, Waiters: []ctl.WaiterStatus{}}}
		m = pressRead(t, m, "tab")
		return m
	}},
	{name: "history", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "3")
		return m
	}},
	{name: "history_wide", w: 120, h: 30, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "3", "o")
		return m
	}},
	{name: "help", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "?")
		return m
	}},
	{name: "command_line", w: 80, h: 24, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, ":", "r", "e", "s", "u", "m", "e", " ", "r", "tab")
		return m
	}},
	{name: "read_only", w: 80, h: 24, opts: Options{ReadOnly: true}, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, _ = press(m, "G", "?")
		return m
	}},
	{name: "kill_confirm", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, cmd := press(m, "G", "x")
		m, _ = follow(t, m, cmd)
		return m
	}},
	{name: "force_confirm", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		m, cmd := press(m, "g", "j", "j", "j", "r")
		m, _ = follow(t, m, cmd)
		return m
	}},
	{name: "quit_confirm", w: 80, h: 24, doc: true, opts: Options{Title: "embedded · /srv/app/jobs.yaml · log /srv/app/.cronvisor/cronvisor.log", Embedded: true},
		prep: func(t *testing.T, m Model, f *fakeSource) Model {
			m, _ = press(m, "q")
			return m
		}},
	{name: "history_degraded", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		jobs := append([]ctl.JobStatus(nil), f.jobs...)
		for i := range jobs {
			jobs[i].History = "history degraded since 2026-06-01T11:58:00Z: history: commit: database or disk is full (13 records waiting)"
		}
		m, _ = m.update(snapshotMsg{jobs: jobs})
		return m
	}},
	{name: "daemon_lost", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		close(f.events)
		m, _ = follow(t, m, waitEvents(m.events))
		return m
	}},
	{name: "daemon_lost_state_dir", w: 80, h: 24, doc: true, opts: Options{Offline: newFakeStateDir()}, prep: loseToStateDir},
	{name: "paused_by", w: 80, h: 24, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		return selectJob(t, m, "report_weekly")
	}},
	{name: "reload_refused", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		return feed(t, m, f, refusedReload)
	}},
	{name: "shutting_down", w: 80, h: 24, doc: true, prep: func(t *testing.T, m Model, f *fakeSource) Model {
		return feed(t, m, f, ctl.WireEvent{Type: ctl.EventShuttingDown, Time: ref, Jobs: 1})
	}},
}

// showHosts shares the history with a fleet of three and shows the
// Hosts tab.
func showHosts(t *testing.T, m Model, f *fakeSource) Model {
	t.Helper()
	f.hosts = fixtureHosts()
	m, _ = follow(t, m, m.fetchHosts())
	m, cmd := press(m, "5")
	m, _ = follow(t, m, cmd)
	return m
}

func openSync(t *testing.T, m Model, f *fakeSource) Model {
	t.Helper()
	m = feed(t, m, f, syncOutput...)
	m, cmd := press(m, "G", "enter")
	m, cmd = follow(t, m, cmd) // openJobMsg, answered by the job's history fetch
	m, _ = follow(t, m, cmd)
	return m
}

func TestGoldenScreens(t *testing.T) {
	for _, tc := range screens {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			m := loaded(t, f, tc.opts, tc.w, tc.h)
			m = tc.prep(t, m, f)
			got := m.View()
			checkScreen(t, got, tc.w, tc.h)
			compareGolden(t, tc.name, got, tc.doc)
		})
	}
}

// checkScreen holds every screen to the terminal's size: exactly h lines,
// none wider than w, so nothing wraps or scrolls.
func checkScreen(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
}

// compareGolden compares a screen with testdata/NAME.golden, ignoring
// trailing spaces, which editors strip.
func compareGolden(t *testing.T, name, screen string, doc bool) {
	t.Helper()
	got := trimLines(screen)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		write(t, path, got)
		if doc { // plain text: a search's marks are escapes even without colours
			write(t, filepath.Join("..", "docs", "screens", name+".txt"), ansi.Strip(got))
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no golden %s; run go test ./ui -run TestGoldenScreens -update", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("screen %s differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}
