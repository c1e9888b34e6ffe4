package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chattyCommand prints 200 MB in a hundred million lines of 2 bytes.
const chattyCommand = "yes | head -c 200000000"

// chattySlack is what a loaded machine may add to the bound of 3× the
// command alone. The daemon reads and copies the output on the same
// cores as the job writes it, for several times the job's own CPU; on
// idle cores that runs beside the job, but once other work takes the
// cores it adds to the wall time, and the ratio grows with the load
// (medians of 1.7-3.8× at a load of 7-17 on 2 cores, up to 5.5× at 75).
// With this slack the bound still fails the per-line cost it guards
// against (13-18 s under the same loads, 6.3 s idle).
const chattySlack = time.Second

// TestE2EChattyJobAtPipeSpeed: a job printing 200 MB of 2-byte lines
// under a daemon (its run log written, log_output on) takes at most 3×
// the same command alone (stdout on /dev/null), plus chattySlack; the
// median of three runs against the median of six runs alone around
// them. It took 6.3 s against 0.07 s when every line cost a format and
// an append. Nothing is lost on the way: the run log's cut marker
// counts every byte beyond its head and tail.
func TestE2EChattyJobAtPipeSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("a time bound on 200 MB of output, unfair beside -short's other packages; runs in the full suite")
	}
	s := newSandbox(t, `shutdown_grace: 10s
jobs:
  - {name: chatty, schedule: "@every 1s", command: "`+chattyCommand+`", timeout: 60s}
`)
	alone := timeAlone(t, 3)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 120*time.Second, "three runs to finish", func() bool {
		return strings.Count(d.stderr(), `"msg":"run finished"`) >= 3
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(30 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d; stderr:\n%.2000s", code, d.stderr())
	}
	alone = append(alone, timeAlone(t, 3)...)

	var took []time.Duration
	for _, r := range s.historyJSON("--job", "chatty") {
		if r.Outcome != "ok" {
			continue // a skip: the run before still held the lock
		}
		took = append(took, r.EndedAt.Sub(r.StartedAt))
		checkChattyLog(t, r.LogPath)
	}
	if len(took) < 3 {
		t.Fatalf("%d runs ended ok, want 3", len(took))
	}
	a, u := medianDuration(alone), medianDuration(took)
	t.Logf("200 MB of 2-byte lines: alone %v (median of %v), under the daemon %v (median of %v): %.2f×", a, alone, u, took, float64(u)/float64(a))
	if u > 3*a+chattySlack {
		t.Errorf("under the daemon %v, alone %v: want at most 3× + %v", u, a, chattySlack)
	}
}

// timeAlone runs chattyCommand n times with its stdout on /dev/null.
func timeAlone(t *testing.T, n int) []time.Duration {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out []time.Duration
	for range n {
		cmd := exec.Command("/bin/sh", "-c", chattyCommand)
		cmd.Stdout = devnull
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(t0))
	}
	return out
}

// checkChattyLog checks a chatty run's log: its 1 MiB (the default
// log_limit) split into the whole 11-byte lines that fit in each half,
// and the marker counting the 1.1 GB of entries between them.
func checkChattyLog(t *testing.T, path string) {
	t.Helper()
	const entry, lines, limit = len("stdout | y\n"), 100_000_000, 1 << 20
	head := limit / 2 / entry * entry
	tail := (limit - head) / entry * entry
	want := strings.Repeat("stdout | y\n", head/entry) +
		fmt.Sprintf("... [cronvisor: %d bytes cut] ...\n", entry*lines-head-tail) +
		strings.Repeat("stdout | y\n", tail/entry)
	if got := readFile(t, path); got != want {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("run log %s: %d bytes, want %d; they part at byte %d: %.60q, want %.60q", path, len(got), len(want), i, got[i:], want[i:])
	}
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
