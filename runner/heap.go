package runner

import (
	"time"

	"cronvisor/internal/config"
)

// entry is one job in the heap. It points into the job list given to Run
// or Reload rather than copying the job: with thousands of jobs the
// copies were a large part of the daemon's live heap.
type entry struct {
	job   *config.Job
	slot  time.Time // nominal fire instant
	due   time.Time // slot plus this fire's jitter
	index int
}

type entryHeap []*entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
