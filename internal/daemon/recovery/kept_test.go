package recovery

import (
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc"
)

// TestReadEndTakesTheStartTheKeeperFound: a run whose supervisor died
// before it wrote the run's pid and start (the lock record's and the
// start row's) is recorded with those its keeper found; a start row that
// has them keeps its own.
func TestReadEndTakesTheStartTheKeeperFound(t *testing.T) {
	t.Parallel()
	started := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name      string
		row       run.End // as endOf built it from the start row
		wantStart time.Time
		wantPID   int
	}{
		{name: "start row without them", row: run.End{RunID: "r1"}, wantStart: started, wantPID: 42},
		{name: "start row with them", row: run.End{RunID: "r1", Started: started.Add(-time.Second), PID: 7}, wantStart: started.Add(-time.Second), wantPID: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "r1.end")
			k := proc.End{RunID: "r1", Outcome: proc.Exited, ExitCode: 0, Ended: started.Add(2 * time.Second),
				Run: proc.KeptRun{Job: "gap", Started: started, PID: 42}}
			if err := proc.WriteEnd(path, k, false); err != nil {
				t.Fatal(err)
			}
			e := tt.row
			r := New(Config{})
			defer r.Close()
			if !r.readEnd(path, &e) {
				t.Fatal("readEnd read no End")
			}
			if e.Outcome != run.OK || !e.Started.Equal(tt.wantStart) || e.PID != tt.wantPID {
				t.Errorf("end %s started %v pid %d; want ok, started %v, pid %d", e.Outcome, e.Started, e.PID, tt.wantStart, tt.wantPID)
			}
		})
	}
}

// TestReadEndNeverEndsBeforeTheStartRow: a keeper that saw a process
// exit at once may have seen it before its supervisor noted the start
// (the start row's time): the record ends at that start, not before it.
func TestReadEndNeverEndsBeforeTheStartRow(t *testing.T) {
	t.Parallel()
	noted := time.Unix(1_700_000_000, 500_000)
	path := filepath.Join(t.TempDir(), "r1.end")
	k := proc.End{RunID: "r1", Outcome: proc.Exited, ExitCode: 3, Ended: noted.Add(-20 * time.Microsecond),
		Run: proc.KeptRun{Job: "quick", Started: noted.Add(-time.Millisecond), PID: 42}}
	if err := proc.WriteEnd(path, k, false); err != nil {
		t.Fatal(err)
	}
	e := run.End{RunID: "r1", Started: noted, PID: 42}
	r := New(Config{})
	defer r.Close()
	if !r.readEnd(path, &e) {
		t.Fatal("readEnd read no End")
	}
	if !e.Ended.Equal(noted) || e.Outcome != run.Failed {
		t.Errorf("end %s at %v; want failed, ended at the start row's %v", e.Outcome, e.Ended, noted)
	}
}
