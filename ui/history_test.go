package ui

import (
	"reflect"
	"strings"
	"testing"
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
