package runner

import (
	"context"
	"strings"
	"testing"

	"cronvisor/internal/base/run"
)

// TestTriggerIsManualUnderTheRules: a trigger's records say manual (no
// schedule owed it, so audit leaves it out), yet it keeps a scheduled
// fire's rules: a pause skips it, a held lock skips it, and it claims its
// slot like a scheduled fire.
func TestTriggerIsManualUnderTheRules(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		prep   func(t *testing.T, s *Supervisor, ev *events) func()
		slot   int
		forced bool
		want   run.Outcome
		reason string
	}{
		{name: "runs", slot: 0, want: run.OK},
		{name: "a pause skips it", slot: 1, want: run.Skipped, reason: "paused",
			prep: func(t *testing.T, s *Supervisor, _ *events) func() { s.Pause("t"); return func() { s.Resume("t") } }},
		{name: "forced, it goes past a pause", slot: 3, forced: true, want: run.OK,
			prep: func(t *testing.T, s *Supervisor, _ *events) func() { s.Pause("t"); return func() { s.Resume("t") } }},
		{name: "a held lock skips it", slot: 2, want: run.Skipped, reason: "lock held",
			prep: func(t *testing.T, s *Supervisor, ev *events) func() {
				ch := fireAsync(s, shJob("t", "sleep 30"), slotAt(20))
				waitRunning(t, s, ev, "t")
				return func() { s.Kill("t", ErrKilled); recv(t, ch) }
			}},
		{name: "an already run slot skips it", slot: 30, want: run.Skipped, reason: "slot already run",
			prep: func(t *testing.T, s *Supervisor, _ *events) func() {
				if f := s.Fire(ctx, shJob("t", "true"), slotAt(30), false); f.Outcome != run.OK {
					t.Fatalf("scheduled fire: %s %q", f.Outcome, f.Reason)
				}
				return func() {}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ev := newTestSupervisor(t, t.TempDir())
			if tc.prep != nil {
				defer tc.prep(t, s, ev)()
			}
			f := s.Trigger(ctx, shJob("t", "true"), slotAt(tc.slot), "trig-"+tc.name, tc.forced)
			if f.Outcome != tc.want || !strings.HasPrefix(f.Reason, tc.reason) {
				t.Fatalf("trigger: %s %q, want %s %q", f.Outcome, f.Reason, tc.want, tc.reason)
			}
			if !f.Manual {
				t.Errorf("trigger's end says manual false, want true")
			}
		})
	}
}

// TestTriggerClaimsItsSlot: a scheduled fire of the slot a trigger ran is
// skipped, as after any scheduled fire of it.
func TestTriggerClaimsItsSlot(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	if f := s.Trigger(context.Background(), shJob("t", "true"), slotAt(0), "trig", false); f.Outcome != run.OK {
		t.Fatalf("trigger: %s %q", f.Outcome, f.Reason)
	}
	if f := s.Fire(context.Background(), shJob("t", "true"), slotAt(0), false); f.Outcome != run.Skipped || !strings.HasPrefix(f.Reason, "slot already run") {
		t.Errorf("scheduled fire of the trigger's slot: %s %q, want skipped, slot already run", f.Outcome, f.Reason)
	}
}
