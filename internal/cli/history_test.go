package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/lock"
)

func TestParseSince(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"", 0, ""},
		{"90m", 90 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"1d", 24 * time.Hour, ""},
		{"2w", 14 * 24 * time.Hour, ""},
		{"30d", 30 * 24 * time.Hour, ""},
		{"-1d", 0, "negative"},
		{"-5m", 0, "negative"},
		{"1.5d", 0, "not a duration"},
		{"3", 0, "not a duration"},
		{"1dd", 0, "not a duration"},
		{"d", 0, "not a duration"},
		{"99999999999999w", 0, "too long"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseSince(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("parseSince(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("parseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestTablesShareTimeFormat checks that the history, locks and status tables print
// times alike: local, to the second, with the zone.
func TestTablesShareTimeFormat(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	at := time.Date(2026, 12, 1, 9, 4, 5, 0, time.UTC)
	want := at.Local().Format("2006-01-02 15:04:05 MST")
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Za-z0-9+-]+$`).MatchString(want) {
		t.Fatalf("layout gives %q", want)
	}
	var out bytes.Buffer
	g := &globals{stdout: &out}
	printHistoryTable(g, []run.Record{{Job: "a", RunID: "r1", Outcome: "ok", StartedAt: at, EndedAt: at.Add(time.Second)}}, false)
	printLocksTable(g, []lockRow{{LockStatus: service.LockStatusOf(lock.Status{Name: "a", Held: true,
		Record: lock.Record{Holder: run.Holder{PID: 7, Job: "a", RunID: "r1", Since: at}}})}})
	printStatusTable(g, []ctl.JobStatus{{Name: "a", State: ctl.StateIdle, LastStartedAt: at}}, true)
	if n := strings.Count(out.String(), want); n != 3 {
		t.Errorf("tables show %q %d times, want once each:\n%s", want, n, out.String())
	}
}
