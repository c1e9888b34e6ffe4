package runner

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// peersUp answers WithPeers' question with since (zero: no peer up) or
// err, counting the questions.
func peersUp(since time.Time, err error, asked *atomic.Int32) PeersUpFunc {
	return func(context.Context) (time.Time, bool, error) {
		asked.Add(1)
		return since, !since.IsZero(), err
	}
}

// A host back from downtime leaves to a peer up now the slots from that
// peer's start on: it records none of them as missed and claims none in
// the ledger (a claim could cancel a fire the peer has queued); the
// slots before any live peer's start stay its own to claim.
func TestSchedulerStartUpLeavesSlotsToLivePeers(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return time.Date(2026, 5, 1, h, m, 0, 0, time.UTC) }
	tests := []struct {
		name      string
		peer      time.Time
		peerErr   error
		overlap   config.Overlap
		catchUp   time.Duration
		wantFirst time.Time // the missed record's first slot; zero: none
		wantN     int
		wantClaim *lock.MissedClaim
		wantFires int
	}{
		{name: "no peer up: the ledger decides", wantFirst: at(10, 0), wantN: 3,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(12, 0)}},
		{name: "a peer up since before the gap", peer: at(9, 30)},
		{name: "a peer up since before the gap, catch_up", peer: at(9, 30), catchUp: time.Hour},
		{name: "a peer up since mid-gap: the slots before it", peer: at(10, 30), wantFirst: at(10, 0), wantN: 1,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(10, 0)}},
		{name: "a peer up since just after a slot", peer: at(11, 0).Add(time.Nanosecond), wantFirst: at(10, 0), wantN: 2,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(11, 0)}},
		{name: "a peer up since the newest slot's instant", peer: at(12, 0), wantFirst: at(10, 0), wantN: 2,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(11, 0)}},
		{name: "a peer up since after now (its clock)", peer: now.Add(time.Minute), wantFirst: at(10, 0), wantN: 3,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(12, 0)}},
		{name: "the hosts unreadable: the ledger decides", peerErr: errors.New("server down"), wantFirst: at(10, 0), wantN: 3,
			wantClaim: &lock.MissedClaim{First: at(10, 0), Through: at(12, 0)}},
		{name: "overlap allow has one owner too: left to the peer", peer: at(9, 30), overlap: config.OverlapAllow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			led := newFakeLedger(nil)
			j := testJob(t, "sync", "0 * * * *", "UTC")
			j.CatchUp = tc.catchUp
			if tc.overlap != "" {
				j.Overlap = tc.overlap
			}
			var asked atomic.Int32
			h := startHarness(t, now, []config.Job{j}, WithLastSlots(localSlots(map[string]time.Time{"sync": at(9, 0)})),
				WithLedger(led), WithPeers(peersUp(tc.peer, tc.peerErr, &asked)))
			h.sched.WaitAll()
			skips := h.rec.skipsOf("sync")
			checkMissedSkip(t, skips, tc.wantFirst, tc.wantN)
			won := led.won()
			if tc.wantClaim == nil && len(won) != 0 {
				t.Errorf("claims %+v, want none", won)
			}
			if c := tc.wantClaim; c != nil && (len(won) != 1 || !won[0].First.Equal(c.First) || !won[0].Through.Equal(c.Through)) {
				t.Errorf("claims %+v, want one of %s through %s", won, c.First, c.Through)
			}
			if n := len(h.rec.firesOf("sync")); n != tc.wantFires {
				t.Errorf("%d fires, want %d", n, tc.wantFires)
			}
			if asked.Load() != 1 {
				t.Errorf("hosts asked %d times, want 1", asked.Load())
			}
		})
	}
}

// The hosts are asked once at start-up, whatever the number of jobs with
// missed slots, and not for jobs with none.
func TestSchedulerStartUpAsksThePeersOnce(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	var jobs []config.Job
	last := map[string]time.Time{}
	for _, name := range []string{"a", "b", "c"} {
		jobs = append(jobs, testJob(t, name, "0 * * * *", "UTC"))
		last[name] = now.Add(-3 * time.Hour)
	}
	var asked atomic.Int32
	h := startHarness(t, now, jobs, WithLastSlots(localSlots(last)), WithLedger(newFakeLedger(nil)),
		WithPeers(peersUp(now.Add(-5*time.Hour), nil, &asked)))
	h.sched.WaitAll()
	for _, j := range jobs {
		if skips := h.rec.skipsOf(j.Name); len(skips) != 0 {
			t.Errorf("%s recorded %+v, want nothing: a peer was up throughout", j.Name, skips)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("hosts asked %d times for three jobs, want once", asked.Load())
	}
	var none atomic.Int32
	h = startHarness(t, now, jobs, WithLastSlots(localSlots(map[string]time.Time{"a": now.Add(-time.Minute)})),
		WithPeers(peersUp(now.Add(-5*time.Hour), nil, &none)))
	h.sched.WaitAll()
	if none.Load() != 0 {
		t.Errorf("hosts asked %d times with nothing missed, want never", none.Load())
	}
}

// A slot that came due while the supervisor was starting (after
// WithUpSince) is fired late, as a late wake-up's is, not recorded as
// missed while down nor claimed in the ledger: a peer that fired it on
// time makes it a skip, never a missed slot of the fleet. Slots before
// the start stay missed while down.
func TestSchedulerStartUpFiresSlotsDueWhileStarting(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 5, 1, h, m, 0, 0, time.UTC) }
	now := at(12, 0).Add(80 * time.Millisecond)
	tests := []struct {
		name      string
		up        time.Time
		last      time.Time
		wantFirst time.Time // the missed record's first slot; zero: none
		wantClaim *lock.MissedClaim
		wantFires []time.Time
	}{
		{name: "up just before the slot: fired", up: at(12, 0).Add(-50 * time.Millisecond), last: at(11, 0),
			wantFires: []time.Time{at(12, 0)}},
		{name: "up just after the slot: missed while down", up: at(12, 0).Add(time.Millisecond), last: at(11, 0),
			wantFirst: at(12, 0), wantClaim: &lock.MissedClaim{First: at(12, 0), Through: at(12, 0)}},
		{name: "down over a slot, up before the next: the older missed, the newer fired", up: at(11, 30), last: at(10, 0),
			wantFirst: at(11, 0), wantClaim: &lock.MissedClaim{First: at(11, 0), Through: at(11, 0)}, wantFires: []time.Time{at(12, 0)}},
		{name: "no start known: missed while down", last: at(11, 0),
			wantFirst: at(12, 0), wantClaim: &lock.MissedClaim{First: at(12, 0), Through: at(12, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			led := newFakeLedger(nil)
			j := testJob(t, "sync", "0 * * * *", "UTC")
			opts := []SchedulerOption{WithLastSlots(localSlots(map[string]time.Time{"sync": tc.last})), WithLedger(led)}
			if !tc.up.IsZero() {
				opts = append(opts, WithUpSince(tc.up))
			}
			h := startHarness(t, now, []config.Job{j}, opts...)
			h.sched.WaitAll()
			checkMissedSkip(t, h.rec.skipsOf("sync"), tc.wantFirst, 1)
			won := led.won()
			if tc.wantClaim == nil && len(won) != 0 {
				t.Errorf("claims %+v, want none", won)
			}
			if c := tc.wantClaim; c != nil && (len(won) != 1 || !won[0].First.Equal(c.First) || !won[0].Through.Equal(c.Through)) {
				t.Errorf("claims %+v, want one of %s through %s", won, c.First, c.Through)
			}
			if fires := h.rec.firesOf("sync"); !slices.EqualFunc(fires, tc.wantFires, time.Time.Equal) {
				t.Errorf("fires %v, want %v", fires, tc.wantFires)
			}
		})
	}
}
