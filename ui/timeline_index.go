package ui

import (
	"slices"
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// tlJobMax is the most spans the timeline keeps of one job, and the most
// one read of a job's window asks for: a job firing every second has
// 86,400 records a day, of which a 200-column row can show 200 cells.
const tlJobMax = 500

// tlPage is the most records the first read of a window asks for, of
// all jobs at once: a quiet history is then whole in one call.
const tlPage = 2000

// span is what the timeline keeps of one finished record: its times as
// Unix nanoseconds (0: none), its outcome and what the cursor's line and
// the detail say of it. A running run is no span: the job's status has
// it, kept live by the events.
type span struct {
	slot, start, end int64
	runID, reason    string
	host             string // shared by the index's interner
	outcome          run.Outcome
	attempt          int32
	manual           bool
}

// key is the span's sort key: the store's "at" (slot, else start, else end).
func (s span) key() int64 {
	switch {
	case s.slot != 0:
		return s.slot
	case s.start != 0:
		return s.start
	}
	return s.end
}

// same reports whether s and r name one record (recKey's identity).
func (s span) same(r span) bool {
	return s.runID == r.runID && max(s.attempt, 1) == max(r.attempt, 1) &&
		(s.outcome == run.Skipped) == (r.outcome == run.Skipped)
}

// record is the span as a history record, for the job's detail, which
// reads the job's page again and finds it there by its identity.
func (s span) record(job string) run.Record {
	return run.Record{Job: job, RunID: s.runID, Outcome: s.outcome, ScheduledAt: unixTime(s.slot),
		StartedAt: unixTime(s.start), EndedAt: unixTime(s.end), Reason: s.reason, Host: s.host,
		Attempt: int(s.attempt), Manual: s.manual}
}

// mark is the kind of point a span is drawn as when it did not run.
type mark uint8

const (
	markNone mark = iota
	markSkip
	markMissed
	markHostLost
)

// markOf tells a skip, a missed fire and a run a peer closed because its
// host was lost apart; the records say so only in their reasons.
func (s span) markOf() mark {
	switch {
	case s.outcome == run.Skipped && strings.HasPrefix(s.reason, "missed"):
		return markMissed
	case s.outcome == run.Skipped:
		return markSkip
	case s.outcome == run.Interrupted && strings.HasPrefix(s.reason, "host lost"):
		return markHostLost
	}
	return markNone
}

// tlIndex is the timeline's history: each job's finished records, oldest
// first, fed by the same events and pages as the store's records, and by
// reads of a window's history (timeline_fetch.go). It keeps no open runs.
type tlIndex struct {
	jobs  map[string][]span
	hosts map[string][]string // the hosts each job's spans name
	many  bool                // the spans name more than one host: a shared history
	strs  interner
	// covered is, by job, from when the index holds all of the job's
	// records (Unix ns; absent: not read); coveredAll is the same for
	// every job at once. asked and askedAll are the window starts already
	// asked for, so that a read that came back short is not asked again.
	covered, asked       map[string]int64
	coveredAll, askedAll int64
	// floor is, by job, its oldest span's key once older ones were
	// dropped (tlJobMax): no read covers what lies before it.
	floor   map[string]int64
	pending map[string]bool // jobs whose read is under way; "" the read of all
	gen     int             // counts the changes, for the lanes
}

func newTLIndex() *tlIndex {
	return &tlIndex{jobs: map[string][]span{}, hosts: map[string][]string{}, strs: interner{},
		covered: map[string]int64{}, asked: map[string]int64{}, floor: map[string]int64{}, pending: map[string]bool{}}
}

// spanOf is r as the index keeps it.
func (x *tlIndex) spanOf(r run.Record) span {
	return span{slot: nanos(r.ScheduledAt), start: nanos(r.StartedAt), end: nanos(r.EndedAt),
		runID: r.RunID, reason: r.Reason, host: x.strs.str(r.Host), outcome: run.Outcome(x.strs.str(string(r.Outcome))),
		attempt: int32(r.Attempt), manual: r.Manual}
}

// add puts a finished record in its job's place; a record already there
// (the stream's and a page's copy of one run) is replaced, the page's
// having more fields filled in.
func (x *tlIndex) add(r run.Record) {
	if r.Outcome == run.Running || r.Job == "" {
		return
	}
	s := x.spanOf(r)
	spans := x.jobs[r.Job]
	k := s.key()
	i, _ := slices.BinarySearchFunc(spans, k, func(e span, k int64) int { return cmpInt(e.key(), k) })
	for j := i; j < len(spans) && spans[j].key() == k; j++ {
		if spans[j].same(s) {
			spans[j] = s
			return
		}
	}
	spans = slices.Insert(spans, i, s)
	if len(spans) > tlJobMax {
		spans = slices.Delete(spans, 0, len(spans)-tlJobMax)
		x.floor[r.Job] = spans[0].key() // what was older is gone
	}
	x.jobs[r.Job] = spans
	x.gen++
	if s.host != "" && !slices.Contains(x.hosts[r.Job], s.host) {
		x.hosts[r.Job] = append(x.hosts[r.Job], s.host)
		x.many = x.many || x.countHosts() > 1
	}
}

// countHosts is how many hosts the spans name, up to 2.
func (x *tlIndex) countHosts() int {
	first := ""
	for _, hs := range x.hosts {
		for _, h := range hs {
			if first == "" {
				first = h
			} else if h != first {
				return 2
			}
		}
	}
	if first == "" {
		return 0
	}
	return 1
}

// addAll adds a page of records.
func (x *tlIndex) addAll(recs []run.Record) {
	for _, r := range recs {
		x.add(r)
	}
}

// since is from when the index holds all of job's records: the earlier
// of the two reads' (each holds everything from its start on), no
// earlier than what was dropped; 0 when neither covers it.
func (x *tlIndex) since(job string) int64 {
	c, ok := x.covered[job]
	var from int64
	switch {
	case x.coveredAll == 0 && !ok:
		return 0
	case x.coveredAll == 0:
		from = c
	case !ok:
		from = x.coveredAll
	default:
		from = min(c, x.coveredAll)
	}
	return max(from, x.floor[job])
}

// inWindow is job's spans that may show between from and to: those whose
// key falls in it, and the few before it whose run reaches into it.
func (x *tlIndex) inWindow(job string, from, to int64) []span {
	spans := x.jobs[job]
	i, _ := slices.BinarySearchFunc(spans, from, func(e span, k int64) int { return cmpInt(e.key(), k) })
	for back := 0; i > 0 && back < 4 && spans[i-1].end > from; back++ {
		i--
	}
	j, _ := slices.BinarySearchFunc(spans, to+1, func(e span, k int64) int { return cmpInt(e.key(), k) })
	return spans[i:max(i, j)]
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// covers records that a read from since came back: limit records or
// fewer. A full read holds everything only from its oldest record on.
func coverage(since time.Time, recs []run.Record, limit int) int64 {
	if len(recs) < limit || len(recs) == 0 {
		return max(nanos(since), 1)
	}
	return max(nanos(sortTime(recs[len(recs)-1])), 1)
}
