package ui

import (
	"reflect"
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
			keys := []string{"shift+tab", "/"}
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
