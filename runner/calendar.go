package runner

import (
	"context"

	"cronvisor/internal/base/run"
)

// onCalendar skips a scheduled fire whose slot falls on a day of one of
// the job's skip_on calendars, or on no day of its only_on ones, with a
// record that names the calendar and the day. Manual runs and triggers
// go by no calendar: an operator asked for them.
func (s *Supervisor) onCalendar(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		if !f.manual {
			if reason := f.job.CalendarSkip(f.slot); reason != "" {
				return s.skip(f, reason, run.ClassCalendar, nil)
			}
		}
		return next(ctx, f)
	}
}
