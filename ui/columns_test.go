package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
)

// cellUnder is the text of the row holding row's name under the column
// titled title on screen: the columns' places are the title row's.
func cellUnder(t *testing.T, screen, title, row string) string {
	t.Helper()
	var head []rune
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, title) && strings.Contains(l, "JOB") {
			head = []rune(l)
			break
		}
	}
	if head == nil {
		t.Fatalf("no column %s on screen:\n%s", title, screen)
	}
	from := strings.Index(string(head), title)
	from = len([]rune(string(head)[:from]))
	to := len(head)
	for i := from + len([]rune(title)); i+1 < len(head); i++ {
		if head[i] == ' ' && head[i+1] == ' ' {
			for i < len(head) && head[i] == ' ' {
				i++
			}
			to = i
			break
		}
	}
	line := []rune(lineWith(screen, row))
	if len(line) < from {
		return ""
	}
	return strings.TrimSpace(string(line[from:min(to, len(line))]))
}

// rowOrder is the jobs table's job names, top to bottom.
func rowOrder(m Model) []string {
	var names []string
	for _, r := range m.jobs.rows {
		names = append(names, m.c.data.jobs[r].name)
	}
	return names
}

// TestSortKeys: a Shift+letter sorts by its column, again reverses it
// (rows without the value stay last), the arrow says which and how, and
// `s` still steps through name, next, state and latest activity.
func TestSortKeys(t *testing.T) {
	byNext := []string{"sync_orders", "refund_orders", "rotate_logs", "cleanup_tmp", "backup_db", "report_weekly", "send_digest"}
	tests := []struct {
		name  string
		keys  []string
		order []string
		title string
	}{
		{"next", []string{"N"}, byNext, "NEXT ▾"},
		{"next reversed: the paused and disabled stay last", []string{"N", "N"},
			[]string{"backup_db", "cleanup_tmp", "rotate_logs", "refund_orders", "sync_orders", "report_weekly", "send_digest"}, "NEXT ▴"},
		{"last: the worst outcome first", []string{"L"},
			[]string{"report_weekly", "rotate_logs", "cleanup_tmp", "sync_orders", "backup_db", "refund_orders", "send_digest"}, "LAST ▾"},
		{"passed: the latest first", []string{"P"},
			[]string{"sync_orders", "refund_orders", "cleanup_tmp", "rotate_logs", "backup_db", "report_weekly", "send_digest"}, "PASSED ▾"},
		{"job", []string{"N", "J"},
			[]string{"backup_db", "cleanup_tmp", "refund_orders", "report_weekly", "rotate_logs", "send_digest", "sync_orders"}, "JOB ▾"},
		{"s from the name: next", []string{"s"}, byNext, "NEXT ▾"},
		{"failures first", []string{"F"},
			[]string{"sync_orders", "rotate_logs", "backup_db", "cleanup_tmp", "refund_orders", "report_weekly", "send_digest"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := press(loaded(t, newFake(), Options{}, 120, 30), tc.keys...)
			if got := rowOrder(m); !slices.Equal(got, tc.order) {
				t.Errorf("rows %v, want %v", got, tc.order)
			}
			if tc.title != "" && !strings.Contains(m.View(), tc.title) {
				t.Errorf("no %q in the header:\n%s", tc.title, m.View())
			}
		})
	}
}

// TestNarrowKeepsAgesAndOutcomes is issue 43's 80 columns: with long
// names and holders, every row's outcome and age are whole; the name and
// the holder give way.
func TestNarrowKeepsAgesAndOutcomes(t *testing.T) {
	f := newFake()
	for i := range f.jobs {
		f.jobs[i].Name = "nightly_" + f.jobs[i].Name + "_for_the_warehouse"
		if h := f.jobs[i].Holder; h != nil {
			c := *h
			c.Host = "build-runner-0042.eu-west-1.compute.internal"
			c.Job = "nightly_" + c.Job + "_for_the_warehouse"
			f.jobs[i].Holder = &c
		}
	}
	for _, size := range [][2]int{{80, 24}, {100, 30}, {200, 50}} {
		m := loaded(t, f, Options{}, size[0], size[1])
		s := m.View()
		checkScreen(t, s, size[0], size[1])
		for _, j := range f.jobs {
			row := j.Name[:12] // the name's start shows at any width
			want := outcomeText(j.LastOutcome)
			if got := cellUnder(t, s, "LAST", row); got != want {
				t.Errorf("%dx%d: %s's LAST reads %q, want %q", size[0], size[1], j.Name, got, want)
			}
			wantAge := "—"
			if !j.LastEndedAt.IsZero() {
				wantAge = dur(ref.Sub(j.LastEndedAt))
			}
			if got := cellUnder(t, s, "PASSED", row); got != wantAge {
				t.Errorf("%dx%d: %s's PASSED reads %q, want %q", size[0], size[1], j.Name, got, wantAge)
			}
		}
		if got := cellUnder(t, s, "LOCK HOLDER", "nightly_sync"); !strings.HasSuffix(got, " own 25s") {
			t.Errorf("%dx%d: the running job's holder reads %q, want it to end in whose and how long", size[0], size[1], got)
		}
	}
}

func TestFitHolder(t *testing.T) {
	tests := []struct {
		text string
		w    int
		want string
	}{
		{"4321@web-1 own 25s", 30, "4321@web-1 own 25s"},
		{"4321@web-1 own 25s", 12, "432… own 25s"},
		{"777@web-1 foreign 47m", 12, "foreign 47m"},
		{"4321@web-1 sync_orders 25s", 12, "…_orders 25s"},
	}
	for _, tc := range tests {
		if got := fitHolder(tc.text, true, tc.w); got != tc.want {
			t.Errorf("fitHolder(%q, %d) = %q, want %q", tc.text, tc.w, got, tc.want)
		}
	}
}

func TestOutcomeWidth(t *testing.T) {
	for _, o := range []run.Outcome{"", run.OK, run.Failed, run.Timeout, run.Skipped, run.Replaced, run.Interrupted, run.Error, run.Running} {
		if got, want := outcomeWidth(o), ansi.StringWidth(outcomeText(o)); got != want {
			t.Errorf("outcomeWidth(%q) = %d, want %d", o, got, want)
		}
	}
}
