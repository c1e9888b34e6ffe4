package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/store/fleet"
)

func TestFleetTableAndJSON(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hosts := []fleet.Host{
		{Name: "a", Version: "v1", PID: 10, Started: at, LastBeat: at, Silent: 400 * time.Millisecond,
			Offset: 12 * time.Millisecond, State: fleet.HostUp,
			Running: []fleet.RunningRun{{Job: "sync", RunID: "r1", Started: at}, {Job: "report", RunID: "r2", Started: at}}},
		{Name: "b", Version: "v1", PID: 11, Started: at, LastBeat: at, Silent: 42 * time.Second,
			Offset: -2500 * time.Millisecond, State: fleet.HostLost},
		{Name: "ghost", State: fleet.HostLost, Running: []fleet.RunningRun{{Job: "sync", RunID: "r3", Started: at}}},
	}
	var out bytes.Buffer
	printFleetTable(&globals{stdout: &out}, hosts)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	tests := []struct {
		name string
		line int
		want []string
	}{
		{"header", 0, []string{"HOST", "STATE", "VERSION", "PID", "STARTED", "LAST BEAT", "CLOCK OFFSET", "RUNNING"}},
		{"up", 1, []string{"a ", "up", "v1", "10", shortTime(at), "400ms ago", "+12ms", "sync, report"}},
		{"lost, clock off", 2, []string{"b ", "lost", "42s ago", "-2.5s (over 1s!)", " -"}},
		{"never beat", 3, []string{"ghost", "lost", "never", "sync"}},
	}
	if len(lines) != len(tests) {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(lines[tt.line], w) {
					t.Errorf("row %q lacks %q", lines[tt.line], w)
				}
			}
		})
	}
	b, err := json.Marshal(fleetJSONOf(hosts[1]))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"host":"b","state":"lost","version":"v1","pid":11,"started_at":"2026-03-01T12:00:00Z",` +
		`"last_beat":"2026-03-01T12:00:00Z","silent_ms":42000,"clock_offset_ms":-2500,"running":[]}`
	if string(b) != want {
		t.Errorf("json %s\nwant %s", b, want)
	}
}

func TestStatusFleetNeedsHistoryBackend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte("jobs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no history_backend", []string{"status", "--fleet"}, 1, "history_backend"},
		{"with job names", []string{"status", "--fleet", "a"}, 2, "takes no JOB names"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Execute(append([]string{"--config", path}, tt.args...), &out, &errb)
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, errb.String(), tt.code, tt.want)
			}
		})
	}
}
