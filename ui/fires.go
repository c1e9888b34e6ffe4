package ui

import (
	"container/heap"
	"time"

	"cronvisor/ctl"
)

// fire is a job's next fire as the store learnt it.
type fire struct {
	at  time.Time
	job string
}

// fires orders the jobs' next fires, soonest first, so that a tick finds
// the fires that passed without looking at every job. An entry whose job
// has since moved its next fire stays until it comes due, and is then
// dropped: a job's entry is pushed only when its next fire changes.
type fires []fire

func (h fires) Len() int           { return len(h) }
func (h fires) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
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
	s.fires = s.fires[:0]
	for _, j := range s.jobs {
		if !j.NextRun.IsZero() {
			s.fires = append(s.fires, fire{at: j.NextRun, job: j.Name})
		}
	}
	heap.Init(&s.fires)
}

// movedFire notes that a job's next fire is now j's.
func (s *store) movedFire(old, j ctl.JobStatus) {
	if !j.NextRun.IsZero() && !j.NextRun.Equal(old.NextRun) {
		heap.Push(&s.fires, fire{at: j.NextRun, job: j.Name})
	}
}

// passed returns the jobs whose next fire lies in (after, upTo], and
// forgets every fire up to upTo: the daemon has moved those jobs' next
// fires, which the read this starts will bring.
func (s *store) passed(after, upTo time.Time) []string {
	var names []string
	for len(s.fires) > 0 && !s.fires[0].at.After(upTo) {
		f := heap.Pop(&s.fires).(fire)
		j, ok := s.job(f.job)
		if ok && j.NextRun.Equal(f.at) && f.at.After(after) {
			names = append(names, f.job)
		}
	}
	return names
}
