package runner

import (
	"context"
	"testing"
	"time"

	"cronvisor/internal/base/calendar"
	"cronvisor/internal/base/run"
)

// TestCalendarsSkipTheirDays: a slot on a skip_on day is skipped with a
// record naming the calendar and the day, the next day's runs; only_on
// skips the days it does not list; a manual run goes by no calendar.
func TestCalendarsSkipTheirDays(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	holidays := calendar.New("holidays")
	if err := holidays.AddDate("2026-12-25"); err != nil {
		t.Fatal(err)
	}
	j := shJob("payroll", "true")
	j.Location = time.UTC
	j.SkipOn = []*calendar.Calendar{holidays}
	xmas := time.Date(2026, 12, 25, 9, 0, 0, 0, time.UTC)
	if f := s.Fire(context.Background(), j, xmas, false); f.Outcome != run.Skipped || f.Reason != "calendar holidays (2026-12-25)" {
		t.Fatalf("on the holiday: %s %q, want skipped, calendar holidays (2026-12-25)", f.Outcome, f.Reason)
	}
	if f := s.Fire(context.Background(), j, xmas.AddDate(0, 0, 1), false); f.Outcome != run.OK {
		t.Fatalf("the day after: %s %q, want ok", f.Outcome, f.Reason)
	}
	if f := s.Fire(context.Background(), j, xmas, true); f.Outcome != run.OK {
		t.Fatalf("a manual run on the holiday: %s %q, want ok", f.Outcome, f.Reason)
	}
	j.SkipOn, j.OnlyOn = nil, []*calendar.Calendar{holidays}
	if f := s.Fire(context.Background(), j, xmas.AddDate(0, 0, 2), false); f.Outcome != run.Skipped || f.Reason != "calendar holidays: 2026-12-27 is not on it" {
		t.Fatalf("only_on, a day it does not list: %s %q", f.Outcome, f.Reason)
	}
	// The day is the job's: 23:30 UTC on the 24th is the 25th in Berlin.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	j.Location, j.SkipOn, j.OnlyOn = berlin, []*calendar.Calendar{holidays}, nil
	if f := s.Fire(context.Background(), j, time.Date(2026, 12, 24, 23, 30, 0, 0, time.UTC), false); f.Outcome != run.Skipped {
		t.Fatalf("the 25th in the job's zone: %s %q, want skipped", f.Outcome, f.Reason)
	}
}
