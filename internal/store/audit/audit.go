package audit

import (
	"fmt"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// Grace is how long after a slot, on top of the job's jitter, a slot that
// has no record yet is open rather than missed: the scheduler still starts
// a fire that is up to a minute late (runner.LateTolerance), and the start's
// record is committed a moment after the exec.
const Grace = time.Minute

// Class is what became of one slot.
type Class string

// The classes of a slot (the contract's names), and Extra, which is no
// slot at all.
const (
	Ran        Class = "ran"        // exactly one run (with its retries)
	Skipped    Class = "skipped"    // no run; a skip record says why
	Missed     Class = "missed"     // no host fired it
	Duplicated Class = "duplicated" // more than one run
	Open       Class = "open"       // a run still going, or a fire that may still come
	// Extra is a run at an instant no schedule in force owed (a schedule
	// from before its versions were kept, or a host still on the old one
	// after another host's reload): not a slot, so not counted.
	Extra Class = "extra"
)

// Classes are the classes of a slot, in the order a summary names them.
func Classes() []Class { return []Class{Ran, Skipped, Missed, Duplicated, Open} }

// Slot is one slot the schedule owed (or, as Extra, a run it did not owe),
// classified.
type Slot struct {
	Job      string
	At       time.Time // the slot, before jitter, in the schedule's zone
	Class    Class
	Host     string      // who ran it (several, comma-separated, when duplicated or copies); who skipped it
	Outcome  run.Outcome // the final outcome of the run's last attempt; "" when nothing ran
	Attempts int         // attempts of the run (the highest attempt number); 0 when nothing ran
	// Copies is how many runs (first attempts) the slot had: 1 for a slot
	// run once, more for an overlap: allow job's copies (one per host) or
	// a duplicated slot, 0 when nothing ran.
	Copies int
	Reason string
	RunIDs []string // every record of the slot, oldest first
}

// Input is what Audit judges.
type Input struct {
	// Jobs are the jobs whose slots are judged: the current jobs.yaml's.
	Jobs []config.Job
	// Versions are the versions of the jobs' schedules the history kept
	// (any host, any order): each slot is owed as the version in force at
	// its instant defines it. A job without any is judged by its
	// definition in Jobs throughout.
	Versions []run.ScheduleVersion
	// Records are the history's records of those jobs since Since; the
	// records of other jobs and manual runs are left out.
	Records []run.Record
	// Since is the start of the window asked for; Now its end.
	Since, Now time.Time
	// Began is when the history began (its oldest record, or the horizon
	// of its retention): slots before it are not judged. Zero means the
	// history holds nothing, and nothing is judged.
	Began time.Time
	// KeepRuns is how many records per job the history keeps (0: no
	// limit). A job with that many records in the window may have lost
	// older ones to pruning, so it is judged from its oldest record on.
	KeepRuns int
}

// JobReport is one job's slots over the window.
type JobReport struct {
	Job    string
	From   time.Time // the first instant judged (zero when nothing was)
	Slots  []Slot    // in time order
	Extra  []Slot    // runs at instants the schedule does not owe, in time order
	Counts Counts
}

// Report is the audit of every job.
type Report struct {
	Jobs  []JobReport
	Total Counts
}

// Failed reports whether any slot was missed or duplicated: what an
// operator must look at.
func (r Report) Failed() bool { return r.Total[Missed] > 0 || r.Total[Duplicated] > 0 }

// Counts are the slots of each class.
type Counts map[Class]int

// String names every class with its count, as the summary line does:
// "ran 58, skipped 116, missed 0, duplicated 0, open 1".
func (c Counts) String() string {
	parts := make([]string, 0, len(Classes()))
	for _, cl := range Classes() {
		parts = append(parts, fmt.Sprintf("%s %d", cl, c[cl]))
	}
	return strings.Join(parts, ", ")
}

// Audit rebuilds every slot each job's schedule owed from the window's
// start (clipped to Began) to Now and classifies it from the records.
func Audit(in Input) Report {
	recsByJob := map[string][]run.Record{}
	byID := make(map[string]run.Record, len(in.Records))
	for _, r := range in.Records {
		byID[r.RunID] = r // manual runs too: one may hold the lock a skip names
		if r.Manual || r.ScheduledAt.IsZero() {
			continue // an operator's run (run, trigger, run-now) has no slot
		}
		recsByJob[r.Job] = append(recsByJob[r.Job], r)
	}
	versions := byJob(in.Versions)
	rep := Report{Total: Counts{}}
	for _, j := range in.Jobs {
		if j.Sched == nil {
			continue
		}
		jr := auditJob(j, recsByJob[j.Name], timeline(j, versions[j.Name]), byID, in)
		for cl, n := range jr.Counts {
			rep.Total[cl] += n
		}
		rep.Jobs = append(rep.Jobs, jr)
	}
	return rep
}

// auditJob walks j's slots over the window, each owed as the one of
// spans in force at its instant defines it, and classifies each from
// recs, j's records; byID are every job's records by run id.
func auditJob(j config.Job, recs []run.Record, spans []span, byID map[string]run.Record, in Input) JobReport {
	jr := JobReport{Job: j.Name, Counts: Counts{}}
	if in.Began.IsZero() {
		return jr
	}
	from := later(in.Since, in.Began)
	if in.KeepRuns > 0 && len(recs) >= in.KeepRuns {
		from = later(from, oldestSlot(recs))
	}
	jr.From = from
	bySlot := map[int64][]run.Record{}
	for _, r := range recs {
		k := r.ScheduledAt.UnixNano()
		bySlot[k] = append(bySlot[k], r)
	}
	for _, sp := range spans {
		if sp.owes {
			owedSlots(&jr, sp, recs, bySlot, judge{now: in.Now, byID: byID}, later(from, sp.from))
		}
	}
	jr.Extra = extras(j, bySlot, from, in.Now)
	return jr
}

// owedSlots classifies the slots of sp from from to jd.now into jr,
// taking each slot's records out of bySlot.
func owedSlots(jr *JobReport, sp span, recs []run.Record, bySlot map[int64][]run.Record, jd judge, from time.Time) {
	j, now := sp.job, jd.now
	covered := missedCoverage(j, inSpan(recs, sp), now)
	prev := time.Time{}
	for t := j.Sched.Next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(now) && sp.contains(t); t = j.Sched.Next(t) {
		if !prev.IsZero() && !t.After(prev) {
			break // a schedule that does not move on would never end
		}
		prev = t
		k := t.UnixNano()
		s := jd.classify(j, t, bySlot[k], covered[k])
		delete(bySlot, k)
		jr.Slots = append(jr.Slots, s)
		jr.Counts[s.Class]++
	}
}

// inSpan are the records of recs whose slot is within sp.
func inSpan(recs []run.Record, sp span) []run.Record {
	var out []run.Record
	for _, r := range recs {
		if sp.contains(r.ScheduledAt) {
			out = append(out, r)
		}
	}
	return out
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func oldestSlot(recs []run.Record) time.Time {
	var o time.Time
	for _, r := range recs {
		if o.IsZero() || r.ScheduledAt.Before(o) {
			o = r.ScheduledAt
		}
	}
	return o
}
