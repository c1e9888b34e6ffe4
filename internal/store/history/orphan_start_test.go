package history

import (
	"testing"

	"cronvisor/internal/base/run"
)

// TestWriteEndFillsAStartItWasNotGiven: a dead supervisor's run whose
// start row was rebuilt without its start and pid (the supervisor died
// between the exec and writing them) gets them from the end its keeper
// found them for; a row that has them keeps its own.
func TestWriteEndFillsAStartItWasNotGiven(t *testing.T) {
	tests := []struct {
		name      string
		row       run.Record // adopted
		end       run.End
		wantStart int // minute
		wantPID   int
	}{
		{name: "row without start", row: run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(0)},
			end: run.End{RunID: "r1", Outcome: run.OK, Started: minute(1), Ended: minute(2), PID: 42}, wantStart: 1, wantPID: 42},
		{name: "row with its start", row: run.Record{Job: "a", RunID: "r2", ScheduledAt: minute(0), StartedAt: minute(3), PID: 7},
			end: run.End{RunID: "r2", Outcome: run.OK, Started: minute(4), Ended: minute(5), PID: 42}, wantStart: 3, wantPID: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTemp(t)
			ctx := testCtx(t)
			if _, err := s.Adopt(ctx, tt.row); err != nil {
				t.Fatal(err)
			}
			code := 0
			tt.end.ExitCode = &code
			if closed, err := s.WriteEnd(ctx, tt.end); err != nil || !closed {
				t.Fatalf("WriteEnd = %t, %v; want the run closed", closed, err)
			}
			r, ok, err := s.Record(ctx, tt.row.RunID)
			if err != nil || !ok {
				t.Fatalf("Record = %t, %v", ok, err)
			}
			if !r.StartedAt.Equal(minute(tt.wantStart)) || r.PID != tt.wantPID || r.Outcome != run.OK {
				t.Errorf("recorded %s started %v pid %d; want ok, started %v, pid %d", r.Outcome, r.StartedAt, r.PID, minute(tt.wantStart), tt.wantPID)
			}
		})
	}
}
