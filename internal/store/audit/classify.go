package audit

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// Reasons of the slots no record explains.
const (
	ReasonNoRecord = "no record: no host fired it"
	ReasonPending  = "no record yet: the fire may still come (within the job's jitter and the grace)"
	ReasonDisabled = "no record: the job is disabled in jobs.yaml"
	// ReasonAwaited starts the reason of an open slot whose skips point
	// to a run that may be its own, not recorded yet.
	ReasonAwaited = "no record yet of the run the skips point to"
)

// The starts of the skip reasons that point to a run (runner's): the
// lock's holder, and the slot ledger's claim.
const (
	reasonLockHeld = "lock held by "
	reasonSlotDone = "slot already run"
)

// isRun reports whether r is a run of its slot: not a skip, and started
// (or still going). An error that never started (a lock backend that
// could not be asked, a full history backlog) is a fire that did not run.
func isRun(r run.Record) bool {
	return r.Outcome != run.Skipped && (!r.StartedAt.IsZero() || r.Outcome == run.Running)
}

// isMissed reports whether r is the record of fires no host ran: the
// scheduler writes "missed while down …" after a downtime and "missed:
// supervisor woke … late" after a suspend or a clock step.
func isMissed(r run.Record) bool {
	return r.Outcome == run.Skipped && strings.HasPrefix(r.Reason, "missed")
}

// firesRE reads the count the scheduler appends to the reason of one
// record that stands for several consecutive missed slots.
var firesRE = regexp.MustCompile(` \((\d+) fires from [^ )]+\)$`)

// missedFires is how many consecutive slots, from its own, the missed
// record r stands for.
func missedFires(r run.Record) int {
	m := firesRE.FindStringSubmatch(r.Reason)
	if m == nil {
		return 1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// missedCoverage maps the slots after a missed record's own that it
// stands for (by UnixNano) to that record.
func missedCoverage(j config.Job, recs []run.Record, now time.Time) map[int64]run.Record {
	cov := map[int64]run.Record{}
	for _, r := range recs {
		if !isMissed(r) {
			continue
		}
		t := r.ScheduledAt
		for i := 1; i < missedFires(r); i++ {
			next := j.Sched.Next(t)
			if next.IsZero() || next.After(now) || !next.After(t) {
				break
			}
			t = next
			cov[t.UnixNano()] = r
		}
	}
	return cov
}

// judge is what classifies a slot beside its own records: the end of
// the window, and every job's records by run id (the runs a lock-held
// skip may name).
type judge struct {
	now  time.Time
	byID map[string]run.Record
}

// classify judges j's slot at from its records and, when a missed record
// of an earlier slot stands for it too, that record.
func (jd judge) classify(j config.Job, at time.Time, recs []run.Record, cover run.Record) Slot {
	s := Slot{Job: j.Name, At: at}
	var runs, others []run.Record
	for _, r := range recs {
		if isRun(r) {
			runs = append(runs, r)
		} else {
			others = append(others, r)
		}
	}
	if cover.RunID != "" {
		others = append(others, cover)
	}
	pending := jd.now.Sub(at) <= j.Jitter+Grace
	switch {
	case len(runs) > 0:
		return ranSlot(s, runs, j.Overlap == config.OverlapAllow)
	case pending && slices.ContainsFunc(others, func(r run.Record) bool { return jd.awaits(j, at, r) }):
		s = notRun(s, others)
		s.Class, s.Host, s.Reason = Open, "", ReasonAwaited+": "+s.Reason
	case len(others) > 0:
		return notRun(s, others)
	case !j.Enabled:
		s.Class, s.Reason = Skipped, ReasonDisabled
	case pending:
		s.Class, s.Reason = Open, ReasonPending
	default:
		s.Class, s.Reason = Missed, ReasonNoRecord
	}
	return s
}

// awaits reports whether the record r of j's slot at is a skip that
// points to a run which may be this slot's own, not recorded yet: the
// ledger's "slot already run" (some run claimed the slot), or "lock held
// by" a holder that is no run recorded elsewhere. The holder is settled
// (the skip is a skip) when the history has its run as another slot's,
// a manual run or another job's; a holder without a run (outside
// cronvisor, or an older record without one) may be a peer's run all
// the same, which the grace bounds.
func (jd judge) awaits(j config.Job, at time.Time, r run.Record) bool {
	if r.Outcome != run.Skipped {
		return false
	}
	if strings.HasPrefix(r.Reason, reasonSlotDone) {
		return true
	}
	if !strings.HasPrefix(r.Reason, reasonLockHeld) {
		return false
	}
	h := r.Holder
	if h == nil || h.RunID == "" {
		return true
	}
	if h.Job != "" && h.Job != j.Name {
		return false
	}
	held, ok := jd.byID[h.RunID]
	return !ok || (!held.Manual && held.ScheduledAt.Equal(at))
}

// ranSlot classifies a slot that has runs: one chain of attempts is ran
// (or open while an attempt goes on); more than one first attempt is
// duplicated, unless the job allows overlaps (copies: it runs on every
// host by design), and then it is ran (or open) with its copies.
func ranSlot(s Slot, runs []run.Record, copies bool) Slot {
	sortByTime(runs)
	last := runs[0]
	hosts := []string{}
	for _, r := range runs {
		s.RunIDs = append(s.RunIDs, r.RunID)
		if r.Attempt <= 1 {
			s.Copies++
		}
		if max(r.Attempt, 1) >= max(last.Attempt, 1) {
			last = r
		}
		if !slices.Contains(hosts, r.Host) {
			hosts = append(hosts, r.Host)
		}
		s.Attempts = max(s.Attempts, r.Attempt, 1)
	}
	s.Copies = max(s.Copies, 1) // a chain whose first attempt is lost
	s.Host, s.Outcome, s.Reason = last.Host, last.Outcome, last.Reason
	sort.Strings(hosts)
	switch {
	case s.Copies > 1 && !copies:
		s.Class, s.Host, s.Outcome = Duplicated, strings.Join(hosts, ","), ""
		s.Reason = fmt.Sprintf("%d runs of one slot: %s", s.Copies, runList(runs))
		return s
	case s.Copies > 1:
		s.Host, s.Outcome = strings.Join(hosts, ","), commonOutcome(runs)
		s.Reason = fmt.Sprintf("%d copies (overlap: allow): %s", s.Copies, runList(runs))
	}
	s.Class = Ran
	if slices.ContainsFunc(runs, func(r run.Record) bool { return r.Outcome == run.Running }) {
		s.Class, s.Outcome = Open, run.Running
		s.Reason = fmt.Sprintf("running (attempt %d)", s.Attempts)
	}
	return s
}

// commonOutcome is the final outcome every host's last attempt of a
// slot's copies shares, "" when they differ.
func commonOutcome(runs []run.Record) run.Outcome {
	final := map[string]run.Record{}
	for _, r := range runs { // in time order: a host's later attempt wins
		if f, ok := final[r.Host]; !ok || max(r.Attempt, 1) >= max(f.Attempt, 1) {
			final[r.Host] = r
		}
	}
	var out run.Outcome
	for _, r := range final {
		if out != "" && r.Outcome != out {
			return ""
		}
		out = r.Outcome
	}
	return out
}

// runList names the first attempts of a duplicated slot: "r1 on host-a
// (ok), r2 on host-b (running)".
func runList(runs []run.Record) string {
	var parts []string
	for _, r := range runs {
		if r.Attempt <= 1 {
			parts = append(parts, fmt.Sprintf("%s on %s (%s)", r.RunID, r.Host, r.Outcome))
		}
	}
	return strings.Join(parts, ", ")
}

// notRun classifies a slot whose records are all fires that did not run:
// skipped when any says why a host skipped it, missed when every one is a
// missed record.
func notRun(s Slot, recs []run.Record) Slot {
	sortByTime(recs)
	var reasons []string
	for _, r := range recs {
		s.RunIDs = append(s.RunIDs, r.RunID)
		if !isMissed(r) && s.Host == "" {
			s.Host = r.Host
		}
		if !isMissed(r) && !slices.Contains(reasons, r.Reason) {
			reasons = append(reasons, r.Reason)
		}
	}
	if len(reasons) == 0 {
		s.Class, s.Reason = Missed, recs[0].Reason
		return s
	}
	s.Class, s.Reason = Skipped, strings.Join(reasons, "; ")
	return s
}

// extras are the runs left in bySlot once every owed slot took its own:
// runs at instants no schedule in force owed, within the window.
func extras(j config.Job, bySlot map[int64][]run.Record, from, now time.Time) []Slot {
	var out []Slot
	for _, recs := range bySlot {
		for _, r := range recs {
			if !isRun(r) || r.ScheduledAt.Before(from) || r.ScheduledAt.After(now) {
				continue
			}
			out = append(out, Slot{Job: j.Name, At: r.ScheduledAt, Class: Extra, Host: r.Host, Outcome: r.Outcome, Copies: 1,
				Attempts: max(r.Attempt, 1), Reason: "a run at an instant no schedule in force owed", RunIDs: []string{r.RunID}})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].At.Equal(out[b].At) {
			return out[a].At.Before(out[b].At)
		}
		return out[a].RunIDs[0] < out[b].RunIDs[0]
	})
	return out
}

// sortByTime orders a slot's records by when they happened (a record's
// start, else its end), then by run id.
func sortByTime(recs []run.Record) {
	when := func(r run.Record) time.Time {
		if !r.StartedAt.IsZero() {
			return r.StartedAt
		}
		return r.EndedAt
	}
	sort.SliceStable(recs, func(a, b int) bool {
		ta, tb := when(recs[a]), when(recs[b])
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return recs[a].RunID < recs[b].RunID
	})
}
