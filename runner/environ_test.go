package runner

import (
	"context"
	"strings"
	"testing"
)

// TestFireEnvironmentOverTheLimitExits126: an environment execve refuses
// (E2BIG) is a start failure with 126, as the README documents for a
// command that could not be started, not 127 (not found).
func TestFireEnvironmentOverTheLimitExits126(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	j := shJob("big", "true")
	j.Env = map[string]string{"BIG": strings.Repeat("x", 3<<20)}
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != OutcomeError || f.ExitCode == nil || *f.ExitCode != 126 {
		t.Fatalf("outcome %s, exit %v (%s), want error with 126", f.Outcome, f.ExitCode, f.Reason)
	}
	if !strings.Contains(f.Reason, "argument list too long") {
		t.Errorf("reason %q, want it to name E2BIG", f.Reason)
	}
}
