package history

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// outcomeCases are one record of each outcome, as the runner would write
// them; starts is whether the run is recorded with Start before Finish.
func outcomeCases() []struct {
	name   string
	starts bool
	rec    run.Record
} {
	ran := func(id string, outcome run.Outcome, exit *int, reason string) run.Record {
		return run.Record{Job: "sync_orders", RunID: id, Outcome: outcome,
			ScheduledAt: minute(0), StartedAt: minute(0).Add(1500 * time.Millisecond),
			EndedAt: minute(1).Add(1750 * time.Millisecond), ExitCode: exit, Reason: reason,
			LogPath: "/state/logs/sync_orders/" + id + ".log", Host: "web1", SupervisorPID: 100, PID: 4242}
	}
	return []struct {
		name   string
		starts bool
		rec    run.Record
	}{
		{"ok", true, func() run.Record {
			r := ran("r-ok", run.OK, intp(0), "")
			r.Usage = run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 120 << 20}
			r.Resources, r.ResourceWait = []string{"db/0", "disk/0"}, 1500*time.Millisecond
			return r
		}()},
		{"failed, second attempt", true, func() run.Record {
			r := ran("r-failed", run.Failed, intp(3), "")
			r.Attempt, r.Usage = 2, run.Usage{Measured: true} // measured, burnt nothing, no memory controller
			return r
		}()},
		{"timeout, OOM killed", true, func() run.Record {
			r := ran("r-timeout", run.Timeout, intp(-1), run.OOMReason+"; deadline 90s exceeded")
			r.Usage = run.Usage{Measured: true, CPUUser: 2 * time.Second, MemoryPeak: 1 << 30, OOMKilled: true}
			return r
		}()},
		{"timeout, no heartbeat", true, func() run.Record {
			r := ran("r-heartbeat", run.Timeout, intp(143), "no heartbeat for 2s")
			r.Job, r.Progress = "indexer", "5/10 files" // its own job: Query picks it alone
			return r
		}()},
		{"replaced", true, ran("r-replaced", run.Replaced, nil, "replaced by r-next")},
		{"ok without a resource wait", true, func() run.Record {
			r := ran("r-slots", run.OK, intp(0), "")
			r.Job, r.Resources = "export", []string{"db/1"} // took its slot at once: a wait of 0
			return r
		}()},
		{"skipped after a wait", false, run.Record{Job: "big_export", RunID: "r-waited", Outcome: run.Skipped,
			ScheduledAt: minute(6), EndedAt: minute(6), Reason: "resource db full after waiting 1m0s: held by export on web2 since 12:05:00",
			Host: "web1", SupervisorPID: 100, ResourceWait: time.Minute}},
		{"interrupted", true, ran("r-int", run.Interrupted, nil, "supervisor 100 on web1 died")},
		{"error, manual", false, run.Record{Job: "sync_orders", RunID: "r-err", Outcome: run.Error,
			ScheduledAt: minute(2), EndedAt: minute(2), Reason: "exec: \"php\": not found",
			Host: "web1", SupervisorPID: 100, Manual: true}},
		{"skipped with holder", false, run.Record{Job: "sync_orders", RunID: "r-skip", Outcome: run.Skipped,
			ScheduledAt: minute(5), EndedAt: minute(5), Reason: "lock orders held",
			Host: "web1", SupervisorPID: 100,
			Holder: &run.Holder{PID: 4242, Host: "web1", Job: "sync_orders", RunID: "r-ok", Since: minute(0)}}},
	}
}

// checkJSON decodes the JSON of r and checks every contract field against
// r. Times are compared as instants: a record read back is in the local
// zone, the one written may not be.
func checkJSON(t *testing.T, b []byte, r run.Record) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	sameTime := func(key string, v any, want time.Time) {
		s, _ := v.(string)
		got, err := parseTime(s)
		if err != nil || !got.Equal(want) || (s == "") != want.IsZero() {
			t.Errorf("%s = %q (%v), want %v", key, s, err, want)
		}
	}
	for key, want := range map[string]time.Time{"scheduled_at": r.ScheduledAt, "started_at": r.StartedAt, "ended_at": r.EndedAt} {
		sameTime(key, m[key], want)
		delete(m, key)
	}
	var exit, holder any
	if r.ExitCode != nil {
		exit = float64(*r.ExitCode)
	}
	if h := r.Holder; h != nil {
		hm, _ := m["holder"].(map[string]any)
		sameTime("holder.since", hm["since"], h.Since)
		delete(hm, "since")
		holder = map[string]any{"pid": float64(h.PID), "host": h.Host, "job": h.Job, "run_id": h.RunID}
	}
	want := map[string]any{
		"job": r.Job, "run_id": r.RunID, "outcome": string(r.Outcome),
		"duration_ms": float64(r.DurationMS()), "exit_code": exit, "reason": r.Reason,
		"holder": holder, "log_path": r.LogPath, "host": r.Host, "manual": r.Manual,
		"attempt":     float64(max(r.Attempt, 1)),
		"cpu_user_ms": nil, "cpu_system_ms": nil, "memory_peak_bytes": nil, "oom_killed": r.Usage.OOMKilled,
		"progress": r.Progress, "resources": []any{}, "resource_wait_ms": nil,
	}
	for _, s := range r.Resources {
		want["resources"] = append(want["resources"].([]any), s)
	}
	if r.ResourceWait > 0 || len(r.Resources) > 0 {
		want["resource_wait_ms"] = float64(r.ResourceWait.Milliseconds())
	}
	if u := r.Usage; u.Measured {
		want["cpu_user_ms"], want["cpu_system_ms"] = float64(u.CPUUser.Milliseconds()), float64(u.CPUSystem.Milliseconds())
		if u.MemoryPeak > 0 {
			want["memory_peak_bytes"] = float64(u.MemoryPeak)
		}
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("JSON\n got %v\nwant %v", m, want)
	}
}

func TestMarshalJSON(t *testing.T) {
	for _, tc := range outcomeCases() {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			checkJSON(t, b, tc.rec)
			var back run.Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			want := tc.rec
			want.SupervisorPID, want.PID = 0, 0 // not part of the JSON form
			want.Attempt = max(want.Attempt, 1) // the JSON form says 1 for "first"
			sameRecord(t, back, want)
		})
	}
}

func TestMarshalJSONLiteral(t *testing.T) {
	r := run.Record{Job: "j", RunID: "r1", Outcome: run.Skipped, ScheduledAt: minute(0)}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"job":"j","run_id":"r1","outcome":"skipped","scheduled_at":"2025-03-01T12:00:00Z",` +
		`"started_at":"","ended_at":"","duration_ms":0,"exit_code":null,"reason":"","holder":null,` +
		`"log_path":"","host":"","manual":false,"attempt":1,` +
		`"cpu_user_ms":null,"cpu_system_ms":null,"memory_peak_bytes":null,"oom_killed":false,"progress":"",` +
		`"resources":[],"resource_wait_ms":null}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestDurationMS(t *testing.T) {
	tests := []struct {
		name         string
		start, ended time.Time
		want         int64
	}{
		{"both set", minute(0), minute(0).Add(2500 * time.Millisecond), 2500},
		{"still running", minute(0), time.Time{}, 0},
		{"never started", time.Time{}, minute(1), 0},
		{"sub-millisecond", minute(0), minute(0).Add(999 * time.Microsecond), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (run.Record{StartedAt: tc.start, EndedAt: tc.ended}).DurationMS(); got != tc.want {
				t.Errorf("DurationMS = %d, want %d", got, tc.want)
			}
		})
	}
}

// parseTime reads a record's JSON time ("" for none).
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
