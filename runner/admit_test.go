package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cronvisor/config"
)

// TestRefusedAdmissionRunsNothingAndFreesTheLock: a run the admission check
// refuses never execs, is recorded as an error with the check's reason, and
// leaves the lock free for the next fire.
func TestRefusedAdmissionRunsNothingAndFreesTheLock(t *testing.T) {
	for _, overlap := range []config.Overlap{config.OverlapSkip, config.OverlapAllow} {
		t.Run(string(overlap), func(t *testing.T) {
			refuse := true
			s, ev := newTestSupervisor(t, t.TempDir(), WithAdmission(func(string) error {
				if refuse {
					return errors.New("history backlog full")
				}
				return nil
			}))
			j := shJob("a", "true")
			j.Overlap = overlap
			f := s.Fire(context.Background(), j, slotAt(0), false)
			if f.Outcome != OutcomeError || !strings.Contains(f.Reason, "not started: history backlog full") {
				t.Fatalf("refused fire: %s %q", f.Outcome, f.Reason)
			}
			if _, ok := ev.started(f.RunID); ok {
				t.Fatal("a refused run started")
			}
			refuse = false
			if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != OutcomeOK {
				t.Fatalf("next fire after a refusal: %s %q (lock left held?)", f.Outcome, f.Reason)
			}
		})
	}
}
