package ctl

import (
	"fmt"
	"math"
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// FireOptions are what an operator's fire (run-now, trigger) may ask
// beyond the fire itself.
type FireOptions struct {
	// Force fires a paused or disabled job, which is otherwise refused;
	// the job stays paused or disabled.
	Force bool
}

// FireHold is what stands against a fire of a job that the schedule did
// not ask for: its pause and its enabled: false. One rule covers every
// operator's fire: refused unless forced.
type FireHold struct {
	Paused   bool       `json:"paused,omitempty"`
	PausedBy *PauseInfo `json:"paused_by,omitempty"`
	Disabled bool       `json:"disabled,omitempty"`
}

// TimeText writes a time into a message; nil is the local time of day
// (to the minute for a pause, to the second for a kill), with the date in
// front when it is not today. The console passes its own clock.
type TimeText func(time.Time) string

// String says what holds the job, in the local zone: "the job is paused
// (by root at 10:02)", "the job is disabled (enabled: false in
// jobs.yaml)", or both.
func (h FireHold) String() string { return h.Say(nil) }

// Say is String with times written by tt.
func (h FireHold) Say(tt TimeText) string {
	if tt == nil {
		tt = func(t time.Time) string { return clockTime(t, "15:04") }
	}
	var parts []string
	if h.Paused {
		parts = append(parts, "paused"+pausedBy(h.PausedBy, tt))
	}
	if h.Disabled {
		parts = append(parts, "disabled (enabled: false in jobs.yaml)")
	}
	if len(parts) == 0 {
		return "nothing holds the job"
	}
	return "the job is " + strings.Join(parts, " and ")
}

// Stays says what the job still is after a forced fire.
func (h FireHold) Stays() string {
	switch {
	case h.Paused && h.Disabled:
		return "it stays paused and disabled"
	case h.Paused:
		return "it stays paused"
	}
	return "it stays disabled"
}

// pausedBy is " (by USER at 10:02)", as much of it as info knows.
func pausedBy(info *PauseInfo, tt TimeText) string {
	if info == nil {
		return ""
	}
	var s []string
	if info.User != "" {
		s = append(s, "by "+info.User)
	}
	if !info.At.IsZero() {
		s = append(s, "at "+tt(info.At))
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, " ") + ")"
}

// clockTime is t in the local zone as layout, with the date in front
// when t is not today.
func clockTime(t time.Time, layout string) string {
	t = t.Local()
	if t.Format("2006-01-02") != time.Now().Format("2006-01-02") {
		return t.Format("2006-01-02 " + layout)
	}
	return t.Format(layout)
}

// KillOptions are what a kill may ask beyond ending the job's runs.
type KillOptions struct {
	// NoWait answers once the runs are signalled, without waiting for
	// their end.
	NoWait bool
}

// KillWaitMax bounds how long a kill waits for the runs it signalled to
// end: their kill_grace and a margin, but no longer than this, so that a
// job with a long grace is answered with when its SIGKILL falls.
const KillWaitMax = 30 * time.Second

// KillResult is what a kill did by the time the daemon answered.
type KillResult struct {
	// Killed counts the runs this kill concerns (signalled now, or being
	// ended by an earlier kill), the retries and the resource waits it
	// cancelled; 0: nothing of the job was running.
	Killed int `json:"killed"`
	// Runs are the job's runs in flight, own or adopted, and where each
	// stands.
	Runs []KilledRun `json:"runs,omitempty"`
	// RetriesCancelled counts slots waiting between attempts whose
	// further attempts the kill cancelled.
	RetriesCancelled int `json:"retries_cancelled,omitempty"`
	// WaitsCancelled counts fires waiting for a resource's slot
	// (on_full: wait) that the kill ended: each is recorded skipped.
	WaitsCancelled int `json:"waits_cancelled,omitempty"`
	// Now is the daemon's clock at the answer: "ending within" counts
	// from it.
	Now time.Time `json:"now,omitzero"`
}

// KilledRun is one run a kill concerned.
type KilledRun struct {
	RunID   string `json:"run_id"`
	Adopted bool   `json:"adopted,omitempty"`
	// SignalledAt is when the first kill sent SIGTERM; KillAt when
	// SIGKILL falls (or fell) on a run still going then.
	SignalledAt time.Time `json:"signalled_at,omitzero"`
	KillAt      time.Time `json:"kill_at,omitzero"`
	// Already: an earlier kill had signalled the run; this one sent
	// nothing.
	Already bool `json:"already,omitempty"`
	// Ended: the run ended before the answer, with Outcome and Reason
	// (Outcome "" when its record was not read).
	Ended   bool        `json:"ended,omitempty"`
	Outcome run.Outcome `json:"outcome,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	// KeeperSilent: the adopted run's keeper (KeeperPID) did not answer
	// the kill; the daemon signalled the run itself, through EndedVia
	// ("cgroup leaf" or "process group"), and its record waits for the
	// keeper to resume or be gone (it holds the run's lock).
	KeeperSilent bool   `json:"keeper_not_answering,omitempty"`
	KeeperPID    int    `json:"keeper_pid,omitempty"`
	EndedVia     string `json:"ended_via,omitempty"`
}

// Lines says what the kill did, one line a kind of run, each starting
// with what it is about: "killed J: 1 run ended (interrupted)",
// "killed J: 1 run signalled: ending within 7s (SIGKILL due at
// 10:02:13)", "kill J: run R is already being ended ...". None when
// nothing ran. Times are written by tt (nil: local, see TimeText).
func (r KillResult) Lines(job string, tt TimeText) []string {
	if tt == nil {
		tt = func(t time.Time) string { return clockTime(t, "15:04:05") }
	}
	var out []string
	ended := map[string]int{}
	var order []string
	for _, k := range r.Runs {
		if k.KeeperSilent {
			out = append(out, k.silent(job))
			continue
		}
		if !k.Ended {
			out = append(out, k.pending(job, r.Now, tt))
			continue
		}
		key := runNoun(k.Adopted, 1) + " ended"
		if k.Outcome != "" {
			key += " (" + string(k.Outcome) + ")"
		}
		if ended[key] == 0 {
			order = append(order, key)
		}
		ended[key]++
	}
	head := make([]string, 0, len(order)+1)
	for _, key := range order {
		n := ended[key]
		adopted := strings.HasPrefix(key, "adopted")
		head = append(head, fmt.Sprintf("killed %s: %d %s", job, n, strings.Replace(key, runNoun(adopted, 1), runNoun(adopted, n), 1)))
	}
	if r.RetriesCancelled > 0 {
		noun := "slots"
		if r.RetriesCancelled == 1 {
			noun = "slot"
		}
		head = append(head, fmt.Sprintf("killed %s: no retry: %d %s waiting for its next attempt ended", job, r.RetriesCancelled, noun))
	}
	if r.WaitsCancelled > 0 {
		noun := "fires"
		if r.WaitsCancelled == 1 {
			noun = "fire"
		}
		head = append(head, fmt.Sprintf("killed %s: %d %s waiting for a resource slot ended (recorded skipped)", job, r.WaitsCancelled, noun))
	}
	return append(head, out...)
}

// pending says where a run still going stands.
func (k KilledRun) pending(job string, now time.Time, tt TimeText) string {
	noun := runNoun(k.Adopted, 1)
	if k.Already {
		s := fmt.Sprintf("kill %s: %s %s is already being ended (signalled at %s)", job, noun, k.RunID, tt(k.SignalledAt))
		if k.KillAt.After(now) {
			return s + fmt.Sprintf("; SIGKILL due at %s, in %s", tt(k.KillAt), secondsUntil(now, k.KillAt))
		}
		return s + fmt.Sprintf("; SIGKILL sent at %s, not ended yet", tt(k.KillAt))
	}
	if k.KillAt.After(now) {
		return fmt.Sprintf("killed %s: 1 %s signalled: ending within %s (SIGKILL due at %s)", job, noun,
			secondsUntil(now, k.KillAt), tt(k.KillAt))
	}
	return fmt.Sprintf("killed %s: 1 %s signalled: SIGKILL sent at %s, not ended yet", job, noun, tt(k.KillAt))
}

// silent says what became of an adopted run whose keeper did not answer.
func (k KilledRun) silent(job string) string {
	s := fmt.Sprintf("kill %s: adopted run %s signalled, keeper not answering (pid %d)", job, k.RunID, k.KeeperPID)
	switch {
	case k.EndedVia == "":
		return s + ": nothing of the run found to signal; it goes on"
	case k.Ended:
		s += ": ended through its " + k.EndedVia
	default:
		s += ": SIGTERM sent through its " + k.EndedVia + ", not ended yet"
	}
	return s + "; its record waits for its keeper, which holds its lock, to resume or be gone"
}

// Silent reports whether a run's keeper did not answer the kill: the
// kill did not go as asked.
func (r KillResult) Silent() bool {
	for _, k := range r.Runs {
		if k.KeeperSilent {
			return true
		}
	}
	return false
}

// runNoun is "run", "runs", "adopted run" or "adopted runs".
func runNoun(adopted bool, n int) string {
	s := "run"
	if n != 1 {
		s = "runs"
	}
	if adopted {
		return "adopted " + s
	}
	return s
}

// secondsUntil is the whole seconds from now to t, rounded up: "7s".
func secondsUntil(now, t time.Time) string {
	return fmt.Sprintf("%ds", int(math.Ceil(t.Sub(now).Seconds())))
}
