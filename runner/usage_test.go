package runner

import (
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/proc"
)

// TestFinishedCarriesUsage: what proc.Run measured goes into the End the
// supervisor records and emits, and an OOM kill says so in the reason.
func TestFinishedCarriesUsage(t *testing.T) {
	measured := run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 120 << 20}
	oom := measured
	oom.OOMKilled = true
	tests := []struct {
		name        string
		res         proc.Result
		wantOutcome run.Outcome
		wantReason  string
	}{
		{"not measured", proc.Result{Outcome: proc.Exited, ExitCode: 0}, run.OK, ""},
		{"measured", proc.Result{Outcome: proc.Exited, ExitCode: 0, Usage: measured}, run.OK, ""},
		{"killed by the OOM killer", proc.Result{Outcome: proc.Exited, ExitCode: 137, Signal: "SIGKILL", Usage: oom},
			run.Failed, run.OOMReason + "; ended by signal SIGKILL"},
		{"OOM kill of a child, main exited 0", proc.Result{Outcome: proc.Exited, ExitCode: 0, Usage: oom}, run.OK, ""},
		{"timed out", proc.Result{Outcome: proc.TimedOut, ExitCode: -1, Usage: measured}, run.Timeout, "exceeded timeout 1m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fire{job: config.Job{Name: "j", Timeout: time.Minute}, runID: "r1", attempt: 1}
			end := finished(f, tc.res)
			if end.Usage != tc.res.Usage {
				t.Errorf("Usage = %+v, want %+v", end.Usage, tc.res.Usage)
			}
			if end.Outcome != tc.wantOutcome || end.Reason != tc.wantReason {
				t.Errorf("outcome, reason = %s, %q; want %s, %q", end.Outcome, end.Reason, tc.wantOutcome, tc.wantReason)
			}
		})
	}
}

// TestEndedNeverBeforeTheRecordedStart: a keeper's sight of an exit
// counts back from now (the process's own end under a frozen
// supervisor), but a process that exits at once can be seen to before
// the supervisor noted its start: the record's end is then its start.
func TestEndedNeverBeforeTheRecordedStart(t *testing.T) {
	s := &Supervisor{clock: clock.Real{}}
	started := time.Now()
	if got := s.ended(proc.Result{Exited: started.Add(-20 * time.Microsecond)}, started); !got.Equal(started) {
		t.Errorf("an exit seen 20 µs before the noted start ends at %v, want the start %v", got, started)
	}
	frozen := started.Add(-3 * time.Second) // started 5 s ago, exited 3 s ago
	got := s.ended(proc.Result{Exited: frozen}, started.Add(-5*time.Second))
	if d := time.Since(got); d < 2900*time.Millisecond || d > 4*time.Second {
		t.Errorf("an exit seen 3 s ago ends %v ago, want about 3 s", d)
	}
}
