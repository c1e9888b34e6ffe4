package ui

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// stateText is a job's state cell: a running job shows its elapsed time
// against its timeout.
func stateText(j ctl.JobStatus, now time.Time) string {
	if j.State == ctl.StateRetrying {
		return stateGlyph(j.State) + " " + retryText(j, now)
	}
	if j.State != ctl.StateRunning {
		return stateGlyph(j.State) + " " + string(j.State)
	}
	s := stateGlyph(j.State) + " " + dur(now.Sub(j.StartedAt))
	if !j.Deadline.IsZero() {
		s += "/" + dur(j.Deadline.Sub(j.StartedAt).Round(time.Second))
	}
	if j.Paused {
		s += " ‖"
	}
	return s
}

// holderCell is a job's lock holder: pid@host, whose it is, and for how
// long it has held the lock.
func holderCell(j ctl.JobStatus, now time.Time) cell {
	h := j.Holder
	if h == nil {
		return cell{text: "—", id: mutedID}
	}
	kind := holderKind(j, h)
	text := pidHost(h.PID, shortHost(h.Host)) + " " + kind
	if !h.Since.IsZero() {
		text += " " + dur(now.Sub(h.Since))
	}
	switch kind {
	case "own":
		return cell{text: text, id: runPlainID}
	case "foreign":
		return cell{text: text, id: foreignID}
	}
	return cell{text: text, id: warnID}
}

// shortHost is a host's first DNS label, like `hostname -s`; addresses
// stay whole.
func shortHost(h string) string {
	if net.ParseIP(h) != nil {
		return h
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		return h[:i]
	}
	return h
}

// summary is two lines under the table about the selected job: what it
// does now, and what its last fire did and why, with the lock holder when
// it was skipped: the questions an operator asks first.
func (v jobsView) summary() string {
	if len(v.rows) == 0 {
		return "\n"
	}
	st, now := v.c.st, v.c.now()
	j := v.c.data.at(v.rows[v.cur.pos])
	name := fit(" "+j.Name, min(v.nameW+1, v.width/3))
	indent := strings.Repeat(" ", ansi.StringWidth(name)+2)
	first := st.section.Render(name) + "  " + st.state(j.State).Render(nowText(j, now))
	second := st.muted.Render("no runs in recent history")
	if r, ok := v.c.data.lastRecord(j.Name); ok {
		second = st.outcome(r.Outcome).Render(glyph(r.Outcome)+" "+string(r.Outcome)+" "+ago(now, eventTime(r))) +
			st.muted.Render(": "+localTimes(now, skipWhy(r)))
	}
	return fit(first, v.width) + "\n" + fit(indent+second, v.width)
}

// nowText says what a job does now, in words.
func nowText(j ctl.JobStatus, now time.Time) string {
	switch j.State {
	case ctl.StateRunning:
		s := "running pid " + strconv.Itoa(j.PID) + " for " + dur(now.Sub(j.StartedAt))
		if j.Attempt > 1 || j.MaxAttempts > 1 {
			s += ", attempt " + attemptText(j)
		}
		if !j.Deadline.IsZero() {
			s += ", deadline " + inTime(now, j.Deadline)
		}
		if j.Slow {
			s += ", SLOW (past warn_after)"
		}
		if j.Adopted {
			s += ", adopted: its supervisor (pid " + strconv.Itoa(j.SupervisorPID) + ") died, its keeper runs it on"
		}
		if len(j.Resources) > 0 {
			s += ", holds " + strings.Join(j.Resources, " ")
		}
		return s
	case ctl.StateRetrying:
		return retryText(j, now) + " (" + inTime(now, j.RetryAt) + "), under the slot's lock"
	case ctl.StateQueued:
		if h := j.Holder; h != nil {
			return "queued until pid " + pidHost(h.PID, h.Host) + " frees lock " + j.Lock
		}
		return "queued for lock " + j.Lock
	case ctl.StateWaiting:
		if w := j.WaitingFor; w != nil {
			return w.String() + ", gives up " + inTime(now, w.Until)
		}
		return "waiting for a resource's slot"
	case ctl.StatePaused:
		if p := j.PausedBy; p != nil {
			return "paused " + ago(now, p.At) + " by " + pauserText(*p) + "; p resumes"
		}
		return "paused: no scheduled fires until resumed (p)"
	case ctl.StateDisabled:
		return "disabled in jobs.yaml"
	case ctl.StateUnschedulable:
		return "unschedulable: " + localTimes(now, j.Problem)
	}
	if j.NextRun.IsZero() {
		return "idle"
	}
	return "idle, next fire " + inTime(now, j.NextRun) + " at " + clock(now, j.NextRun)
}

// retryText is a slot waiting for its next attempt, as status says it:
// "retry 2/3 at 10:19:03".
func retryText(j ctl.JobStatus, now time.Time) string {
	s := "retry " + attemptText(j)
	if !j.RetryAt.IsZero() {
		s += " at " + clock(now, j.RetryAt)
	}
	return s
}

// attemptText is "2/3", or "2" when the slot's attempts are unknown.
func attemptText(j ctl.JobStatus) string {
	s := strconv.Itoa(j.Attempt)
	if j.MaxAttempts > 0 {
		s += "/" + strconv.Itoa(j.MaxAttempts)
	}
	return s
}

// skipWhy says why a fire ended as it did: the holder when the lock was
// held, else the exit code or reason.
func skipWhy(r run.Record) string {
	if d := recordDetail(r); d != "" {
		return d
	}
	return "no reason recorded"
}

// pauserText names who paused a job: the user, and the process when known.
func pauserText(p ctl.PauseInfo) string {
	s := p.User
	if p.Via != "" {
		s += " (" + p.Via + ", pid " + strconv.Itoa(p.PID) + ")"
	}
	return s
}
