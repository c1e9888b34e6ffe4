package ui

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

func TestHistoryTextFilter(t *testing.T) {
	tests := []struct {
		filter     string
		wantRows   int
		wantStrips []string
	}{
		{"sync", 9, []string{"sync_orders"}},
		{"outside cronvisor", 1, []string{}}, // the skip by flock(1), by its holder
		{"timeout", 1, []string{}},           // by outcome
		{"tmp", 2, []string{"cleanup_tmp"}},  // by job, both records
		{"", 15, []string{"sync_orders", "refund_orders", "cleanup_tmp", "rotate_logs", "backup_db", "report_weekly"}},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, 24)
			keys := []string{"3", "/"}
			for _, r := range tc.filter {
				keys = append(keys, string(r))
			}
			m, _ = press(m, append(keys, "enter")...)
			strips := []string{}
			for _, s := range m.hist.strips {
				strips = append(strips, s.job)
			}
			if len(m.hist.rows) != tc.wantRows || !reflect.DeepEqual(strips, tc.wantStrips) {
				t.Errorf("%d rows, strips %v; want %d, %v", len(m.hist.rows), strips, tc.wantRows, tc.wantStrips)
			}
		})
	}
}

// The HOST column appears once the records come from more than one host
// (a fleet's shared history), and not before.
func TestHistoryHostColumnOnlyForAFleet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hosts    []string
		wantHost bool
	}{
		{"one host", []string{"web-1.example.com", "web-1.example.com"}, false},
		{"a fleet", []string{"web-1.example.com", "web-2.example.com"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			for i := range f.records {
				f.records[i].Host = tc.hosts[i%2]
			}
			m := loaded(t, f, Options{}, 120, 30)
			m, _ = press(m, "3")
			screen := m.View()
			if got := strings.Contains(screen, "HOST"); got != tc.wantHost {
				t.Fatalf("HOST column shown %v, want %v:\n%s", got, tc.wantHost, screen)
			}
			if tc.wantHost && (!strings.Contains(screen, "web-1") || !strings.Contains(screen, "web-2")) {
				t.Errorf("the rows do not name both hosts:\n%s", screen)
			}
		})
	}
}

// skips are n skips of cleanup_tmp, a second apart from from on, newest
// last, as the stream delivers them; their run ids start with id.
func skips(id string, from time.Time, n int) []ctl.WireEvent {
	evs := make([]ctl.WireEvent, n)
	for i := range evs {
		slot := from.Add(time.Duration(i) * time.Second)
		evs[i] = ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "cleanup_tmp", RunID: id + itoa(i),
			Time: slot, Slot: slot, Reason: "lock held"}
	}
	return evs
}

// History opens at the newest row, however many records arrived while
// another tab was shown (issue 43: it opened scrolled down, the newest
// rows hidden above), and says how many newer rows are above once the
// user has scrolled down.
func TestHistoryOpensAtTheNewestRow(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	m, _ = press(m, "3", "1") // History seen once: its selection is the newest record
	m = feed(t, m, f, skips("r-skip-", at(time.Minute), 30)...)
	m, _ = press(m, "3")
	newest := m.c.data.records[m.hist.rows[0]]
	if m.hist.cur.pos != 0 || m.hist.cur.off != 0 || newest.RunID != "r-skip-29" {
		t.Fatalf("History opened at row %d (window from %d, newest %s), want the newest row, r-skip-29", m.hist.cur.pos, m.hist.cur.off, newest.RunID)
	}
	m = feed(t, m, f, skips("r-top-", at(90*time.Second), 2)...)
	if screen := m.View(); m.hist.cur.off != 0 || m.hist.cur.pos != 2 || strings.Contains(screen, "newer") {
		t.Errorf("at the top, two newer records moved the window to %d (selection %d), want them shown above the selection:\n%s",
			m.hist.cur.off, m.hist.cur.pos, screen)
	}

	m, _ = press(m, "pgdown", "pgdown")
	off := m.hist.cur.off
	m = feed(t, m, f, skips("r-more-", at(2*time.Minute), 3)...)
	want := "↑ " + itoa(off+3) + " newer (g)"
	if screen := m.View(); off == 0 || !strings.Contains(screen, want) {
		t.Errorf("scrolled down (window from %d) with 3 newer records, the screen does not say %q:\n%s", off, want, screen)
	}
	m, _ = press(m, "g")
	if screen := m.View(); strings.Contains(screen, "newer") {
		t.Errorf("back at the top, the screen still speaks of newer rows:\n%s", screen)
	}
}
