package ui

import (
	"strings"
	"testing"
)

// The preview sits beside the table from 100 columns on; under it, it
// takes only the lines the table's rows leave, and none when fewer than
// belowMin are left: the table keeps priority.
func TestSplitJobs(t *testing.T) {
	tests := []struct {
		name               string
		w, h, rows         int
		filtering          bool
		side               bool
		tableW, tableH     int
		previewW, previewH int
	}{
		{"wide: beside", 200, 47, 1000, false, true, 127, 47, 72, 47},
		{"100 columns: beside, narrow", 100, 21, 7, false, true, 63, 21, 36, 21},
		{"80x24, few jobs: under", 80, 21, 7, false, false, 80, 11, 80, 10},
		{"80x24, a filter line", 80, 21, 7, true, false, 80, 12, 80, 9},
		{"80x24, just room", 80, 21, 11, false, false, 80, 15, 80, 6},
		{"80x24, many jobs: none", 80, 21, 12, false, false, 80, 21, 0, 0},
		{"no jobs", 80, 21, 0, false, false, 80, 5, 80, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := splitJobs(tc.w, tc.h, tc.rows, tc.filtering)
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
	m := loaded(t, newFake(), Options{}, 120, 30)
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
