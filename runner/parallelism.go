package runner

import "sync/atomic"

// busyRuns is the number of runs in flight from which the process runs on
// every processor it may use (WithParallelism); it goes back to one
// below half of it. A hundred fires at one instant still fit on one
// processor; a thousand do not.
const busyRuns = 256

// parallelism follows the runs in flight and sets the processors to use.
// Only the scheduler's loop calls adjust; inFlight changes anywhere.
type parallelism struct {
	set      func(n int) // nil: the process's own setting stays
	most     int
	now      int // what set was last told; 0: nothing yet
	inFlight atomic.Int64
}

// adjust tells set the processors the runs in flight call for, if that
// changed.
func (p *parallelism) adjust() {
	if p.set == nil || p.most <= 1 {
		return
	}
	want := p.now
	switch n := p.inFlight.Load(); {
	case n >= busyRuns:
		want = p.most
	case n < busyRuns/2 || want == 0:
		want = 1
	}
	if want != p.now {
		p.set(want)
		p.now = want
	}
}

// restore gives the process every processor back (the loop has ended).
func (p *parallelism) restore() {
	if p.set != nil && p.now != 0 && p.now != p.most {
		p.set(p.most)
		p.now = p.most
	}
}
