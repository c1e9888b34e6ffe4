package ui

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// isQuit reports whether cmd ends the program.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// selectJob moves the jobs table's cursor to job.
func selectJob(t *testing.T, m Model, job string) Model {
	t.Helper()
	m, _ = press(m, "g")
	for m.jobs.name() != job {
		before := m.jobs.cur.pos
		m, _ = press(m, "down")
		if m.jobs.cur.pos == before {
			t.Fatalf("no job %s in the table", job)
		}
	}
	return m
}

func TestTabs(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		wantTab tab
	}{
		{"tab goes to locks", []string{"tab"}, tabLocks},
		{"tab twice goes to history", []string{"tab", "tab"}, tabHistory},
		{"tab thrice goes to the timeline", []string{"tab", "tab", "tab"}, tabTimeline},
		{"tab wraps around", []string{"tab", "tab", "tab", "tab"}, tabJobs},
		{"shift+tab goes back to the timeline", []string{"shift+tab"}, tabTimeline},
		{"4 goes to the timeline", []string{"4"}, tabTimeline},
		{"on the timeline, 1 picks a window, not a tab", []string{"4", "1"}, tabTimeline},
		{"on the timeline, tab leaves it", []string{"4", "tab"}, tabJobs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, 24)
			m, _ = press(m, tc.keys...)
			if m.tab != tc.wantTab || m.inDetail {
				t.Errorf("tab %v (detail %v), want %v", m.tab, m.inDetail, tc.wantTab)
			}
		})
	}
}

func TestDetailOpensAndCloses(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string // to the row of sync_orders
		wantTab tab
	}{
		{"from the jobs table", []string{"G"}, tabJobs},
		{"from the history", []string{"3"}, tabHistory}, // its newest record is a skip of sync_orders
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			m, _ := press(loaded(t, f, Options{}, 80, 24), tc.keys...)
			m, cmd := press(m, "enter")
			if got := cmd(); got != (openJobMsg{job: "sync_orders"}) {
				t.Fatalf("enter asked for %#v, want openJobMsg for sync_orders", got)
			}
			m, cmd = m.update(openJobMsg{job: "sync_orders"})
			if !m.inDetail || m.detail.job != "sync_orders" || !strings.Contains(m.header(), "› sync_orders") {
				t.Fatalf("not in sync_orders' detail after openJobMsg: %s", m.header())
			}
			m, _ = follow(t, m, cmd)
			if len(m.detail.recs) != 9 {
				t.Errorf("detail has %d records of sync_orders, want its 9 finished ones", len(m.detail.recs))
			}
			if !slices.Contains(f.called(), "history sync_orders") {
				t.Errorf("calls %v, want a history query for sync_orders", f.called())
			}
			m, cmd = press(m, "esc")
			if cmd != nil {
				m, _ = m.update(cmd())
			}
			if m.inDetail || m.tab != tc.wantTab {
				t.Errorf("esc left detail %v tab %v, want tab %v", m.inDetail, m.tab, tc.wantTab)
			}
		})
	}
}

func TestActions(t *testing.T) {
	tests := []struct {
		name      string
		job       string
		keys      []string
		wantCall  string // "" for none
		wantAsk   bool
		wantState string // a fragment of the status line
		result    ctl.RunResult
	}{
		{name: "run now skipped", job: "backup_db", keys: []string{"r"}, wantCall: "run backup_db",
			result:    ctl.RunResult{RunID: "r-manual", Outcome: "skipped", Reason: "lock held by pid 77@web-1"},
			wantState: "backup_db not started: skipped, lock held by pid 77@web-1"},
		{name: "run now without an answer yet", job: "backup_db", keys: []string{"r"}, wantCall: "run backup_db",
			result:    ctl.RunResult{RunID: "r-late"},
			wantState: "asked to run backup_db (run r-late); it had not started"},
		{name: "run now", job: "backup_db", keys: []string{"r"}, wantCall: "run backup_db", wantState: "started run r-manual of backup_db"},
		{name: "pause", job: "backup_db", keys: []string{"p"}, wantCall: "pause backup_db", wantState: "paused backup_db"},
		{name: "p resumes a paused job", job: "report_weekly", keys: []string{"p"}, wantCall: "resume report_weekly", wantState: "resumed"},
		{name: "kill asks first", job: "sync_orders", keys: []string{"x"}, wantAsk: true},
		{name: "kill confirmed", job: "sync_orders", keys: []string{"x", "y"}, wantCall: "kill sync_orders", wantState: "killed sync_orders: 1 run ended (interrupted)"},
		{name: "run of a paused job asks first", job: "report_weekly", keys: []string{"r"}, wantAsk: true,
			wantState: "Run report_weekly anyway, once? The job is paused (by alice at 10:00:00). y/n"},
		{name: "run of a paused job, forced", job: "report_weekly", keys: []string{"r", "y"}, wantCall: "run --force report_weekly",
			result:    ctl.RunResult{Hold: &ctl.FireHold{Paused: true}},
			wantState: "started run r-forced of report_weekly although the job is paused; it stays"},
		{name: "run of a paused job, declined", job: "report_weekly", keys: []string{"r", "n"}, wantState: "cancelled"},
		{name: "run of a disabled job asks first", job: "send_digest", keys: []string{"r"}, wantAsk: true,
			wantState: "Run send_digest anyway, once? The job is disabled (enabled: false in jobs.yam"},
		{name: "a refusal the console had not seen asks then", job: "backup_db", keys: []string{"r"}, wantCall: "run backup_db", wantAsk: true,
			result:    ctl.RunResult{RunID: "r-no", Refused: true, Outcome: "refused", Hold: &ctl.FireHold{Paused: true, PausedBy: &ctl.PauseInfo{User: "alice"}}},
			wantState: "Run backup_db anyway, once? The job is paused (by alice). y/n"},
		{name: "kill declined", job: "sync_orders", keys: []string{"x", "n"}, wantState: "cancelled"},
		{name: "kill of an idle job does nothing", job: "backup_db", keys: []string{"x"}},
		{name: "reload asks first", job: "backup_db", keys: []string{"R"}, wantAsk: true, wantState: "Reload jobs.yaml?"},
		{name: "reload confirmed", job: "backup_db", keys: []string{"R", "y"}, wantCall: "reload", wantState: "reloaded jobs.yaml"},
		{name: "reload declined", job: "backup_db", keys: []string{"R", "n"}, wantState: "cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.runResult = tc.result
			m := selectJob(t, loaded(t, f, Options{}, 80, 24), tc.job)
			before := len(f.called())
			for _, k := range tc.keys {
				var cmd tea.Cmd
				m, cmd = press(m, k)
				for cmd != nil { // request, action, snapshot
					m, cmd = follow(t, m, cmd)
				}
			}
			calls := f.called()[before:]
			calls = slices.DeleteFunc(calls, func(c string) bool { return strings.HasPrefix(c, "jobs") || c == "locks" || c == "resources" })
			if tc.wantCall == "" && len(calls) > 0 || tc.wantCall != "" && !reflect.DeepEqual(calls, []string{tc.wantCall}) {
				t.Errorf("calls %v, want %q", calls, tc.wantCall)
			}
			if (m.ask != nil) != tc.wantAsk {
				t.Errorf("question %v, want one: %v", m.ask, tc.wantAsk)
			}
			if !strings.Contains(m.statusLine(), tc.wantState) {
				t.Errorf("status line %q, want it to say %q", m.statusLine(), tc.wantState)
			}
		})
	}
}

func TestQuit(t *testing.T) {
	tests := []struct {
		name     string
		embedded bool
		idle     bool // no job running
		keys     []string
		wantQuit bool
		wantAsk  bool
	}{
		{name: "attached quits at once", keys: []string{"q"}, wantQuit: true},
		{name: "ctrl+c quits at once", keys: []string{"ctrl+c"}, wantQuit: true},
		{name: "embedded with a run asks", embedded: true, keys: []string{"q"}, wantAsk: true},
		{name: "embedded, yes quits", embedded: true, keys: []string{"q", "y"}, wantQuit: true},
		{name: "embedded, no stays", embedded: true, keys: []string{"q", "n"}},
		{name: "embedded, ctrl+c twice quits", embedded: true, keys: []string{"ctrl+c", "ctrl+c"}, wantQuit: true},
		{name: "embedded and idle quits at once", embedded: true, idle: true, keys: []string{"q"}, wantQuit: true},
		{name: "q while filtering is text", keys: []string{"/", "q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			if tc.idle {
				for i := range f.jobs {
					f.jobs[i].State = ctl.StateIdle
				}
			}
			m := loaded(t, f, Options{Embedded: tc.embedded}, 80, 24)
			m, cmd := press(m, tc.keys...)
			if isQuit(cmd) != tc.wantQuit {
				t.Errorf("quit %v, want %v", isQuit(cmd), tc.wantQuit)
			}
			if (m.ask != nil) != tc.wantAsk {
				t.Errorf("question %v, want one: %v", m.ask, tc.wantAsk)
			}
			if tc.wantAsk && !strings.Contains(m.statusLine(), "1 job running; quit and end it? y/n") {
				t.Errorf("status line %q, want the quit question", m.statusLine())
			}
		})
	}
}

func TestFilterAndSort(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want []string // the table's jobs in order
	}{
		{"by name", nil, []string{"backup_db", "cleanup_tmp", "refund_orders", "report_weekly", "rotate_logs", "send_digest", "sync_orders"}},
		{"filter by name", []string{"/", "o", "r", "d", "enter"}, []string{"refund_orders", "sync_orders"}},
		{"filter by state", []string{"/", "p", "a", "u", "s", "enter"}, []string{"report_weekly"}},
		{"esc clears the filter", []string{"/", "z", "z", "esc"}, []string{"backup_db", "cleanup_tmp", "refund_orders", "report_weekly", "rotate_logs", "send_digest", "sync_orders"}},
		{"sort by next fire, none last", []string{"s"}, []string{"sync_orders", "refund_orders", "rotate_logs", "cleanup_tmp", "backup_db", "report_weekly", "send_digest"}},
		{"sort by state, running first", []string{"s", "s"}, []string{"sync_orders", "refund_orders", "report_weekly", "backup_db", "cleanup_tmp", "rotate_logs", "send_digest"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, 24)
			m, _ = press(m, tc.keys...)
			var got []string
			for _, r := range m.jobs.rows {
				got = append(got, m.c.data.jobs[r].name)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHistoryOutcomeFilter(t *testing.T) {
	tests := []struct {
		presses int
		want    map[string]bool // the outcomes listed
	}{
		{0, map[string]bool{"ok": true, "skipped": true, "failed": true, "timeout": true}},
		{1, map[string]bool{"skipped": true}},
		{2, map[string]bool{"failed": true, "timeout": true}},
		{3, map[string]bool{"ok": true}},
		{4, map[string]bool{"ok": true, "skipped": true, "failed": true, "timeout": true}},
	}
	for _, tc := range tests {
		t.Run(outcomeFilters[tc.presses%len(outcomeFilters)].name, func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, 24)
			m, _ = press(m, "3")
			for range tc.presses {
				m, _ = press(m, "o")
			}
			got := map[string]bool{}
			for _, r := range m.hist.rows {
				got[string(m.c.data.records[r].Outcome)] = true
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("outcomes listed %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHelpFollowsTheScreen(t *testing.T) {
	tests := []struct {
		name     string
		job      string
		keys     []string
		want     []string
		wantNone []string
	}{
		{name: "running job: kill offered", job: "sync_orders", want: []string{"x kill", "p pause", "? help"}},
		{name: "idle job: no kill", job: "backup_db", wantNone: []string{"kill"}},
		{name: "paused job: resume", job: "report_weekly", want: []string{"p resume"}},
		{name: "full help", job: "backup_db", keys: []string{"?"}, want: []string{"next view", "reload config", "page down"}},
		{name: "locks", job: "backup_db", keys: []string{"tab"}, want: []string{"/ filter"}, wantNone: []string{"run now"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := selectJob(t, loaded(t, newFake(), Options{}, 120, 30), tc.job)
			m, _ = press(m, tc.keys...)
			h := m.helpView()
			for _, w := range tc.want {
				if !strings.Contains(h, w) {
					t.Errorf("help %q lacks %q", h, w)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(h, w) {
					t.Errorf("help %q offers %q", h, w)
				}
			}
		})
	}
}

func TestMouseWheel(t *testing.T) {
	tests := []struct {
		name    string
		buttons []tea.MouseButton
		want    int
	}{
		{"down moves three rows", []tea.MouseButton{tea.MouseButtonWheelDown}, 3},
		{"down stops at the end", []tea.MouseButton{tea.MouseButtonWheelDown, tea.MouseButtonWheelDown, tea.MouseButtonWheelDown}, 6},
		{"up stops at the top", []tea.MouseButton{tea.MouseButtonWheelDown, tea.MouseButtonWheelUp, tea.MouseButtonWheelUp}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, 24)
			for _, b := range tc.buttons {
				m, _ = m.update(tea.MouseMsg{Button: b, Action: tea.MouseActionPress})
			}
			if m.jobs.cur.pos != tc.want {
				t.Errorf("cursor at %d, want %d", m.jobs.cur.pos, tc.want)
			}
		})
	}
}

func TestDetailScrollsOutput(t *testing.T) {
	m, _ := openLive(t, 100)
	if !m.detail.lv.follow {
		t.Fatal("the live output does not follow its end")
	}
	tests := []struct {
		name   string
		msg    tea.Msg
		bottom bool
	}{
		{"wheel up leaves the end", tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress}, false},
		{"page up scrolls further", keyMsg("pgup"), false},
		{"G follows again", keyMsg("G"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ = m.update(tc.msg)
			if m.detail.lv.follow != tc.bottom {
				t.Errorf("following %v, want %v", m.detail.lv.follow, tc.bottom)
			}
		})
	}
}

// TestScreenFitsEverySize resizes every screen through sizes from tiny to
// wide: each must fill the window exactly, never wrap.
func TestScreenFitsEverySize(t *testing.T) {
	sizes := [][2]int{{80, 24}, {100, 30}, {132, 43}, {60, 16}, {40, 10}, {20, 6}}
	views := map[string][]string{"jobs": nil, "detail": {"G", "enter"}, "locks": {"tab"},
		"history": {"3"}, "help": {"?"}}
	for name, keys := range views {
		for _, sz := range sizes {
			t.Run(name+"/"+itoa(sz[0])+"x"+itoa(sz[1]), func(t *testing.T) {
				m := loaded(t, newFake(), Options{}, 80, 24)
				m, cmd := press(m, keys...)
				if cmd != nil && name == "detail" {
					m, _ = follow(t, m, cmd)
				}
				m, _ = m.update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				checkScreen(t, m.View(), sz[0], sz[1])
			})
		}
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		input  func() io.Reader
		cancel bool
	}{
		{"q quits", func() io.Reader { return strings.NewReader("q") }, false},
		{"the caller's context ends it", func() io.Reader { r, _ := io.Pipe(); return r }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if tc.cancel {
				cancel()
			}
			f := newFake()
			defer close(f.events) // ends the model's wait for events
			var out bytes.Buffer
			err := Run(ctx, f, Options{Title: sockPath, Clock: fixedClock, Input: tc.input(), Output: &out})
			if err != nil {
				t.Errorf("Run: %v", err)
			}
			if !tc.cancel && !strings.Contains(out.String(), "\x1b[?1049h") {
				t.Errorf("no alternate screen in the output %q", out.String())
			}
		})
	}
}
