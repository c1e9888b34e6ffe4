package plan

import (
	"fmt"
	"time"
)

// findings are what p's reader should know: the skips, queue waits and
// overlaps its measured runs predict, a timeout below them, a catch_up
// longer than the period, the DST edges that move a fire.
func findings(p JobPlan) []Finding {
	out := []Finding{}
	add := func(kind, format string, args ...any) {
		out = append(out, Finding{Kind: kind, Text: fmt.Sprintf(format, args...)})
	}
	j := p.job
	switch {
	case !p.Enabled:
		add("disabled", "disabled: its %s in the window are recorded skipped", plural(p.FireCount, "fire"))
	case p.FireCount == 0 && p.next.IsZero():
		add("never", "no fire in the window, nor after it")
	case p.FireCount == 0:
		add("never", "no fire in the window; the next is at %s", p.next.Format("2006-01-02 15:04 MST"))
	}
	if n, first := calendarSkips(p.Fires); n > 0 {
		add("calendar", "%s on its calendars' days recorded skipped, the first %s", plural(n, "slot"), first)
	}
	if e := p.Expect; e != nil && p.Enabled {
		basis := fmt.Sprintf("runs take %s (p95 of %d) and fires come every %s", ms(p.Measured.P95MS), p.Measured.Runs, ms(p.PeriodMS))
		switch {
		case e.Skipped > 0 && e.Queued == 0:
			add("skips", "%s: %s; overlap: %s", skipRate(e.Skipped, e.Runs, p.FireCount), basis, p.Overlap)
		case e.Queued > 0:
			add("queue", "the queue cannot drain: %s; one fire always waits (up to %s), %s skipped as the queue is full",
				basis, ms(e.MaxWaitMS), plural(e.Skipped, "fire"))
		case e.Replaced > 0:
			add("replace", "%d of %d runs are ended by the next fire before they finish: %s; overlap: replace", e.Replaced, e.Runs, basis)
		case e.Overlapping > 0:
			add("overlap", "runs overlap, up to %d at once: %s; overlap: allow", e.MaxAtOnce, basis)
		}
	}
	if j.Timeout > 0 && p.Measured != nil && time.Duration(p.Measured.P95MS)*time.Millisecond > j.Timeout {
		add("timeout", "timeout %s is below the p95 of its runs (%s): most runs would end timeout", j.Timeout, ms(p.Measured.P95MS))
	}
	if j.CatchUp > 0 && p.PeriodMS > 0 && j.CatchUp > time.Duration(p.PeriodMS)*time.Millisecond {
		add("catch_up", "catch_up %s is longer than the period (%s): after downtime only the newest missed slot runs (up to %s old), the others are recorded missed",
			j.CatchUp, ms(p.PeriodMS), j.CatchUp)
	}
	for _, e := range p.Edges {
		if e.Effect != "" {
			add("dst", "%s at %s: %s", e.Change, e.At.In(edgeZone(j.Location)).Format("2006-01-02 15:04 MST"), e.Effect)
		}
	}
	return out
}

// skipRate words how often fires are skipped: "a skip every other
// fire" when about half are.
func skipRate(skipped, runs, fires int) string {
	if d := skipped - runs; d >= -1 && d <= 1 {
		return fmt.Sprintf("a skip every other fire (%d of %d skipped)", skipped, fires)
	}
	return fmt.Sprintf("%d of %d fires skipped", skipped, fires)
}

func edgeZone(l *time.Location) *time.Location {
	if l == nil {
		return time.Local
	}
	return l
}

// calendarSkips counts the fires the job's calendars leave out, and says
// why the first is.
func calendarSkips(fires []Fire) (n int, first string) {
	for _, f := range fires {
		if f.Skipped != "" {
			if n == 0 {
				first = f.Slot.Format("2006-01-02 15:04 MST") + ": " + f.Skipped
			}
			n++
		}
	}
	return n, first
}
