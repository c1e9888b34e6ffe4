package history

import (
	"slices"
	"strings"
	"testing"

	"cronvisor/internal/base/run"
)

// TestFinishUpdatesWhatChanged: an end that sets only what a run's end
// sets (the narrow update) and one that also changes a column the start
// wrote (the full update) both leave the row the merged record.
func TestFinishUpdatesWhatChanged(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	start := run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(1), StartedAt: minute(1), Host: "h1",
		SupervisorPID: 7, LogPath: "/logs/a/r1.log", Attempt: 1}
	for _, tc := range []struct {
		name   string
		narrow bool // the end changes endColumns only
		end    func(r run.Record) run.Record
	}{
		{"end columns only", true, func(r run.Record) run.Record {
			r.Outcome, r.EndedAt, r.ExitCode, r.Reason, r.PID = run.Failed, minute(2), intp(3), "exit status 3", 4242
			return r
		}},
		{"a start column too", false, func(r run.Record) run.Record {
			r.Outcome, r.EndedAt, r.ExitCode, r.PID = run.OK, minute(2), intp(0), 4243
			r.Host, r.LogPath = "h2", "/logs/a/moved.log"
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := start
			st.RunID = "run-" + tc.name
			if err := s.Start(ctx, st); err != nil {
				t.Fatal(err)
			}
			end := tc.end(run.Record{Job: st.Job, RunID: st.RunID})
			if err := s.Finish(ctx, end); err != nil {
				t.Fatal(err)
			}
			stored := st
			stored.Outcome = run.Running
			want := merge(stored, end)
			if got := onlyEndChanged(args(want), args(stored)); got != tc.narrow {
				t.Errorf("onlyEndChanged = %v, want %v", got, tc.narrow)
			}
			got, err := s.Query(ctx, Filter{Job: "a"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range got {
				if r.RunID == st.RunID {
					sameRecord(t, r, want)
					return
				}
			}
			t.Fatalf("run %s not found", st.RunID)
		})
	}
}

// TestEndColumnsNameEndUpdateSQL: endColumns are positions in args, whose
// order is columns'; they must name what endUpdateSQL sets, in its order.
func TestEndColumnsNameEndUpdateSQL(t *testing.T) {
	names := strings.Split(strings.Join(strings.Fields(columns), ""), ",")
	var got []string
	for _, c := range endColumns {
		got = append(got, names[c]+"=?")
	}
	set := strings.TrimSuffix(strings.TrimPrefix(endUpdateSQL, "UPDATE runs SET "), " WHERE id=?")
	if want := strings.Split(strings.ReplaceAll(set, " ", ""), ","); !slices.Equal(got, want) {
		t.Errorf("endColumns name %v, endUpdateSQL sets %v", got, want)
	}
}
