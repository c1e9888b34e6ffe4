package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// TestRefusedAdmissionRunsNothingAndFreesTheLock: a run the recorder does
// not admit never execs, is recorded as an error with the recorder's
// reason, and leaves the lock free for the next fire.
func TestRefusedAdmissionRunsNothingAndFreesTheLock(t *testing.T) {
	for _, overlap := range []config.Overlap{config.OverlapSkip, config.OverlapAllow} {
		t.Run(string(overlap), func(t *testing.T) {
			rec := newFakeRecorder()
			rec.admit = func(string) error { return errors.New("history backlog full") }
			s, ev := newRecordedSupervisor(t, t.TempDir(), rec)
			j := shJob("a", "true")
			j.Overlap = overlap
			f := s.Fire(context.Background(), j, slotAt(0), false)
			if f.Outcome != run.Error || !strings.Contains(f.Reason, "not started: history backlog full") {
				t.Fatalf("refused fire: %s %q", f.Outcome, f.Reason)
			}
			if _, ok := ev.started(f.RunID); ok {
				t.Fatal("a refused run started")
			}
			if got := rec.ends(); len(got) != 1 || got[0].RunID != f.RunID || got[0].Outcome != run.Error {
				t.Fatalf("recorded ends %+v, want the refusal", got)
			}
			rec.admit = nil
			if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != run.OK {
				t.Fatalf("next fire after a refusal: %s %q (lock left held?)", f.Outcome, f.Reason)
			}
		})
	}
}
