package runner

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// fakeLedger is a fleet's slot ledger in memory: each job's cursor, and
// the missed claims made, won or lost.
type fakeLedger struct {
	mu       sync.Mutex
	cursor   map[lock.SlotKey]time.Time
	claims   []lock.MissedClaim // the winning ones
	asked    [][]lock.SlotKey
	readErr  error
	claimErr error
	// raced: another host, back at the same moment, claimed first
	// after this one read the cursors.
	raced bool
}

func newFakeLedger(cursor map[lock.SlotKey]time.Time) *fakeLedger {
	if cursor == nil {
		cursor = map[lock.SlotKey]time.Time{}
	}
	return &fakeLedger{cursor: cursor}
}

func (f *fakeLedger) LastSlots(_ context.Context, keys []lock.SlotKey) (map[lock.SlotKey]time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, keys)
	if f.readErr != nil {
		return nil, f.readErr
	}
	out := map[lock.SlotKey]time.Time{}
	for _, k := range keys {
		if t, ok := f.cursor[k]; ok {
			out[k] = t
		}
	}
	return out, nil
}

func (f *fakeLedger) ClaimMissed(_ context.Context, m lock.MissedClaim) (bool, lock.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claimErr != nil {
		return false, lock.Record{}, f.claimErr
	}
	k := lock.SlotKey{Lock: m.Lock, Job: m.Job}
	if c, ok := f.cursor[k]; f.raced || ok && !c.Before(m.First) {
		return false, lock.Record{Holder: run.Holder{Job: m.Job, RunID: "the winner's"}}, nil
	}
	f.cursor[k] = m.Through
	f.claims = append(f.claims, m)
	return true, lock.Record{}, nil
}

func (f *fakeLedger) won() []lock.MissedClaim {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]lock.MissedClaim(nil), f.claims...)
}

func localSlots(m map[string]time.Time) LastSlotsFunc {
	return func(context.Context, []string) (map[string]time.Time, error) { return m, nil }
}

// Start-up takes the newer of the local and the fleet's last slot, and
// records the slots missed after it only when its claim of them wins.
func TestSchedulerStartUpLedger(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC) }
	key := lock.SlotKey{Lock: "sync", Job: "sync"}
	tests := []struct {
		name      string
		local     map[string]time.Time
		fleet     map[lock.SlotKey]time.Time
		readErr   error
		claimErr  error
		raced     bool
		catchUp   time.Duration
		wantFirst time.Time // the missed record's first slot; zero: no record
		wantN     int
		wantClaim *lock.MissedClaim
		wantFires int
	}{
		{name: "the fleet's slot is newer", local: map[string]time.Time{"sync": at(8)}, fleet: map[lock.SlotKey]time.Time{key: at(10)},
			wantFirst: at(11), wantN: 2, wantClaim: &lock.MissedClaim{First: at(11), Through: at(12)}},
		{name: "the local slot is newer", local: map[string]time.Time{"sync": at(10)}, fleet: map[lock.SlotKey]time.Time{key: at(8)},
			wantFirst: at(11), wantN: 2, wantClaim: &lock.MissedClaim{First: at(11), Through: at(12)}},
		{name: "no local slot: the fleet's", fleet: map[lock.SlotKey]time.Time{key: at(11)},
			wantFirst: at(12), wantN: 1, wantClaim: &lock.MissedClaim{First: at(12), Through: at(12)}},
		{name: "another host claimed them", local: map[string]time.Time{"sync": at(10)}, fleet: map[lock.SlotKey]time.Time{key: at(12)}},
		{name: "another host claimed them meanwhile", local: map[string]time.Time{"sync": at(10)}, raced: true},
		{name: "catch_up runs the newest, claims the rest", local: map[string]time.Time{"sync": at(9)}, catchUp: time.Hour,
			wantFirst: at(10), wantN: 2, wantClaim: &lock.MissedClaim{First: at(10), Through: at(11)}, wantFires: 1},
		{name: "ledger unreadable: the local slot alone", local: map[string]time.Time{"sync": at(10)}, fleet: map[lock.SlotKey]time.Time{key: at(12)},
			readErr: errors.New("server down"), wantFirst: at(11), wantN: 2},
		{name: "claim failed: recorded all the same", local: map[string]time.Time{"sync": at(10)},
			claimErr: errors.New("server down"), wantFirst: at(11), wantN: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			led := newFakeLedger(tc.fleet)
			led.readErr, led.claimErr, led.raced = tc.readErr, tc.claimErr, tc.raced
			j := testJob(t, "sync", "0 * * * *", "UTC")
			j.CatchUp = tc.catchUp
			h := startHarness(t, now, []config.Job{j}, WithLastSlots(localSlots(tc.local)), WithLedger(led))
			h.sched.WaitAll()
			skips := h.rec.skipsOf("sync")
			checkMissedSkip(t, skips, tc.wantFirst, tc.wantN)
			won := led.won()
			if tc.wantClaim == nil && len(won) != 0 {
				t.Errorf("claims %+v, want none", won)
			}
			if c := tc.wantClaim; c != nil && (len(won) != 1 || !won[0].First.Equal(c.First) || !won[0].Through.Equal(c.Through) ||
				won[0].Lock != "sync" || won[0].RunID != skips[0].RunID) {
				t.Errorf("claims %+v, want one of %s through %s by the skip's run id", won, c.First, c.Through)
			}
			if n := len(h.rec.firesOf("sync")); n != tc.wantFires {
				t.Errorf("%d fires, want %d", n, tc.wantFires)
			}
		})
	}
}

// checkMissedSkip fails t unless skips is nothing (wantFirst zero) or
// one missed skip from wantFirst standing for wantN fires.
func checkMissedSkip(t *testing.T, skips []run.Skip, wantFirst time.Time, wantN int) {
	t.Helper()
	switch {
	case wantFirst.IsZero() && len(skips) != 0:
		t.Errorf("recorded %+v, want nothing", skips)
	case !wantFirst.IsZero() && (len(skips) != 1 || !skips[0].Slot.Equal(wantFirst) || skips[0].Class != run.ClassMissed):
		t.Errorf("recorded %+v, want one missed skip from %s", skips, wantFirst)
	case wantN > 1 && !containsCount(skips[0].Reason, wantN):
		t.Errorf("reason %q, want %d fires", skips[0].Reason, wantN)
	}
}

func containsCount(reason string, n int) bool {
	return strings.Contains(reason, "("+strconv.Itoa(n)+" fires from")
}

// Two supervisors back at once after every host was down: the first to
// claim records the missed slots, the other nothing.
func TestSchedulerLedgerOneRecordForTheFleet(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	last := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	led := newFakeLedger(nil)
	j := testJob(t, "sync", "0 * * * *", "UTC")
	var recorded int
	for _, host := range []string{"host-a", "host-b"} {
		h := startHarness(t, now, []config.Job{j}, WithLastSlots(localSlots(map[string]time.Time{"sync": last})), WithLedger(led))
		h.sched.WaitAll()
		h.close()
		skips := h.rec.skipsOf("sync")
		recorded += len(skips)
		if want := map[string]int{"host-a": 1, "host-b": 0}[host]; len(skips) != want {
			t.Errorf("%s recorded %+v, want %d missed skip(s)", host, skips, want)
		}
	}
	if won := led.won(); recorded != 1 || len(won) != 1 {
		t.Errorf("%d records, claims %+v; want one of each", recorded, won)
	}
}

// A job that takes no lock (overlap allow) runs on every host: its
// missed slots are each host's own, and the ledger is not asked.
func TestSchedulerLedgerSkipsUnlockedJobs(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	led := newFakeLedger(map[lock.SlotKey]time.Time{{Lock: "free", Job: "free"}: now})
	j := testJob(t, "free", "0 * * * *", "UTC")
	j.Overlap = config.OverlapAllow
	h := startHarness(t, now, []config.Job{j}, WithLastSlots(localSlots(map[string]time.Time{"free": now.Add(-3 * time.Hour)})), WithLedger(led))
	h.sched.WaitAll()
	if skips := h.rec.skipsOf("free"); len(skips) != 1 || len(led.won()) != 0 {
		t.Errorf("recorded %+v, claims %+v; want one local record, no claim", skips, led.won())
	}
	if len(led.asked) != 1 || len(led.asked[0]) != 0 {
		t.Errorf("ledger asked for %v, want no key", led.asked)
	}
}
