package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// verbsJobs fire only when triggered (1 January at midnight, far away).
const verbsJobs = `shutdown_grace: 5s
jobs:
  - name: talk
    schedule: "0 0 1 1 *"
    command: "for i in 1 2 3 4 5 6; do echo out$i; echo err$i >&2; sleep 0.4; done"
    timeout: 30s
  - name: hang
    schedule: "0 0 1 1 *"
    command: "sleep %s"
    timeout: 60s
    kill_grace: 2s
`

// TestE2EVerbsWithoutDaemon: each operator verb says that no daemon runs,
// exit 1; logs without -f reads the state dir instead.
func TestE2EVerbsWithoutDaemon(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, fmt.Sprintf(verbsJobs, sleepArg("41.2")))
	for _, args := range [][]string{{"pause", "talk"}, {"resume", "--all"}, {"trigger", "talk"}, {"kill", "hang"}, {"reload"}, {"logs", "-f", "talk"}} {
		code, _, stderr := s.runCV(10*time.Second, args...)
		if code != 1 || !strings.Contains(stderr, "no cronvisor daemon is running for ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	code, _, stderr := s.runCV(10*time.Second, "logs", "talk")
	if code != 1 || !strings.Contains(stderr, "talk has no saved log in ") {
		t.Errorf("logs offline, no log: exit %d, stderr %q", code, stderr)
	}
}

// TestE2EVerbsPauseTriggerLogsKill drives a running daemon with the verbs:
// pause and resume, trigger under the overlap policy, logs -f from before
// the run and from its middle (each line once, with its stream), kill.
func TestE2EVerbsPauseTriggerLogsKill(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, fmt.Sprintf(verbsJobs, sleepArg("41.3")))
	d := s.startDaemon()
	c := s.client()
	ctx := context.Background()

	expect := func(want int, wantOut string, args ...string) string {
		t.Helper()
		code, out, stderr := s.runCV(15*time.Second, args...)
		if code != want || !strings.Contains(out+stderr, wantOut) {
			t.Fatalf("%v: exit %d (want %d), stdout %q, stderr %q; want %q", args, code, want, out, stderr, wantOut)
		}
		return out
	}
	expect(0, "paused talk\npaused hang\n", "pause", "talk", "hang")
	if jobs, _ := c.Jobs(ctx); !jobs[0].Paused || !jobs[1].Paused {
		t.Fatalf("after pause: %+v", jobs)
	}
	expect(1, "trigger talk: refused: the job is paused (by ", "trigger", "talk")
	expect(0, "resumed talk\nresumed hang\n", "resume", "--all")
	expect(2, `did you mean talk?`, "pause", "tallk")
	expect(2, "wants job names or --all", "resume")

	early := s.cv("logs", "talk", "-f")
	waitFor(t, 10*time.Second, "logs -f waiting", func() bool { return strings.Contains(early.stderr(), "waiting for its next one") })
	out := expect(0, "triggered talk: run ", "trigger", "talk")
	runID := strings.Fields(out)[3]
	expect(0, "triggered talk: skipped: lock held by ", "trigger", "talk") // overlap: skip, unlike run
	waitFor(t, 10*time.Second, "two lines saved", func() bool {
		l, err := c.Log(ctx, "talk", runID)
		return err == nil && len(l.Lines) >= 3
	})
	late := s.cv("logs", "talk", "-f")
	var want []string
	for i := 1; i <= 6; i++ {
		want = append(want, fmt.Sprintf("stdout | out%d", i), fmt.Sprintf("stderr | err%d", i))
	}
	for name, p := range map[string]*proc{"from before the run": early, "from its middle": late} {
		if code := p.wait(20 * time.Second); code != 0 {
			t.Fatalf("logs -f %s: exit %d, stderr %q", name, code, p.stderr())
		}
		checkFollowed(t, name, p.stdout(), want)
		if !strings.Contains(p.stderr(), "(run "+runID+" ended: ok, exit 0)") {
			t.Errorf("logs -f %s: stderr %q, want the run's end", name, p.stderr())
		}
	}
	saved := expect(0, "stdout | out6", "logs", "talk")
	expect(0, saved, "logs", "talk", "--run", runID)
	expect(0, saved, "logs", "talk", "--run", runID, "-f") // over: printed, not followed

	expect(0, "triggered hang: run ", "trigger", "hang")
	expect(0, "killed hang: 1 run ended", "kill", "hang")
	waitFor(t, 10*time.Second, "the kill recorded", func() bool {
		recs, err := c.History(ctx, ctl.HistoryQuery{Job: "hang", Outcomes: []run.Outcome{run.Interrupted}})
		return err == nil && len(recs) == 1 && recs[0].Reason == "killed by operator"
	})
	expect(1, "no run of hang is running", "kill", "hang")
	stopDaemons(t, d)
	got := expect(0, "stdout | out1", "logs", "talk")
	if got != saved {
		t.Errorf("logs without a daemon:\n%s\nwant\n%s", got, saved)
	}
}

// checkFollowed wants each line of want once, stdout's and stderr's each
// in order (the two streams are read apart, so they may interleave).
func checkFollowed(t *testing.T, name, out string, want []string) {
	t.Helper()
	got := lines(out)
	for _, stream := range []string{"stdout | ", "stderr | "} {
		var g, w []string
		for _, l := range got {
			if strings.HasPrefix(l, stream) {
				g = append(g, l)
			}
		}
		for _, l := range want {
			if strings.HasPrefix(l, stream) {
				w = append(w, l)
			}
		}
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("logs -f %s: %s lines\n%s\nwant\n%s", name, stream, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("logs -f %s: %d lines, want %d:\n%s", name, len(got), len(want), out)
	}
}

// TestE2EVerbReload: reload through the socket prints every problem of a
// refused file (exit 1, old jobs kept) and applies a good one.
func TestE2EVerbReload(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, fmt.Sprintf(verbsJobs, sleepArg("41.4")))
	d := s.startDaemon()
	good, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `schedule: "0 0 1 1 *"`, `schedule: "61 * * * *"`, 1)
	bad = strings.Replace(bad, "timeout: 60s", "timeout: soon", 1)
	if err := os.WriteFile(s.config, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := s.runCV(15*time.Second, "reload")
	if code != 1 || !strings.Contains(stderr, "reload refused") ||
		!strings.Contains(stderr, "jobs.yaml:5:") || !strings.Contains(stderr, "jobs.yaml:11:") {
		t.Errorf("reload of a bad file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	more := string(good) + "  - name: third\n    schedule: \"@daily\"\n    command: \"true\"\n    timeout: 5s\n"
	if err := os.WriteFile(s.config, []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = s.runCV(15*time.Second, "reload")
	if code != 0 || out != "reloaded: 3 jobs\n" {
		t.Errorf("reload: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	stopDaemons(t, d)
}
