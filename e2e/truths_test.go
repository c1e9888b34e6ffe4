package e2e

import (
	"strings"
	"testing"
	"time"
)

func TestUnknownJobListsNearest(t *testing.T) {
	s := newSandbox(t, cliJobs)
	for _, args := range [][]string{
		{"run", "sync_order"},
		{"next", "sync_order"},
		{"status", "sync_order"},
		{"history", "--job", "sync_order"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := s.runCV(10*time.Second, args...)
			if code != 2 || !strings.Contains(stderr, `no job "sync_order"`) || !strings.Contains(stderr, "did you mean sync_orders") {
				t.Errorf("exit %d, stderr %q; want exit 2 naming sync_orders", code, stderr)
			}
		})
	}
	code, _, stderr := s.runCV(10*time.Second, "run", "zzz")
	if code != 2 || !strings.Contains(stderr, "its jobs: sync_orders, sync_users, backup") {
		t.Errorf("run zzz: exit %d, stderr %q; want the list of jobs", code, stderr)
	}
}

// TestFailedRunReasonAndHistorySince runs a failing job, then reads its
// record back with the day units of --since.
func TestFailedRunReasonAndHistorySince(t *testing.T) {
	s := newSandbox(t, cliJobs)
	if code, _, stderr := s.runCV(20*time.Second, "run", "backup"); code != 3 {
		t.Fatalf("run backup: exit %d, want 3; stderr %q", code, stderr)
	}
	for _, since := range []string{"1d", "2w", "90m"} {
		recs := s.historyJSON("--since", since)
		if len(recs) != 1 || recs[0].Outcome != "failed" {
			t.Fatalf("history --since %s: %+v, want the failed run", since, recs)
		}
		if want := `exit 3: last stderr: "connection refused"`; recs[0].Reason != want {
			t.Errorf("reason %q, want %q", recs[0].Reason, want)
		}
	}
	code, _, stderr := s.runCV(10*time.Second, "history", "--since", "3x")
	if code != 2 || !strings.Contains(stderr, `--since "3x"`) {
		t.Errorf("history --since 3x: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// TestNextStaysRFC3339 keeps the contract's lines in a pipe and shows
// the weekday with -v.
func TestNextStaysRFC3339(t *testing.T) {
	s := newSandbox(t, cliJobs)
	from := "--from=2026-12-04T12:00:00Z" // a Friday
	_, plain, _ := s.runCV(10*time.Second, "next", "sync_orders", "-n", "2", from)
	if want := "2026-12-05T10:00:00Z\n2026-12-06T10:00:00Z\n"; plain != want {
		t.Errorf("next in a pipe: %q, want %q", plain, want)
	}
	_, verbose, _ := s.runCV(10*time.Second, "next", "sync_orders", "-n", "2", "-v", from)
	if want := "2026-12-05T10:00:00Z  Sat\n2026-12-06T10:00:00Z  Sun\n"; verbose != want {
		t.Errorf("next -v: %q, want %q", verbose, want)
	}
}
