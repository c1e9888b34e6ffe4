package e2e

import (
	"fmt"
	"io"
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

// The bounds. Against the command alone (stdout on /dev/null, the
// issue's figure) the daemon reads and copies the output on the same
// cores as the job writes it, for several times the job's own CPU: on
// idle cores that runs beside the job, but once other work takes the
// cores it adds to the wall time, and the ratio grows with the load
// (medians of 1.7-6.4× at a load of 7-40 on 2 cores), hence the slack.
// Against the command with its stdout read by this test (io.Copy to
// io.Discard: the reading without cronvisor) the ratio is what
// cronvisor adds, and holds under load. Either still fails the per-line
// cost the test guards against (6.3 s idle, 13-18 s under load).
const (
	chattyAloneSlack = 2 * time.Second
	chattyPipeSlack  = 500 * time.Millisecond
)

// TestE2EChattyJobAtPipeSpeed: a job printing 200 MB of 2-byte lines
// under a daemon (its run log written, log_output on) takes at most 3×
// the same command alone plus chattyAloneSlack, and at most 3× the
// command read by a bare reader plus chattyPipeSlack: the median of
// three runs against the medians of six runs of each around them. It
// took 6.3 s against 0.07 s alone when every line cost a format and an
// append. Nothing is lost on the way: the run log's cut marker counts
// every byte beyond its head and tail.
func TestE2EChattyJobAtPipeSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("a time bound on 200 MB of output, unfair beside -short's other packages; runs in the full suite")
	}
	s := newSandbox(t, `shutdown_grace: 10s
jobs:
  - {name: chatty, schedule: "@every 1s", command: "`+chattyCommand+`", timeout: 60s}
`)
	alone, piped := timeAlone(t, 3)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 120*time.Second, "three runs to finish", func() bool {
		return strings.Count(d.stderr(), `"msg":"run finished"`) >= 3
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(30 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d; stderr:\n%.2000s", code, d.stderr())
	}
	a2, p2 := timeAlone(t, 3)
	alone, piped = append(alone, a2...), append(piped, p2...)

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
	a, p, u := medianDuration(alone), medianDuration(piped), medianDuration(took)
	t.Logf("200 MB of 2-byte lines: alone %v %v, read by a bare reader %v %v, under the daemon %v %v: %.2f× alone, %.2f× read",
		a, alone, p, piped, u, took, float64(u)/float64(a), float64(u)/float64(p))
	if u > 3*a+chattyAloneSlack {
		t.Errorf("under the daemon %v, alone %v: want at most 3× + %v", u, a, chattyAloneSlack)
	}
	if u > 3*p+chattyPipeSlack {
		t.Errorf("under the daemon %v, read by a bare reader %v: want at most 3× + %v", u, p, chattyPipeSlack)
	}
}

// timeAlone runs chattyCommand n times with its stdout on /dev/null
// (alone) and n times with it on a pipe that this process copies to
// io.Discard (piped), in turn.
func timeAlone(t *testing.T, n int) (alone, piped []time.Duration) {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for range n {
		cmd := exec.Command("/bin/sh", "-c", chattyCommand)
		cmd.Stdout = devnull
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		alone = append(alone, time.Since(t0))

		cmd = exec.Command("/bin/sh", "-c", chattyCommand)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		t0 = time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, out); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		piped = append(piped, time.Since(t0))
	}
	return alone, piped
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
