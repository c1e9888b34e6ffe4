package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// Limits on what the console keeps in memory.
const (
	tailLines  = 500  // live output lines kept per job
	maxRecords = 2000 // history records kept for the history view
)

// ring keeps the last lines of a job's output, each with the time of the
// event that brought it (unix ms): saved logs carry no times, so these are
// the only ones the console has.
type ring struct {
	lines []string
	times []int64
	next  int // where the next line goes once full
	full  bool
	total int // lines ever added: a view tells new lines from rotated ones
}

func (r *ring) add(line string, at time.Time) {
	r.total++
	if !r.full {
		r.lines = append(r.lines, line)
		r.times = append(r.times, at.UnixMilli())
		r.full = len(r.lines) == tailLines
		return
	}
	r.lines[r.next], r.times[r.next] = line, at.UnixMilli()
	r.next = (r.next + 1) % tailLines
}

// allTimes returns the lines' times, oldest first.
func (r *ring) allTimes() []int64 {
	if !r.full {
		return slices.Clone(r.times)
	}
	return append(slices.Clone(r.times[r.next:]), r.times[:r.next]...)
}

// all returns the lines oldest first.
func (r *ring) all() []string {
	if !r.full {
		return slices.Clone(r.lines)
	}
	return append(slices.Clone(r.lines[r.next:]), r.lines[:r.next]...)
}

// store is what the console knows: the last snapshot of jobs and locks
// with live events applied on top, recent history, and output tails. Only
// the root model's Update changes it; views read it.
type store struct {
	jobs   []jobRow
	strs   interner         // the rows' shared strings
	byName []int32          // positions in jobs, in the order of their names
	fires  fires            // the jobs' next fires, soonest first
	locks  []ctl.LockStatus // all with allLocks, else the held ones
	// allLocks: the locks tab is shown and locks holds the free ones too;
	// otherwise only the held locks are kept, which the status line counts.
	allLocks bool
	// resources are the declared resources, read with the locks.
	resources []ctl.ResourceStatus
	records   []run.Record     // newest first
	tl        *tlIndex         // the timeline's history, by job
	tails     map[string]*ring // job -> live output
	host      string           // this supervisor's host, learnt from holders
	note      string           // the daemon's history note, as last read
	// gen counts the changes of jobs and locks; counted is the status
	// line's tally of them at a gen: a frame a second must not walk
	// 10,000 rows to say how many run.
	gen     int
	counted tally
}

// tally is what the status line counts, and the retrying slots, for
// which the STATE column widens.
type tally struct {
	gen, running, held, retrying int
	ok                           bool
}

// count returns the running jobs, the held locks and the retrying
// slots, counting them again only after a change.
func (s *store) count() tally {
	if s.counted.ok && s.counted.gen == s.gen {
		return s.counted
	}
	t := tally{gen: s.gen, ok: true}
	for i := range s.jobs {
		switch s.jobs[i].state {
		case ctl.StateRunning:
			t.running++
		case ctl.StateRetrying:
			t.retrying++
		}
	}
	for i := range s.locks {
		if s.locks[i].Held {
			t.held++
		}
	}
	s.counted = t
	return t
}

func newStore() *store {
	return &store{tails: map[string]*ring{}, tl: newTLIndex()}
}

// setJobs replaces the table with a whole read. The rows are compact
// copies: the decoded statuses are garbage once this returns.
func (s *store) setJobs(jobs []ctl.JobStatus) {
	s.strs = interner{} // a reload's gone schedules go with the old one
	s.tl.forget()       // a whole read: events may have been missed
	s.jobs = make([]jobRow, len(jobs))
	s.gen++
	s.note = ""
	if len(jobs) > 0 {
		s.note = jobs[0].History
	}
	s.byName = make([]int32, len(jobs))
	names := joinNames(jobs)
	for i, j := range jobs {
		s.jobs[i] = s.strs.compact(j, names[:len(j.Name)])
		names = names[len(j.Name):]
		s.byName[i] = int32(i)
		if h := j.Holder; h != nil && !h.Foreign && h.Job == j.Name && s.host == "" {
			s.host = h.Host
		}
	}
	slices.SortStableFunc(s.byName, func(a, b int32) int { return strings.Compare(s.jobs[a].name, s.jobs[b].name) })
	s.indexFires()
}

// joinNames is the jobs' names in one string, which the rows slice: one
// allocation instead of 10,000 small ones strewn among the decoder's
// garbage, whose pages they would keep.
func joinNames(jobs []ctl.JobStatus) string {
	n := 0
	for _, j := range jobs {
		n += len(j.Name)
	}
	var b strings.Builder
	b.Grow(n)
	for _, j := range jobs {
		b.WriteString(j.Name)
	}
	return b.String()
}

// find is the named job's position in jobs; false if unknown. A sorted
// index of positions is a tenth of a map's size for 10,000 jobs, and
// events, the only lookups, come a few a second.
func (s *store) find(name string) (int, bool) {
	k, ok := slices.BinarySearchFunc(s.byName, name, func(i int32, name string) int { return strings.Compare(s.jobs[i].name, name) })
	if !ok {
		return 0, false
	}
	return int(s.byName[k]), true
}

// historyNote is the daemon's "history degraded since ..." line, or "".
func (s *store) historyNote() string { return s.note }

// setLocks takes a read of the locks: all of them with all (the locks
// tab shows them), else the held ones only. 10,000 free locks are a
// screen's worth of memory nobody looks at.
func (s *store) setLocks(locks []ctl.LockStatus, all bool) {
	s.locks, s.allLocks = locks, all
	if !all {
		s.locks = heldLocks(locks)
	}
	s.gen++
}

// dropFreeLocks keeps only the held locks, once the locks tab is left.
func (s *store) dropFreeLocks() {
	if s.allLocks {
		s.setLocks(s.locks, false)
	}
}

// heldLocks is a copy of the held ones among locks.
func heldLocks(locks []ctl.LockStatus) []ctl.LockStatus {
	var held []ctl.LockStatus
	for _, l := range locks {
		if l.Held {
			held = append(held, l)
		}
	}
	return held
}

// setRecords takes a fetched page, newest first, merged by identity with
// the records already kept: a record the stream delivered around the read
// is on one row whichever came first.
func (s *store) setRecords(recs []run.Record) {
	s.records = mergeRecords(recs, s.records)
	s.tl.addAll(recs)
	if len(s.records) > maxRecords {
		s.records = s.records[:maxRecords]
	}
}

// job returns the named job, false if unknown.
func (s *store) job(name string) (ctl.JobStatus, bool) {
	i, ok := s.find(name)
	if !ok {
		return ctl.JobStatus{}, false
	}
	return s.at(i), true
}

// tail returns the job's live output, oldest first.
func (s *store) tail(job string) []string {
	if r := s.tails[job]; r != nil {
		return r.all()
	}
	return nil
}

// tailTimes returns the times of the job's live output lines, oldest
// first.
func (s *store) tailTimes(job string) []int64 {
	if r := s.tails[job]; r != nil {
		return r.allTimes()
	}
	return nil
}

// tailTotal is how many live output lines the job was ever given.
func (s *store) tailTotal(job string) int {
	if r := s.tails[job]; r != nil {
		return r.total
	}
	return 0
}

// running counts the jobs with a run in flight.
func (s *store) running() int { return s.count().running }

// apply folds one event into the store, so that the screen changes at
// once; the next snapshot from the source corrects any guess made here.
func (s *store) apply(ev ctl.WireEvent) {
	switch ev.Type {
	case ctl.EventRunOutput:
		r := s.tails[ev.Job]
		if r == nil {
			r = &ring{}
			s.tails[ev.Job] = r
		}
		for line := range strings.SplitSeq(lastLines(ev.Line, tailLines), "\n") { // several when read at once
			r.add(ev.Stream+" | "+line, ev.Time)
		}
		return
	}
	s.gen++
	switch ev.Type {
	case ctl.EventRunStarted:
		s.started(ev)
	case ctl.EventRunFinished, ctl.EventHostLost:
		s.finished(ev)
	case ctl.EventRunSkipped:
		s.skipped(ev)
	case ctl.EventJobPaused, ctl.EventJobResumed:
		s.paused(ev)
	case ctl.EventRunSlow, ctl.EventRunBeat:
		s.edit(ev.Job, func(j *ctl.JobStatus) { ctl.Apply(j, ev) })
	}
}

// lastLines is the last n lines of text (lines joined by "\n"): of a
// chunk of a chatty job's output, only those can stay in a tail.
func lastLines(text string, n int) string {
	if strings.Count(text, "\n") < n {
		return text
	}
	i := len(text)
	for range n {
		i = strings.LastIndexByte(text[:i], '\n')
	}
	return text[i+1:]
}

func (s *store) started(ev ctl.WireEvent) {
	r := s.tails[ev.Job]
	if r == nil {
		r = &ring{}
		s.tails[ev.Job] = r
	}
	r.add("── run "+ev.RunID+" started, pid "+strconv.Itoa(ev.PID)+" ──", ev.Time)
	h := &run.Holder{PID: ev.PID, Host: s.host, Job: ev.Job, RunID: ev.RunID, Since: ev.StartedAt}
	s.edit(ev.Job, func(j *ctl.JobStatus) {
		ctl.Apply(j, ev)
		if ev.Lock != "" {
			j.Holder = h
		}
	})
	found := false
	for i := range s.locks {
		if l := &s.locks[i]; l.Lock == ev.Lock {
			*l = ctl.LockStatus{Lock: l.Lock, Held: true, PID: ev.PID, Host: s.host, Job: ev.Job,
				RunID: ev.RunID, Slot: ev.Slot, Since: ev.StartedAt, SupervisorPID: l.SupervisorPID}
			found = true
		}
	}
	if !found && !s.allLocks && ev.Lock != "" { // a free lock, not kept
		s.locks = append(s.locks, ctl.LockStatus{Lock: ev.Lock, Held: true, PID: ev.PID, Host: s.host,
			Job: ev.Job, RunID: ev.RunID, Slot: ev.Slot, Since: ev.StartedAt})
	}
}

// finished is a run's end: run_finished, or host_lost (this daemon
// closed a lost host's run).
func (s *store) finished(ev ctl.WireEvent) {
	s.addRecord(run.Record{Job: ev.Job, RunID: ev.RunID, Outcome: ev.Outcome,
		ScheduledAt: ev.Slot, StartedAt: ev.StartedAt, EndedAt: ev.Time,
		ExitCode: ev.ExitCode, Reason: ev.Reason, Manual: ev.Manual, PID: ev.PID, Attempt: ev.Attempt,
		Host: ev.Host, Usage: ev.Usage.Usage()})
	if r := s.tails[ev.Job]; r != nil && !ev.StartedAt.IsZero() {
		r.add("── run "+ev.RunID+" ended: "+string(ev.Outcome)+" ──", ev.Time)
	}
	s.edit(ev.Job, func(j *ctl.JobStatus) { ctl.Apply(j, ev) })
	for k := range s.locks {
		if l := &s.locks[k]; l.Held && l.RunID == ev.RunID {
			l.Held = false
		}
	}
	if !s.allLocks {
		s.locks = heldLocks(s.locks)
	}
}

func (s *store) skipped(ev ctl.WireEvent) {
	// Like history.Writer's record of a skip: the slot is its only time, so
	// that the numbers do not change when the history is fetched again.
	r := run.Record{Job: ev.Job, RunID: ev.RunID, Outcome: run.Skipped,
		ScheduledAt: ev.Slot, Reason: ev.Reason, Manual: ev.Manual}
	if r.ScheduledAt.IsZero() {
		r.ScheduledAt = ev.Time
	}
	if h := ev.Holder; h != nil {
		r.Holder = &run.Holder{PID: h.PID, Host: h.Host, Job: h.Job, RunID: h.RunID, Since: h.Since}
	}
	s.addRecord(r)
	s.edit(ev.Job, func(j *ctl.JobStatus) { ctl.Apply(j, ev) })
}

// addRecord puts a live record in its place among the kept ones, newest
// first; a record with its identity already there (the page read after the
// store wrote it) is not added twice.
func (s *store) addRecord(r run.Record) {
	k := recKey(r)
	if slices.ContainsFunc(s.records, func(x run.Record) bool { return recKey(x) == k }) {
		return
	}
	t := sortTime(r)
	i, _ := slices.BinarySearchFunc(s.records, t, func(x run.Record, t time.Time) int { return t.Compare(sortTime(x)) })
	s.records = slices.Insert(s.records, i, r)
	s.tl.add(r)
	if len(s.records) > maxRecords {
		s.records = s.records[:maxRecords]
	}
}

// lastRecord is the job's newest finished record in the kept history.
func (s *store) lastRecord(job string) (run.Record, bool) {
	for _, r := range s.records {
		if r.Job == job && r.Outcome != run.Running {
			return r, true
		}
	}
	return run.Record{}, false
}
