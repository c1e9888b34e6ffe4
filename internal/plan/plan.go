// Package plan says what a jobs.yaml will do before it does it: each
// job's fires over a window, the DST edges they cross, and, from the
// durations its history measured, the runs, skips, queue waits and
// overlaps to expect, with the contradictions a reader would want called
// out; and (diff.go) what changes from one file to another. It is pure:
// the caller reads the files and the history.
package plan

import (
	"fmt"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

// MaxFires bounds the fires listed per job, so that a window of a job
// every second stays readable; the counts go on past it.
const MaxFires = 10_000

// Options are the window and what the history measured.
type Options struct {
	From   time.Time
	Window time.Duration
	// Stats are each job's figures of its successful runs; a job with
	// fewer than durations.MinSamples gets no prediction.
	Stats map[string]durations.Stats
}

// Fire is one fire: its slot and, with a jitter, when it starts.
type Fire struct {
	Slot  time.Time `json:"slot"`
	Start time.Time `json:"start"`
	// Skipped is why the job's calendars leave the slot out ("calendar
	// holidays (2026-12-25)"), "" when it fires.
	Skipped string `json:"skipped,omitempty"`
}

// Edge is a change of the job's zone offset in the window and what it
// does to the job's fires ("" when nothing).
type Edge struct {
	At      time.Time `json:"at"`
	Change  string    `json:"change"` // "spring forward" or "fall back"
	JumpS   int64     `json:"jump_s"`
	Effect  string    `json:"effect"`
	Forward bool      `json:"-"`
}

// Measured is what the job's history says of its successful runs.
type Measured struct {
	Runs  int   `json:"runs"`
	P50MS int64 `json:"p50_ms"`
	P95MS int64 `json:"p95_ms"`
}

// Finding is something the reader should know, in a word and a sentence.
type Finding struct {
	Kind string `json:"kind"` // skips, queue, replace, overlap, timeout, catch_up, dst, never, disabled
	Text string `json:"text"`
}

// JobPlan is one job's plan over the window.
type JobPlan struct {
	Job       string    `json:"job"`
	Schedule  string    `json:"schedule"`
	Timezone  string    `json:"timezone"`
	Enabled   bool      `json:"enabled"`
	Overlap   string    `json:"overlap"`
	Drawn     bool      `json:"drawn"` // H or ~ drew its times from its name
	JitterMS  int64     `json:"jitter_ms"`
	TimeoutMS int64     `json:"timeout_ms"`
	PeriodMS  int64     `json:"period_ms"` // the shortest gap between fires, 0 with fewer than two
	FireCount int       `json:"fire_count"`
	Fires     []Fire    `json:"fires"`
	Edges     []Edge    `json:"dst_edges"`
	Measured  *Measured `json:"measured"` // nil: too few runs to predict from
	Expect    *Expect   `json:"expect"`   // nil without Measured
	Findings  []Finding `json:"findings"`
	job       config.Job
	next      time.Time // the first fire after the window, when it has none
}

// Plan is the plan of each of jobs over o's window, in their order.
func Plan(jobs []config.Job, o Options) []JobPlan {
	out := make([]JobPlan, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, planJob(j, o))
	}
	return out
}

func planJob(j config.Job, o Options) JobPlan {
	p := JobPlan{Job: j.Name, Schedule: j.Schedule, Timezone: j.ZoneName(), Enabled: j.Enabled,
		Overlap: string(j.Overlap), Drawn: schedule.Hashed(j.Schedule), JitterMS: j.Jitter.Milliseconds(),
		TimeoutMS: j.Timeout.Milliseconds(), Fires: []Fire{}, Edges: []Edge{}, Findings: []Finding{}, job: j}
	until := o.From.Add(o.Window)
	if j.Sched == nil {
		return p
	}
	for t := j.Sched.Next(o.From.Add(-time.Nanosecond)); !t.IsZero() && t.Before(until); t = j.Sched.Next(t) {
		if p.FireCount < MaxFires {
			p.Fires = append(p.Fires, Fire{Slot: t, Start: t.Add(schedule.Delay(j.Name, t, j.Jitter)), Skipped: j.CalendarSkip(t)})
		}
		p.FireCount++
	}
	if p.FireCount == 0 {
		p.next = j.Sched.Next(until.Add(-time.Nanosecond))
	}
	p.PeriodMS = period(p.Fires).Milliseconds()
	for _, e := range schedule.Edges(j.Sched, o.From, until) {
		p.Edges = append(p.Edges, edgeOf(e))
	}
	if st, ok := o.Stats[j.Name]; ok && st.Enough() {
		p.Measured = &Measured{Runs: st.Runs, P50MS: st.P50.Milliseconds(), P95MS: st.P95.Milliseconds()}
		p.Expect = simulate(j, p.Fires, st.P95)
	}
	p.Findings = findings(p)
	return p
}

func edgeOf(e schedule.Edge) Edge {
	change := "fall back"
	if e.Forward {
		change = "spring forward"
	}
	return Edge{At: e.At, Change: change, JumpS: int64(e.Jump / time.Second), Effect: e.Effect, Forward: e.Forward}
}

// period is the shortest gap between consecutive fires.
func period(fires []Fire) time.Duration {
	var least time.Duration
	for i := 1; i < len(fires); i++ {
		if d := fires[i].Slot.Sub(fires[i-1].Slot); i == 1 || d < least {
			least = d
		}
	}
	return least
}

// ms prints milliseconds as a duration, rounded to what a reader needs.
func ms(n int64) string {
	d := time.Duration(n) * time.Millisecond
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.String()
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
