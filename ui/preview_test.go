package ui

import (
	"strings"
	"testing"
)

// The preview sits beside the table from 100 columns on when the table
// can have its widest beside it; else under the table, taking only the
// lines the table's rows leave, and none when fewer than belowMin are
// left: the table keeps priority.
func TestSplitJobs(t *testing.T) {
	tests := []struct {
		name               string
		w, h, rows         int
		filtering          bool
		tableMax           int
		side               bool
		tableW, tableH     int
		previewW, previewH int
	}{
		{"wide: beside, at most 72", 250, 47, 1000, false, 150, true, 177, 47, 72, 47},
		{"wide: beside, what the table leaves", 200, 47, 7, false, 145, true, 145, 47, 54, 47},
		{"too little left beside: under", 160, 27, 7, false, 140, false, 160, 11, 160, 16},
		{"99 columns, a narrow table: under", 99, 21, 7, false, 50, false, 99, 11, 99, 10},
		{"100 columns, a narrow table: beside", 100, 21, 7, false, 50, true, 50, 21, 49, 21},
		{"80x24, few jobs: under", 80, 21, 7, false, 145, false, 80, 11, 80, 10},
		{"80x24, a filter line", 80, 21, 7, true, 145, false, 80, 12, 80, 9},
		{"80x24, just room", 80, 21, 11, false, 145, false, 80, 15, 80, 6},
		{"80x24, many jobs: none", 80, 21, 12, false, 145, false, 80, 21, 0, 0},
		{"no jobs", 80, 21, 0, false, 145, false, 80, 5, 80, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := splitJobs(tc.w, tc.h, tc.rows, tc.filtering, tc.tableMax)
			got := [...]int{s.tableW, s.tableH, s.paneW, s.paneH}
			want := [...]int{tc.tableW, tc.tableH, tc.previewW, tc.previewH}
			if s.side != tc.side || got != want {
				t.Errorf("split: side %v, table %dx%d, preview %dx%d; want side %v, table %dx%d, preview %dx%d",
					s.side, got[0], got[1], got[2], got[3], tc.side, want[0], want[1], want[2], want[3])
			}
		})
	}
}

// The preview follows the selection, and enter still opens the detail.
func TestPreviewFollowsTheSelection(t *testing.T) {
	m := loaded(t, newFake(), Options{}, 200, 30)
	m = selectJob(t, m, "report_weekly")
	if s := m.View(); !strings.Contains(s, "── report_weekly ─") || !strings.Contains(s, "none while paused") {
		t.Fatalf("the preview does not show report_weekly:\n%s", s)
	}
	m, cmd := press(m, "enter")
	m, _ = follow(t, m, cmd)
	if !m.inDetail || m.detail.job != "report_weekly" {
		t.Errorf("enter did not open report_weekly's detail")
	}
}
