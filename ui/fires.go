package ui

import (
	"container/heap"
	"math"
	"time"
)

// fire is a job's next fire as the store learnt it.
type fire struct {
	at  int64 // Unix nanoseconds
	row int32 // the job's position in the store's rows
}

// fires orders the jobs' next fires, soonest first, so that a tick finds
// the fires that passed without looking at every job. An entry whose job
// has since moved its next fire stays until it comes due, and is then
// dropped: a job's entry is pushed only when its next fire changes.
type fires []fire

func (h fires) Len() int           { return len(h) }
func (h fires) Less(i, j int) bool { return h[i].at < h[j].at }
func (h fires) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fires) Push(x any)        { *h = append(*h, x.(fire)) }
func (h *fires) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// indexFires rebuilds the order from all jobs.
func (s *store) indexFires() {
	s.fires = make(fires, 0, len(s.jobs))
	for i, j := range s.jobs {
		if j.nextRun != 0 {
			s.fires = append(s.fires, fire{at: j.nextRun, row: int32(i)})
		}
	}
	heap.Init(&s.fires)
}

// movedFire notes that a job's next fire is now j's.
func (s *store) movedFire(i int, old, j jobRow) {
	if j.nextRun != 0 && j.nextRun != old.nextRun {
		heap.Push(&s.fires, fire{at: j.nextRun, row: int32(i)})
	}
}

// passed returns the jobs whose next fire lies in (after, upTo], and
// forgets every fire up to upTo: the daemon has moved those jobs' next
// fires, which the read this starts will bring.
func (s *store) passed(after, upTo time.Time) []string {
	var names []string
	from, to := sinceNanos(after), upTo.UnixNano()
	for len(s.fires) > 0 && s.fires[0].at <= to {
		f := heap.Pop(&s.fires).(fire)
		if j := s.jobs[f.row]; j.nextRun == f.at && f.at > from {
			names = append(names, j.name)
		}
	}
	return names
}

// sinceNanos is t in Unix nanoseconds for a comparison with later
// times; the zero time (nothing checked yet) is before every time.
func sinceNanos(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}
