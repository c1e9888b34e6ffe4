package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"cronvisor/internal/config"
)

// KeyChange is one key of a job that differs between two files.
type KeyChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// JobDiff is what changes for one job.
type JobDiff struct {
	Job    string      `json:"job"`
	Change string      `json:"change"` // added, removed, changed
	Keys   []KeyChange `json:"keys"`
	// Added and Removed are the slots in the window that only the new
	// (the old) file has.
	Added   []time.Time `json:"slots_added"`
	Removed []time.Time `json:"slots_removed"`
	// Effect is the predicted difference of the runs ("" when none can be
	// said), and Findings the new file's plan's (what it still warns of).
	Effect   string    `json:"effect"`
	Findings []Finding `json:"findings"`
	// AtReload is what the reload itself starts at once; OnStart what a
	// start-up would (catch_up).
	AtReload string `json:"at_reload"`
	OnStart  string `json:"on_start"`
}

// Diff is what changes, job by job, from old to new over o's window, in
// new's order with the removed jobs last; jobs alike in both are left out
// before anything is planned, so that a reload of many jobs that changes
// a few costs the few.
func Diff(old, new []config.Job, o Options) []JobDiff {
	oldByName := make(map[string]config.Job, len(old))
	for _, j := range old {
		oldByName[j.Name] = j
	}
	var out []JobDiff
	for _, nj := range new {
		oj, ok := oldByName[nj.Name]
		delete(oldByName, nj.Name)
		switch {
		case !ok:
			out = append(out, added(planJob(nj, o)))
		case len(keyChanges(oj, nj)) > 0:
			out = append(out, diffJob(planJob(oj, o), planJob(nj, o), o))
		}
	}
	for _, j := range old {
		if _, ok := oldByName[j.Name]; ok {
			op := planJob(j, o)
			out = append(out, JobDiff{Job: op.Job, Change: "removed", Keys: []KeyChange{}, Added: []time.Time{},
				Removed: slots(op.Fires), Findings: []Finding{}, AtReload: "nothing: its runs in flight finish under the old definition"})
		}
	}
	return out
}

func added(np JobPlan) JobDiff {
	d := JobDiff{Job: np.Job, Change: "added", Keys: []KeyChange{}, Added: slots(np.Fires), Removed: []time.Time{},
		Findings: np.Findings, AtReload: "nothing: its first fire is its next slot"}
	if len(np.Fires) > 0 {
		d.AtReload = "nothing: its first fire is its next slot, " + np.Fires[0].Slot.Format(time.RFC3339)
	}
	return d
}

// diffJob compares one job's two plans.
func diffJob(op, np JobPlan, o Options) JobDiff {
	d := JobDiff{Job: np.Job, Change: "changed", Keys: keyChanges(op.job, np.job), Findings: np.Findings}
	d.Added, d.Removed = slotDiff(op.Fires, np.Fires)
	d.Effect = effect(op, np)
	d.AtReload = "nothing: a reload never catches up; the job's next fire is computed from now"
	d.OnStart = onStart(op.job, np.job, o.From)
	return d
}

// onStart says what a start-up (not the reload) would now fire that it
// would not have before: the newest slot before now, once catch_up
// covers it.
func onStart(oj, nj config.Job, now time.Time) string {
	if nj.CatchUp <= oj.CatchUp || nj.Sched == nil {
		return ""
	}
	newest := previousSlot(nj, now)
	if newest.IsZero() || now.Sub(newest) > nj.CatchUp {
		return fmt.Sprintf("catch_up %s → %s: no slot before now is within it", oj.CatchUp, nj.CatchUp)
	}
	return fmt.Sprintf("catch_up %s → %s: a start-up now would run the slot %s (%s ago) at once if no host ran it; the reload itself does not",
		oj.CatchUp, nj.CatchUp, newest.Format(time.RFC3339), now.Sub(newest).Round(time.Second))
}

// previousSlot is j's newest slot at or before now, looked for within
// its catch_up.
func previousSlot(j config.Job, now time.Time) time.Time {
	var last time.Time
	for t := j.Sched.Next(now.Add(-j.CatchUp - time.Nanosecond)); !t.IsZero() && !t.After(now); t = j.Sched.Next(t) {
		last = t
	}
	return last
}

func slots(fs []Fire) []time.Time {
	out := make([]time.Time, len(fs))
	for i, f := range fs {
		out[i] = f.Slot
	}
	return out
}

// slotDiff is the slots only new has, and those only old has.
func slotDiff(old, new []Fire) (added, removed []time.Time) {
	in := func(fs []Fire) map[int64]bool {
		m := make(map[int64]bool, len(fs))
		for _, f := range fs {
			m[f.Slot.UnixNano()] = true
		}
		return m
	}
	o, n := in(old), in(new)
	added, removed = []time.Time{}, []time.Time{}
	for _, f := range new {
		if !o[f.Slot.UnixNano()] {
			added = append(added, f.Slot)
		}
	}
	for _, f := range old {
		if !n[f.Slot.UnixNano()] {
			removed = append(removed, f.Slot)
		}
	}
	return added, removed
}

// effect words the change of the predicted runs, "" when neither plan
// predicts (too few measured runs) or nothing moves.
func effect(op, np JobPlan) string {
	if op.Expect == nil || np.Expect == nil {
		if np.Measured == nil {
			return ""
		}
		return fmt.Sprintf("expect %s, %d skipped", plural(np.Expect.Runs, "run"), np.Expect.Skipped)
	}
	a, b := op.Expect, np.Expect
	if *a == *b {
		return ""
	}
	return fmt.Sprintf("expect %s, %d skipped, %d queued (was %s, %d skipped, %d queued)",
		plural(b.Runs, "run"), b.Skipped, b.Queued, plural(a.Runs, "run"), a.Skipped, a.Queued)
}

// keyChanges lists the keys whose values differ, in a fixed order.
func keyChanges(o, n config.Job) []KeyChange {
	var out []KeyChange
	for _, k := range jobKeys {
		if a, b := k.value(o), k.value(n); a != b {
			out = append(out, KeyChange{Key: k.name, Old: a, New: b})
		}
	}
	if out == nil {
		out = []KeyChange{}
	}
	return out
}

var jobKeys = []struct {
	name  string
	value func(config.Job) string
}{
	{"schedule", func(j config.Job) string { return j.Schedule }},
	{"timezone", func(j config.Job) string { return j.Timezone }},
	{"enabled", func(j config.Job) string { return fmt.Sprint(j.Enabled) }},
	{"command", func(j config.Job) string { return strings.Join(j.Command, " ") }},
	{"overlap", func(j config.Job) string { return string(j.Overlap) }},
	{"lock", func(j config.Job) string { return j.Lock }},
	{"timeout", func(j config.Job) string { return j.Timeout.String() }},
	{"catch_up", func(j config.Job) string { return j.CatchUp.String() }},
	{"jitter", func(j config.Job) string { return j.Jitter.String() }},
	{"retries", func(j config.Job) string { return fmt.Sprint(j.Retries) }},
	{"dir", func(j config.Job) string { return j.Dir }},
	{"env", func(j config.Job) string { return envText(j.Env) }},
	{"kill_grace", func(j config.Job) string { return j.KillGrace.String() }},
	{"heartbeat_timeout", func(j config.Job) string { return j.HeartbeatTimeout.String() }},
}

func envText(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + env[k]
	}
	return strings.Join(parts, " ")
}

// Summary is the diff in one line: "2 jobs changed, 1 added, 0 removed;
// +144 -0 slots in 24h; fires at reload: none".
func Summary(ds []JobDiff, window time.Duration) string {
	var changed, add, rem, plus, minus int
	for _, d := range ds {
		switch d.Change {
		case "added":
			add++
		case "removed":
			rem++
		default:
			changed++
		}
		plus += len(d.Added)
		minus += len(d.Removed)
	}
	if len(ds) == 0 {
		return "no job changes"
	}
	return fmt.Sprintf("%s changed, %d added, %d removed; +%d -%d slots in %s; fires at reload: none",
		plural(changed, "job"), add, rem, plus, minus, shortDuration(window))
}

func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}
