package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"cronvisor/ctl"
	"cronvisor/history"
	"cronvisor/run"

	"github.com/charmbracelet/x/ansi"
)

// dur is a duration in at most two units, short enough for a table cell:
// 0s, 45s, 1m05s, 10m, 2h03m, 3d04h.
func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	two := func(a int64, ua string, b int64, ub string) string {
		if b == 0 {
			return strconv.FormatInt(a, 10) + ua
		}
		return fmt.Sprintf("%d%s%02d%s", a, ua, b, ub)
	}
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return two(s/60, "m", s%60, "s")
	case s < 86400:
		return two(s/3600, "h", s%3600/60, "m")
	}
	return two(s/86400, "d", s%86400/3600, "h")
}

// precise is a duration for a short span such as a run time or how long
// a lock had been held: 850ms, 1.5s, then as dur.
func precise(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return dur(d)
}

// ago is how long ago t was, "" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return dur(now.Sub(t)) + " ago"
}

// countdown is the time left until t, rounded up so that a fire half a
// second away still reads 1s; "due" once it has passed, "—" for none.
func countdown(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := t.Sub(now)
	if d <= 0 {
		return "due"
	}
	return dur((d + time.Second - 1).Truncate(time.Second))
}

// clock is a time of day, with the date when it is not today.
func clock(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 02 15:04")
}

// clockWidth is the width clock needs for times: a time of day, or a date
// and time when one of them is not today.
func clockWidth(now time.Time, times ...time.Time) int {
	w := len("15:04:05")
	for _, t := range times {
		w = max(w, len(clock(now, t)))
	}
	return w
}

// fit truncates s (which may hold ANSI styles) to w cells with an
// ellipsis and pads it with spaces to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// fitLeft keeps the end of s, for paths whose tail says the most.
func fitLeft(s string, w int) string {
	if ansi.StringWidth(s) <= w || w <= 1 {
		return fit(s, w)
	}
	return "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-w+1, "")
}

// pidHost is a holder's pid@host.
func pidHost(pid int, host string) string {
	if host == "" {
		return strconv.Itoa(pid)
	}
	return strconv.Itoa(pid) + "@" + host
}

// holderKind says whose a lock holder is, seen from job: "own" for the
// job's current run, "foreign" for a process outside cronvisor, else the
// holding job's name (another job sharing the lock, or this job run by
// another supervisor).
func holderKind(j ctl.JobStatus, h *run.Holder) string {
	switch {
	case h.Foreign:
		return "foreign"
	case h.Job == j.Name && (h.RunID == j.RunID || j.RunID == ""):
		return "own"
	case h.Job == "":
		return "cronvisor"
	}
	return h.Job
}

// heldFor is how long a skip's holder had held the lock when the fire was
// skipped, "" when the holder's start is unknown.
func heldFor(r history.Record) string {
	if r.Holder == nil || r.Holder.Since.IsZero() {
		return ""
	}
	return precise(eventTime(r).Sub(r.Holder.Since))
}

// eventTime is when a record happened: its end, else its start, else its
// slot (a stored skip has only its slot).
func eventTime(r history.Record) time.Time {
	switch {
	case !r.EndedAt.IsZero():
		return r.EndedAt
	case !r.StartedAt.IsZero():
		return r.StartedAt
	}
	return r.ScheduledAt
}

// startTime is when a record's fire began: its start, else its slot (a
// skip never started); lists show and sort by it.
func startTime(r history.Record) time.Time {
	switch {
	case !r.StartedAt.IsZero():
		return r.StartedAt
	case !r.ScheduledAt.IsZero():
		return r.ScheduledAt
	}
	return r.EndedAt
}

// recordDetail is one line on why a record ended as it did: the holder
// for a skip, the exit code or reason otherwise.
func recordDetail(r history.Record) string {
	if r.Outcome == run.Skipped && r.Holder != nil {
		s := "held by pid " + pidHost(r.Holder.PID, r.Holder.Host)
		switch r.Holder.Job {
		case r.Job: // the job overlapping itself: its name says nothing new
		case "": // cronvisor always names its holders' job
			s += " (outside cronvisor)"
		default: // another job sharing the lock
			s += " (" + r.Holder.Job + ")"
		}
		if h := heldFor(r); h != "" {
			s += " for " + h
		}
		return s
	}
	var parts []string
	if r.ExitCode != nil {
		parts = append(parts, "exit "+strconv.Itoa(*r.ExitCode))
	}
	if r.Reason != "" {
		parts = append(parts, r.Reason)
	}
	if r.Manual {
		parts = append(parts, "manual")
	}
	return strings.Join(parts, " · ")
}

// runTime is a record's duration, "" when it did not run or still runs.
func runTime(r history.Record) string {
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return ""
	}
	return precise(r.EndedAt.Sub(r.StartedAt))
}

// plural is "1 run", "2 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
