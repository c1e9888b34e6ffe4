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
