package runner

import (
	"context"
	"sync"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// fakeOwnership answers Slot with mine, counting the asks and the dones.
type fakeOwnership struct {
	mine bool

	mu          sync.Mutex
	asked, done int
}

func (o *fakeOwnership) Slot(_ context.Context, _ *config.Job) (bool, func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked++
	return o.mine, func() { o.mu.Lock(); o.done++; o.mu.Unlock() }
}

func TestOwnedFires(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mine    bool
		manual  bool
		outcome run.Outcome
		asked   int
		events  int
	}{
		{"the owner runs it", true, false, run.OK, 1, 2},
		{"another host's slot: no lock, no record, no event", false, false, run.Skipped, 1, 0},
		{"a manual run is not asked", false, true, run.OK, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own := &fakeOwnership{mine: tc.mine}
			rec := newFakeRecorder()
			s, ev := newRecordedSupervisor(t, t.TempDir(), rec, WithOwnership(own))
			end := s.Fire(context.Background(), shJob("o", "true"), slotAt(0), tc.manual)
			if end.Outcome != tc.outcome {
				t.Errorf("outcome %s (%s), want %s", end.Outcome, end.Reason, tc.outcome)
			}
			if own.asked != tc.asked || (tc.mine && own.done != 1) {
				t.Errorf("asked %d, done %d; want %d asked and a done for each fire let through", own.asked, own.done, tc.asked)
			}
			ev.mu.Lock()
			n := len(ev.all)
			ev.mu.Unlock()
			if n != tc.events {
				t.Errorf("%d events, want %d", n, tc.events)
			}
			rec.mu.Lock()
			records := len(rec.events)
			rec.mu.Unlock()
			if !tc.mine && !tc.manual && records != 0 {
				t.Errorf("%d records of a slot left to its owner, want none", records)
			}
			if s.Starting() != 0 {
				t.Errorf("Starting() = %d after the fire, want 0", s.Starting())
			}
		})
	}
}
