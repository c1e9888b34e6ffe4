package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
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

// precise is a measured span such as a run time or how long a lock had
// been held: 999ms, 2.0s, 9.9s, then as dur from 10s (10s, 19s, 1m05s).
// The span is rounded to the precision shown before the unit is chosen,
// so 9.96s reads 10s, never 10.0s, and 999.7ms reads 1.0s.
func precise(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d.Round(time.Millisecond) < time.Second:
		return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
	case d.Round(100*time.Millisecond) < 10*time.Second:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', 1, 64) + "s"
	}
	return dur(d.Round(time.Second))
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

// inTime is countdown as words after a noun: "in 3s", or "due" once t
// has come, so that a fire due this second reads "next fire due at
// 10:09:20" and never "next fire in due".
func inTime(now, t time.Time) string {
	if c := countdown(now, t); c != "due" {
		return "in " + c
	}
	return "due"
}

// clock is how the console prints every time: the time of day in the
// console's zone, with the date before it when it is not today
// (2026-03-13 23:59:05). Times inside texts from elsewhere (reasons,
// notes) are rewritten to it by localTimes.
func clock(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// rfc3339 matches the RFC 3339 times that the daemon writes into reasons
// and notes (a holder's "since", a missed fire's first slot).
var rfc3339 = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)

// localTimes rewrites the RFC 3339 times in s as clock prints them, so
// that a reason reads like the cells around it.
func localTimes(now time.Time, s string) string {
	if !strings.ContainsRune(s, 'T') {
		return s
	}
	return rfc3339.ReplaceAllStringFunc(s, func(v string) string {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return v
		}
		return clock(now, t)
	})
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
func heldFor(r run.Record) string {
	if r.Holder == nil || r.Holder.Since.IsZero() {
		return ""
	}
	return precise(eventTime(r).Sub(r.Holder.Since))
}

// eventTime is when a record happened: its end, else its start, else its
// slot (a stored skip has only its slot).
func eventTime(r run.Record) time.Time {
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
func startTime(r run.Record) time.Time {
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
func recordDetail(r run.Record) string {
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
	if r.ExitCode != nil && !saysExit(r.Reason, *r.ExitCode) {
		parts = append(parts, "exit "+strconv.Itoa(*r.ExitCode))
	}
	if r.Reason != "" {
		parts = append(parts, r.Reason)
	}
	if r.Manual {
		parts = append(parts, "manual")
	}
	if len(r.Resources) > 0 {
		parts = append(parts, "slots "+strings.Join(r.Resources, " "))
	}
	if r.ResourceWait >= time.Second && r.Outcome != run.Skipped { // a skip's reason says its wait
		parts = append(parts, "waited "+dur(r.ResourceWait)+" for a slot")
	}
	return strings.Join(parts, " · ")
}

// saysExit reports whether reason already names exit code n ("exit 3:
// last stderr …", "exit status 3"), which the detail then does not repeat.
func saysExit(reason string, n int) bool {
	for _, p := range []string{"exit ", "exit status "} {
		if rest, ok := strings.CutPrefix(reason, p+strconv.Itoa(n)); ok && (rest == "" || !unicode.IsDigit(rune(rest[0]))) {
			return true
		}
	}
	return false
}

// runTime is a record's duration, "" when it did not run or still runs.
func runTime(r run.Record) string {
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
