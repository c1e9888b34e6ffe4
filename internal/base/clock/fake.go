package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a manually driven clock for tests. Timers fire when Set or Advance
// moves the time to or past their deadline; a jump backwards fires nothing,
// like a wall clock stepped back.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	waiters []chan struct{}
}

// NewFake returns a fake clock reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer makes a timer that fires at Now()+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, c: make(chan time.Time, 1)}
	t.when = f.now.Add(d)
	t.active = true
	f.timers = append(f.timers, t)
	f.fireLocked()
	return t
}

// Advance moves the clock forward by d, firing due timers.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the clock to t (forwards or backwards), firing due timers.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
	f.fireLocked()
}

// Step moves the wall clock by d without moving timers' remaining
// durations, as an NTP step or settimeofday does to a real clock: Go timers
// run on the monotonic clock and fire after their duration regardless.
func (f *Fake) Step(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for _, t := range f.timers {
		t.when = t.when.Add(d)
	}
}

// NextDeadline returns the earliest deadline of an active timer.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best time.Time
	found := false
	for _, t := range f.timers {
		if t.active && (!found || t.when.Before(best)) {
			best, found = t.when, true
		}
	}
	return best, found
}

// Timers returns the number of active timers.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.active {
			n++
		}
	}
	return n
}

// TimerChanged returns a channel closed the next time a timer is reset, so tests can wait for the code under test to re-arm without sleeping.
func (f *Fake) TimerChanged() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	return ch
}

func (f *Fake) notifyLocked() {
	for _, w := range f.waiters {
		close(w)
	}
	f.waiters = nil
}

func (f *Fake) fireLocked() {
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].when.Before(f.timers[j].when) })
	kept := f.timers[:0]
	for _, t := range f.timers {
		if !t.active {
			continue
		}
		if !t.when.After(f.now) {
			t.active = false
			select {
			case t.c <- f.now:
			default:
			}
			continue
		}
		kept = append(kept, t)
	}
	f.timers = kept
}

type fakeTimer struct {
	clock  *Fake
	c      chan time.Time
	when   time.Time
	active bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	was := t.active
	t.when = f.now.Add(d)
	if !was {
		t.active = true
		f.timers = append(f.timers, t)
	}
	f.fireLocked()
	f.notifyLocked()
	return was
}
