package file

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

func TestParseRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		data   string
		wantOK bool
		runID  string
	}{
		{"empty", "", false, ""},
		{"garbage", "not json\x00\xff", false, ""},
		{"one record", `{"pid":7,"run_id":"r1"}` + "\n", true, "r1"},
		{"no final newline", `{"pid":7,"run_id":"r1"}`, true, "r1"},
		{"last line wins", `{"run_id":"r1"}` + "\n" + `{"run_id":"r2"}` + "\n", true, "r2"},
		{"torn tail of an older record", `{"run_id":"r2"}` + "\n" + `d":"r1-longer"}` + "\n", true, "r2"},
		{"bad json after a good line", `{"run_id":"r1"}` + "\n{bad\n", true, "r1"},
		{"wrong types", `{"pid":"seven"}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, ok := parseRecord([]byte(tt.data))
			if ok != tt.wantOK || h.RunID != tt.runID {
				t.Fatalf("got %+v, %v; want run_id %q, %v", h, ok, tt.runID, tt.wantOK)
			}
		})
	}
}

// TestRecordFormat pins the lock file's content: one JSON line with the
// contract's field names, rewritten in place by SetPID.
func TestRecordFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	host, _ := os.Hostname()
	slot := time.Date(2025, 3, 30, 2, 30, 0, 123456789, time.FixedZone("CEST", 2*3600))
	since := slot.Add(1500 * time.Millisecond)
	lease, err := l.Acquire(t.Context(), lock.Request{
		Name:      "orders",
		Record:    lock.Record{Holder: run.Holder{PID: 1234567, Job: "sync_orders", RunID: "run-42", Since: since}, Slot: slot, SupervisorPID: 1234567},
		CheckSlot: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	path := filepath.Join(dir, "orders.lock")

	fields := readLockFile(t, path)
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := strings.Join(keys, ","); got != "host,in_flight,job,pid,run_id,since,slot,slots,supervisor_pid" {
		t.Errorf("fields %s", got)
	}
	want := map[string]any{
		"pid": 1234567.0, "host": host, "job": "sync_orders", "run_id": "run-42",
		"slot": slot.Format(time.RFC3339Nano), "since": since.Format(time.RFC3339Nano),
		"supervisor_pid": 1234567.0, "in_flight": true,
		"slots": map[string]any{"sync_orders": slot.Format(time.RFC3339Nano)},
	}
	for k, v := range want {
		if g, w := jsonOf(t, fields[k]), jsonOf(t, v); g != w {
			t.Errorf("%s = %s, want %s", k, g, w)
		}
	}

	t.Run("SetPID rewrites the line in place", func(t *testing.T) {
		if err := lease.SetPID(5); err != nil {
			t.Fatal(err)
		}
		if got := readLockFile(t, path)["pid"]; got != 5.0 {
			t.Errorf("pid %v, want 5", got)
		}
		if lease.Record().PID != 5 {
			t.Errorf("Holder().PID = %d, want 5", lease.Record().PID)
		}
	})

	t.Run("Release leaves the record without in_flight", func(t *testing.T) {
		if err := lease.Release(); err != nil {
			t.Fatal(err)
		}
		fields := readLockFile(t, path)
		if _, ok := fields["in_flight"]; ok {
			t.Errorf("in_flight still in %v after Release", fields)
		}
		if fields["run_id"] != "run-42" || fields["pid"] != 5.0 {
			t.Errorf("record %v after Release, want the run's", fields)
		}
	})
}

// TestReleaseInFlightKeepsTheRecordInFlight: a run whose end history could
// not make durable frees its lock, and its record still says in flight,
// which is what the next supervisor's recovery reads if this one dies.
func TestReleaseInFlightKeepsTheRecordInFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	lease, err := l.Acquire(t.Context(), lock.Request{Name: "orders", Record: lock.Record{Holder: run.Holder{Job: "sync_orders", RunID: "run-7"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.ReleaseInFlight(); err != nil {
		t.Fatal(err)
	}
	if fields := readLockFile(t, filepath.Join(dir, "orders.lock")); fields["in_flight"] != true || fields["run_id"] != "run-7" {
		t.Errorf("record %v after ReleaseInFlight, want run-7 in flight", fields)
	}
	st, err := NewLocker(dir, locktest.InRun).Inspect(t.Context(), "orders")
	if err != nil || st.Held {
		t.Errorf("lock after ReleaseInFlight: held %v (%v), want free", st.Held, err)
	}
	if err := lease.Release(); err != nil {
		t.Errorf("Release after ReleaseInFlight: %v, want a no-op", err)
	}
}

// readLockFile checks that path holds exactly one newline-terminated JSON
// line and decodes it.
func readLockFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data := mustRead(t, path)
	if !bytes.HasSuffix(data, []byte("\n")) || bytes.Count(data, []byte("\n")) != 1 {
		t.Fatalf("lock file is not one line: %q", data)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("lock file %q: %v", data, err)
	}
	return m
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFileSetRunRenamesTheHolder: a retry keeps the lock and renames its
// record, which Inspect then reads.
func TestFileSetRunRenamesTheHolder(t *testing.T) {
	l := NewLocker(t.TempDir(), locktest.InRun)
	lease, err := l.Acquire(t.Context(), lock.Request{Name: "orders", Record: lock.Record{Holder: run.Holder{Job: "sync", RunID: "run-1", PID: 1}, SupervisorPID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if err := lease.SetRun("run-1b", 4343); err != nil {
		t.Fatalf("SetRun: %v", err)
	}
	st, err := l.Inspect(t.Context(), "orders")
	if err != nil || st.Record.RunID != "run-1b" || st.Record.PID != 4343 {
		t.Errorf("Inspect = %+v, %v; want run-1b pid 4343 in the record", st, err)
	}
}
