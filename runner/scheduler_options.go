package runner

import (
	"context"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// SchedulerOption configures a Scheduler.
type SchedulerOption func(*Scheduler)

// WithMaxSleep changes how long the loop sleeps at most between wake-ups
// (tests that simulate a year use a long one).
func WithMaxSleep(d time.Duration) SchedulerOption {
	return func(s *Scheduler) { s.maxSleep = d }
}

// WithLastSlots enables catch_up and "missed while down" records. It is
// asked once for all jobs (history's Store.LastSlots): with thousands of
// jobs, start-up makes one query rather than one per job.
func WithLastSlots(f LastSlotsFunc) SchedulerOption {
	return func(s *Scheduler) { s.lastSlots = f }
}

// WithLedger makes start-up read each job's last slot from l too, the
// slots claimed under the job's lock by every host sharing the lock
// backend: the newer of the local and the fleet's last slot is where the
// slots missed while down begin. Those are recorded only when this
// supervisor's claim of them in l wins: the first host back records them
// (and notifies) for the fleet, the others nothing. A ledger that cannot
// be read at start-up is left out: the local history decides alone.
func WithLedger(l lock.SlotLedger) SchedulerOption {
	return func(s *Scheduler) { s.ledger = l }
}

// WithUpSince says when this supervisor came up (its daemon began to
// start). A slot that came due after then was not missed while down: the
// start-up reached it late, and it is fired as a late wake-up's newest
// slot is (within LateTolerance), where a live peer that fired it first
// makes it a skip ("slot already run", "lock held") rather than a slot
// this host records as missed and claims from under that peer. Zero: every
// slot after the last one is judged as missed while down.
func WithUpSince(t time.Time) SchedulerOption {
	return func(s *Scheduler) { s.upSince = t }
}

// WithJitter replaces the draw of jitter delays, by default the hash of
// the job's name and slot (config.Job.Delay), with f of the job's jitter
// (tests).
func WithJitter(f func(max time.Duration) time.Duration) SchedulerOption {
	return func(s *Scheduler) {
		s.delay = func(j *config.Job, _ time.Time) time.Duration { return f(j.Jitter) }
	}
}

// PeersUpFunc tells since when, by this host's clock, another host of the
// fleet that is up now has been up (the earliest such start); ok is false
// when none is.
type PeersUpFunc func(ctx context.Context) (since time.Time, ok bool, err error)

// WithPeers makes start-up leave to live peers the slots missed while
// this supervisor was down: those from the earliest start of a host that
// is up now are neither recorded as missed nor claimed in the ledger, as
// that host fired them (fleet.Store.PeersUpSince, with a shared history).
// Jobs with overlap allow, which run on every host, keep their own.
func WithPeers(f PeersUpFunc) SchedulerOption {
	return func(s *Scheduler) { s.peers = f }
}

// WithParallelism lets the loop choose how many processors the process
// runs Go code on, through set (runtime.GOMAXPROCS in the daemon), up to
// most: one while fewer than busyRuns runs are in flight, most once that
// many are. A lone fire then wakes one thread, where two processors
// hand each of its steps from one thread to another (a futex wake-up
// and a context switch each); a burst gets every processor.
func WithParallelism(set func(n int), most int) SchedulerOption {
	return func(s *Scheduler) { s.procs = parallelism{set: set, most: most} }
}
