package runner

import (
	"context"
	"maps"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// Start-up after downtime: where each job's slots resume (the newer of
// the local history's and the fleet ledger's last slot), and what becomes
// of the slots that passed meanwhile (run once by catch_up, recorded as
// missed by one host, or left to a live peer that fired them).

// startSlots looks up every job's last slot before this process started
// in one call; nil when catch_up is not wired or the lookup failed.
func (s *Scheduler) startSlots(ctx context.Context, jobs []config.Job) map[string]time.Time {
	if s.lastSlots == nil {
		return nil
	}
	names := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if j.Sched != nil {
			names = append(names, j.Name)
		}
	}
	last, err := s.lastSlots(ctx, names)
	if err != nil {
		return nil
	}
	return s.fleetSlots(ctx, jobs, last)
}

// fleetSlots is last with each job's slot moved up to the ledger's, when
// later, or set to it when the job has none locally. A ledger that fails
// here is not asked again.
func (s *Scheduler) fleetSlots(ctx context.Context, jobs []config.Job, last map[string]time.Time) map[string]time.Time {
	if s.ledger == nil {
		return last
	}
	keys := make([]lock.SlotKey, 0, len(jobs))
	for _, j := range jobs {
		if ledgered(j) {
			keys = append(keys, lock.SlotKey{Lock: j.Lock, Job: j.Name})
		}
	}
	fleet, err := s.ledger.LastSlots(ctx, keys)
	if err != nil {
		s.ledger = nil
		return last
	}
	out := make(map[string]time.Time, len(last)+len(fleet))
	maps.Copy(out, last)
	for k, t := range fleet {
		out[k.Job] = maxTime(out[k.Job], t)
	}
	return out
}

// ledgered says whether j's slots are claimed in the ledger: a scheduled
// job that takes its lock (overlap allow takes none, and runs on every
// host).
func ledgered(j config.Job) bool {
	return j.Sched != nil && j.Overlap != config.OverlapAllow && j.Lock != ""
}

// catchUp handles the fires a job missed while no supervisor ran, after
// its last slot: the newest runs once if it is younger than catch_up, the
// rest are recorded. Slots from the start of a peer that is up now on
// are left to it (see peersFrom).
func (s *Scheduler) catchUp(ctx context.Context, j config.Job, now, last time.Time) {
	if last.IsZero() {
		return
	}
	first, newest, n := missedSlots(j, last, now)
	if n == 0 {
		return
	}
	if upTo := s.peersFrom(ctx, j, now); upTo.Before(now) {
		if first, newest, n = missedSlots(j, last, upTo); n == 0 {
			return
		}
	}
	caughtUp := j.CatchUp > 0 && now.Sub(newest) <= j.CatchUp
	if j.Enabled && (caughtUp || s.dueSinceUp(newest, now)) {
		if n > 1 {
			why := "missed while down (older than the newest missed fire, which catch_up runs)"
			if !caughtUp {
				why = "missed while down (older than the newest fire, due as cronvisor started, which runs)"
			}
			_, through, _ := missedSlots(j, last, newest.Add(-time.Nanosecond))
			s.missedWhileDown(ctx, j, first, through, n-1, why)
		}
		s.dispatch(ctx, j, newest)
		return
	}
	s.missedWhileDown(ctx, j, first, newest, n, "missed while down (beyond catch_up "+j.CatchUp.String()+")")
}

// dueSinceUp says whether slot came due after this supervisor came up
// (WithUpSince) and is no later at now than a fire may start: a fire the
// start-up reached late, not one missed while down.
func (s *Scheduler) dueSinceUp(slot, now time.Time) bool {
	return !s.upSince.IsZero() && slot.After(s.upSince) && now.Sub(slot) <= LateTolerance
}

// peersFrom is the last instant of j's slots that this host accounts for
// after its downtime: just before the earliest start of a peer that is up
// now, whose scheduler fired (ran, skipped or itself recorded as missed)
// every slot from then on, so that none of those is missed, nor this
// host's to claim (it may be one the peer has queued); now without such a
// peer. An overlap allow job is no exception: with a shared history its
// slots have one owner too (see package owner). Asked once, at the first
// job with missed slots; a failed question answers now.
func (s *Scheduler) peersFrom(ctx context.Context, j config.Job, now time.Time) time.Time {
	if s.peers == nil {
		return now
	}
	if !s.peersAsked {
		s.peersAsked = true
		if since, ok, err := s.peers(ctx); err == nil && ok {
			s.peersSince = since
		}
	}
	if s.peersSince.IsZero() || !s.peersSince.Before(now) {
		return now
	}
	return s.peersSince.Add(-time.Nanosecond)
}

// missedWhileDown records the n slots from first through through as one
// missed skip, unless the ledger gives them to another host: then that
// host's record is the fleet's, and this one records nothing. A claim
// that fails records them: a second record beats none.
func (s *Scheduler) missedWhileDown(ctx context.Context, j config.Job, first, through time.Time, n int, reason string) {
	sk := s.missedSkip(j, first, n, reason)
	if s.ledger != nil && ledgered(j) {
		won, _, err := s.ledger.ClaimMissed(ctx, lock.MissedClaim{Lock: j.Lock, Job: j.Name,
			First: first, Through: through, RunID: sk.RunID})
		if err == nil && !won {
			return
		}
	}
	s.firer.Skip(sk)
}
