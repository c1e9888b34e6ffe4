package ui

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// jobCol is a column of the jobs table. The first seven are
// `systemctl list-timers`' order (NEXT, LEFT, LAST, PASSED, then the
// unit: here the job, its state and its lock's holder); the others
// follow as the width allows.
type jobCol int

const (
	colNext jobCol = iota
	colLeft
	colLast
	colPassed
	colJob
	colState
	colLock
	colTook
	colRuns
	colSchedule
	jobColCount
)

// jobColDef is what the table knows of a column: its name in
// console.json and the chooser, its title, the Shift+letter that sorts
// by it (0: none), its widths and ranks, and what the chooser says of it.
type jobColDef struct {
	name, title string
	sortKey     string
	col         column
	about       string
}

// jobColDefs are the columns in their order on screen. Widths: NEXT,
// LEFT, LAST and PASSED never drop and are never cut (LAST is as wide as
// its longest outcome, PASSED and LEFT as the longest age, 6); the job's
// name and the lock holder give way first.
var jobColDefs = [jobColCount]jobColDef{
	colNext:     {name: "next", title: "NEXT", sortKey: "N", col: column{min: 9, want: 9, max: 9, drop: 2, grow: 6}, about: "the next fire's time"},
	colLeft:     {name: "left", title: "LEFT", col: column{min: 6, want: 6, max: 6, grow: 5}, about: "the time to the next fire (sorts as NEXT)"},
	colLast:     {name: "last", title: "LAST", sortKey: "L", col: column{grow: 9}, about: "the last run's outcome"},
	colPassed:   {name: "passed", title: "PASSED", sortKey: "P", col: column{min: 6, want: 6, max: 7, grow: 10}, about: "the time since the last run ended"},
	colJob:      {name: "job", title: "JOB", sortKey: "J", col: column{min: 8, grow: 2}, about: "the job's name"},
	colState:    {name: "state", title: "STATE", sortKey: "S", col: column{min: 9, want: 11, grow: 3}, about: "idle, running (elapsed/timeout), queued, paused…"},
	colLock:     {name: "lock", title: "LOCK HOLDER", sortKey: "O", col: column{min: 12, want: 12, max: 30, drop: 1, grow: 1}, about: "who holds the job's lock, for how long"},
	colTook:     {name: "took", title: "TOOK", sortKey: "T", col: column{min: 4, want: 6, max: recentMax + len(" 1m05s"), drop: 3, grow: 8}, about: "what the recent runs took"},
	colRuns:     {name: "runs", title: "RUN/SKIP/FAIL", sortKey: "F", col: column{min: 13, want: 13, max: 14, drop: 4, grow: 7}, about: "counts since the daemon started (F sorts by failures)"},
	colSchedule: {name: "schedule", title: "SCHEDULE", col: column{min: 9, want: 11, max: 14, drop: 5, grow: 11}, about: "the schedule"},
}

// sortCycle is the order `s` steps through, as it always did: name,
// next fire, state, latest activity.
var sortCycle = []jobCol{colJob, colNext, colState, colPassed}

// colSort is the table's order: by a column, natural or reversed.
type colSort struct {
	by      jobCol
	reverse bool
}

// sortBinding is the Shift+letter sort keys, one binding for the help.
func sortBinding() key.Binding {
	var keys []string
	for _, d := range jobColDefs {
		if d.sortKey != "" {
			keys = append(keys, d.sortKey)
		}
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp("⇧a-z", "sort by"))
}

// sortedBy is the column whose Shift+letter k is.
func sortedBy(k string) (jobCol, bool) {
	for c, d := range jobColDefs {
		if d.sortKey == k {
			return jobCol(c), true
		}
	}
	return 0, false
}

// pressed is the order after the Shift+letter of column c: by c, or by
// c reversed when the table was already sorted by it.
func (s colSort) pressed(c jobCol) colSort {
	if s.by == c {
		return colSort{by: c, reverse: !s.reverse}
	}
	return colSort{by: c}
}

// cycled is the order after `s`: the next of sortCycle, natural.
func (s colSort) cycled() colSort {
	i := slices.Index(sortCycle, s.by)
	return colSort{by: sortCycle[(i+1)%len(sortCycle)]}
}

// marks reports whether column c's title carries the sort's arrow:
// LEFT sorts as NEXT and shows it too.
func (s colSort) marks(c jobCol) bool {
	return c == s.by || (s.by == colNext && c == colLeft)
}

// title is column c's header, with ▾ (natural order) or ▴ (reversed)
// when the table is sorted by it.
func (s colSort) title(c jobCol) string {
	t := jobColDefs[c].title
	switch {
	case !s.marks(c):
		return t
	case s.reverse:
		return t + " ▴"
	}
	return t + " ▾"
}

// compareJobs orders two rows by s; a tie goes by name. Rows without
// the value (no next fire, no run yet) stay last either way.
func compareJobs(a, b jobRow, s colSort) int {
	c, none := compareBy(a, b, s.by)
	if s.reverse && !none {
		c = -c
	}
	if c == 0 {
		c = strings.Compare(a.name, b.name)
	}
	return c
}

// compareBy compares a and b by column col in its natural order; none
// says that one of them lacks the value, which sorts last whatever the
// direction.
func compareBy(a, b jobRow, col jobCol) (c int, none bool) {
	switch col {
	case colNext, colLeft: // soonest first
		return orNone(nextOf(a), nextOf(b), cmp.Compare[int64])
	case colPassed: // latest activity first
		return orNone(a.lastEndedAt, b.lastEndedAt, func(x, y int64) int { return cmp.Compare(y, x) })
	case colLast: // the worst outcome first
		return cmp.Compare(outcomeRank(a.last), outcomeRank(b.last)), false
	case colState:
		return cmp.Compare(stateRank(a.state), stateRank(b.state)), false
	case colLock: // held first, by holder
		return orNone(holderKey(a), holderKey(b), strings.Compare)
	case colTook: // the newest run's duration, shortest first
		return orNone(newestTook(a), newestTook(b), cmp.Compare[int64])
	case colRuns: // the most failures first
		return cmp.Compare(b.failures, a.failures), false
	}
	return strings.Compare(a.name, b.name), false
}

// orNone compares x and y with f, a zero value after any other.
func orNone[T comparable](x, y T, f func(T, T) int) (int, bool) {
	var zero T
	switch {
	case x == zero && y == zero:
		return 0, true
	case x == zero:
		return 1, true
	case y == zero:
		return -1, true
	}
	return f(x, y), false
}

// nextOf is the next fire a row shows: none while paused or disabled.
func nextOf(r jobRow) int64 {
	if r.paused || r.state == ctl.StatePaused || r.state == ctl.StateDisabled {
		return 0
	}
	return r.nextRun
}

func holderKey(r jobRow) string {
	if r.more == nil || r.more.Holder == nil {
		return ""
	}
	return pidHost(r.more.Holder.PID, r.more.Holder.Host)
}

func newestTook(r jobRow) int64 {
	if r.learned == nil {
		return 0
	}
	return r.learned.newest
}

// outcomeRank orders outcomes worst first; none last.
func outcomeRank(o run.Outcome) int {
	i := slices.Index([]run.Outcome{run.Failed, run.Timeout, run.Error, run.Interrupted, run.Replaced, run.Skipped, run.Running, run.OK}, o)
	if i < 0 {
		return 99
	}
	return i
}

func stateRank(s ctl.JobState) int {
	return slices.Index([]ctl.JobState{ctl.StateUnschedulable, ctl.StateRunning, ctl.StateRetrying, ctl.StateQueued, ctl.StateWaiting, ctl.StatePaused, ctl.StateIdle, ctl.StateDisabled}, s)
}

// outcomeText is the LAST cell's text: the outcome's glyph and word.
func outcomeText(o run.Outcome) string {
	if o == "" {
		return "—"
	}
	return glyph(o) + " " + string(o)
}

// outcomeWidth is outcomeText's width, without building it: every glyph
// is one cell wide. The table measures it for every job at each refresh.
func outcomeWidth(o run.Outcome) int {
	if o == "" {
		return 1
	}
	return 2 + len(o)
}

// nextClock is the NEXT cell's text, at most 9 wide: the time of day
// today, the weekday and time within a week, else the day.
func nextClock(now, t time.Time) string {
	t = t.In(now.Location())
	switch y, m, d := t.Date(); {
	case y == now.Year() && m == now.Month() && d == now.Day():
		return t.Format("15:04:05")
	case t.Sub(now) < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	}
	return t.Format("Jan _2")
}

// colCell is one job's cell of column col, which is w wide (the TOOK
// sparkline and the lock holder fit themselves to it).
func (v jobsView) colCell(col jobCol, j ctl.JobStatus, l *learned, w int, now time.Time) cell {
	switch col {
	case colNext, colLeft:
		return nextCell(col, j, now)
	case colLast:
		return cell{text: outcomeText(j.LastOutcome), id: outcomeID(j.LastOutcome)}
	case colPassed:
		if j.LastEndedAt.IsZero() {
			return cell{text: "—", id: mutedID}
		}
		return cell{text: dur(now.Sub(j.LastEndedAt)), id: plainID}
	case colJob:
		return cell{text: j.Name, id: plainID}
	case colState:
		return cell{text: stateText(j, now), id: stateID(j.State)}
	case colLock:
		c := holderCell(j, now)
		c.text = fitHolder(c.text, j.Holder != nil, w)
		return c
	case colTook:
		return tookCell(l, w)
	case colRuns:
		return cell{text: countsCell(j.Counts), id: mutedID}
	}
	return cell{text: j.Schedule, id: mutedID}
}

// nextCell is the NEXT or LEFT cell: "—" while paused or disabled.
func nextCell(col jobCol, j ctl.JobStatus, now time.Time) cell {
	if j.State == ctl.StatePaused || j.State == ctl.StateDisabled || j.Paused || j.NextRun.IsZero() {
		return cell{text: "—", id: mutedID}
	}
	if col == colNext {
		return cell{text: nextClock(now, j.NextRun), id: mutedID}
	}
	return cell{text: countdown(now, j.NextRun), id: runPlainID}
}

// fitHolder cuts a holder's "pid@host KIND AGE" to w from its start:
// whose lock it is and for how long stay whole, the pid@host gives way.
func fitHolder(s string, held bool, w int) string {
	n := ansi.StringWidth(s)
	if !held || n <= w || w <= 0 {
		return s
	}
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return s
	}
	tail := s[i:]
	room := w - ansi.StringWidth(tail)
	if room < 2 { // not even "…" and a character: whose and how long alone
		if tail = tail[1:]; ansi.StringWidth(tail) <= w {
			return tail
		}
		return fitLeft(tail, w)
	}
	return ansi.Truncate(s[:i], room, "…") + tail
}
