package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2ESecondDaemonRefused: a second daemon, or a headless console, on
// a state dir that a daemon supervises exits 1 naming the first's pid and
// user and how to run a second one deliberately; `cronvisor run` still
// works beside it, and the first runs every slot once, unaffected: no
// skips, nobody else's runs, one start.
func TestE2ESecondDaemonRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - {name: tick, schedule: "* * * * * *", command: "true", timeout: 5s}
  - {name: manual, schedule: "@yearly", command: "echo by hand", timeout: 5s}
`)
	first := s.startDaemon()
	for _, args := range [][]string{{"daemon", "--log-format", "json"}, {}} {
		second := s.cv(args...)
		code := second.wait(15 * time.Second)
		msg := second.stderr()
		if code != 1 || !strings.Contains(msg, "another cronvisor (pid "+strconv.Itoa(first.pid())+", user root (uid 0)) already supervises the state dir "+s.state) ||
			!strings.Contains(msg, "give it its own state_dir") || !strings.Contains(msg, "`cronvisor run NAME` runs a job beside this one") {
			t.Errorf("cronvisor %q beside a daemon: exit %d, stderr:\n%s\nwant exit 1 naming pid %d, user root, and the ways to run a second", args, code, msg, first.pid())
		}
		if strings.Contains(msg, "run started") {
			t.Errorf("cronvisor %q fired before it was refused:\n%s", args, msg)
		}
	}
	if code, stdout, stderr := s.runCV(10*time.Second, "run", "manual"); code != 0 || !strings.Contains(stdout+stderr, "by hand") {
		t.Errorf("run beside the daemon: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	time.Sleep(3 * time.Second) // slots after the refusals
	select {
	case <-first.done:
		t.Fatalf("the first daemon exited beside the refused ones; stderr:\n%s", first.stderr())
	default:
	}
	stopDaemons(t, first)
	ticks := s.historyJSON("--job", "tick")
	for _, r := range ticks {
		if r.Outcome != "ok" {
			t.Errorf("tick record %+v: want only runs, each ok", r)
		}
	}
	if started := strings.Count(first.stderr(), `"msg":"run started","job":"tick"`); len(ticks) < 3 || started != len(ticks) {
		t.Errorf("%d tick records, %d started by the first daemon; want the same, one a second", len(ticks), started)
	}
	if n := strings.Count(first.stderr(), "cronvisor started"); n != 1 {
		t.Errorf("the first daemon logged %d starts", n)
	}
}
