package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestStatusShowsAWaitingRetry: a slot waiting for its next attempt reads
// "retry 2/3 at 10:19:03" in the state column, in the local zone, and
// `--json` carries its retry_at, attempt and max_attempts.
func TestStatusShowsAWaitingRetry(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 19, 3, 0, time.Local)
	j := ctl.JobStatus{Name: "a", Schedule: "@hourly", State: ctl.StateRetrying, Enabled: true,
		Attempt: 2, MaxAttempts: 3, RetryAt: at.UTC()}
	tests := []struct {
		name string
		j    ctl.JobStatus
		want string
	}{
		{"retry", j, "retry 2/3 at 10:19:03"},
		{"attempts unknown", ctl.JobStatus{State: ctl.StateRetrying, Attempt: 2, RetryAt: at}, "retry 2 at 10:19:03"},
		{"idle", ctl.JobStatus{State: ctl.StateIdle}, "idle"},
		{"running", ctl.JobStatus{State: ctl.StateRunning, StartedAt: at.Add(-time.Minute)}, "running 1m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := stateCell(tc.j, at); got != tc.want {
				t.Errorf("state %q, want %q", got, tc.want)
			}
		})
	}
	var out bytes.Buffer
	g := &globals{stdout: &out, stderr: &bytes.Buffer{}}
	if err := printStatus(g, []ctl.JobStatus{j}, "test", false, true, false); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["state"] != "retrying" || got["attempt"] != 2.0 || got["max_attempts"] != 3.0 || got["retry_at"] != at.UTC().Format(time.RFC3339Nano) {
		t.Errorf("--json %s, want state retrying, attempt 2, max_attempts 3, retry_at %s", strings.TrimSpace(out.String()), at.UTC().Format(time.RFC3339Nano))
	}
}

// resourcesFixture is db with one slot held, one free and a fire waiting.
func resourcesFixture(at time.Time) []ctl.ResourceStatus {
	return []ctl.ResourceStatus{{Resource: "db", Size: 2, Held: 1,
		Slots: []ctl.SlotStatus{{Slot: 0, Held: true, PID: 42, Host: "h1", Job: "export_a", RunID: "r1", Since: at},
			{Slot: 1}},
		Waiters: []ctl.WaiterStatus{{Job: "patient", RunID: "p1", Host: "h1", Since: at, Until: at.Add(time.Minute)}}}}
}

// TestResourcesTable: a row per slot (held with its holder, or free),
// and a row per waiting fire with when it gives up.
func TestResourcesTable(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	printResourcesTable(&globals{stdout: &out}, resourcesFixture(at))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"RESOURCE", "SLOT", "STATE", "PID", "HOST", "JOB", "RUN ID", "SINCE", "GIVES UP"},
		{"db", "db/0", "held", "42", "h1", "export_a", "r1", shortTime(at), "-"},
		{"db", "db/1", "free", "-"},
		{"db", "-", "waiting (1/2 held)", "-", "h1", "patient", "p1", shortTime(at), shortTime(at.Add(time.Minute))},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, cells := range want {
		if !strings.HasPrefix(strings.Join(strings.Fields(lines[i]), " "), strings.Join(cells, " ")) {
			t.Errorf("line %d: %q, want it to start %q", i, lines[i], strings.Join(cells, " "))
		}
	}
}

// TestResourcesJSON: each slot is one more lock line, with the fields a
// job lock's line has ("lock", "held", "foreign") and its resource, size
// and waiters; the waiting fire makes no line of its own.
func TestResourcesJSON(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	if err := printResourcesJSON(&globals{stdout: &out}, resourcesFixture(at)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per slot:\n%s", len(lines), out.String())
	}
	var rows []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	for i, m := range rows {
		for _, k := range []string{"lock", "held", "foreign", "resource", "size", "waiters"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %q: %s", i, k, lines[i])
			}
		}
	}
	if rows[0]["lock"] != "db/0" || rows[0]["held"] != true || rows[0]["job"] != "export_a" || rows[0]["pid"] != float64(42) {
		t.Errorf("the held slot: %s", lines[0])
	}
	if rows[1]["lock"] != "db/1" || rows[1]["held"] != false || rows[1]["job"] != nil {
		t.Errorf("the free slot: %s", lines[1])
	}
	w, _ := rows[1]["waiters"].([]any)
	if len(w) != 1 || w[0].(map[string]any)["job"] != "patient" || w[0].(map[string]any)["until"] != "2026-12-04T10:01:00Z" {
		t.Errorf("the waiters: %v", rows[1]["waiters"])
	}
	var none bytes.Buffer
	r := resourcesFixture(at)
	r[0].Waiters = nil
	if err := printResourcesJSON(&globals{stdout: &none}, r); err != nil || !strings.Contains(none.String(), `"waiters":[]`) {
		t.Errorf("no waiters: %s, %v; want \"waiters\":[]", none.String(), err)
	}
}

// TestStateCellWaiting: status says what a waiting fire waits for.
func TestStateCellWaiting(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	j := ctl.JobStatus{Name: "patient", State: ctl.StateWaiting,
		WaitingFor: &ctl.Waiting{RunID: "p1", Resource: "db", Held: 2, Size: 2, Since: at, Until: at.Add(time.Minute)}}
	if got := stateCell(j, at); got != "waiting for db (2/2 held)" {
		t.Errorf("state %q, want %q", got, "waiting for db (2/2 held)")
	}
}

// TestResourcesForeignHolder: a slot held outside cronvisor shows its
// command line in the table and "foreign" in its JSON line, as a job
// lock's would.
func TestResourcesForeignHolder(t *testing.T) {
	rs := []ctl.ResourceStatus{{Resource: "disk", Size: 1, Held: 1,
		Slots: []ctl.SlotStatus{{Slot: 0, Held: true, PID: 9, Foreign: true, Cmdline: "flock -n disk.0.lock sleep 3"}}}}
	var table, lines bytes.Buffer
	printResourcesTable(&globals{stdout: &table}, rs)
	if err := printResourcesJSON(&globals{stdout: &lines}, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "(foreign) flock -n disk.0.lock sleep 3") {
		t.Errorf("the table:\n%s", table.String())
	}
	if !strings.Contains(lines.String(), `"foreign":true,"cmdline":"flock -n disk.0.lock sleep 3"`) {
		t.Errorf("the JSON line: %s", lines.String())
	}
}
