package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/proc/cgroup"
)

// limitsReadings is what a job writes of its own settings, read from
// inside it by the processes it forks: nice, oom_score_adj, the soft and
// hard open-file limits and the I/O priority.
const limitsReadings = `{ cut -d" " -f19 /proc/self/stat; cat /proc/self/oom_score_adj; ulimit -Sn; ulimit -Hn; ionice; } > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"`

// TestE2EProcessLimits: a daemon runs a job with nice, ionice,
// oom_score_adj and nofile, and everything the job forks sees them (issue
// 28's third done-when); a job without them gets the daemon's own.
func TestE2EProcessLimits(t *testing.T) {
	s := newSandbox(t, `defaults:
  timeout: 20s
  schedule: "@hourly"
  command: '`+limitsReadings+`'
jobs:
  - name: limited
    nice: 10
    ionice: idle
    oom_score_adj: 500
    nofile: 1024
    env: {OUT: limited.out}
  - name: plain
    env: {OUT: plain.out}
`)
	if code, out, errOut := s.runCV(20*time.Second, "validate"); code != 0 {
		t.Fatalf("validate: exit %d: %s%s", code, out, errOut)
	}
	d := s.startDaemon()
	defer stopDaemons(t, d)
	for _, job := range []string{"limited", "plain"} {
		if code, out, errOut := s.runCV(10*time.Second, "trigger", job); code != 0 {
			t.Fatalf("trigger %s: exit %d: %s%s", job, code, out, errOut)
		}
	}
	read := func(name string) []string {
		var b []byte
		waitFor(t, 15*time.Second, name, func() bool {
			var err error
			b, err = os.ReadFile(filepath.Join(s.dir, name))
			return err == nil
		})
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	limited, plain := read("limited.out"), read("plain.out")
	want := []string{"10", "500", "1024", "1024", "idle"}
	if strings.Join(limited, "|") != strings.Join(want, "|") {
		t.Errorf("the limited job read nice, oom_score_adj, nofile soft and hard, ionice = %q, want %q", limited, want)
	}
	if len(plain) != 5 || plain[0] != "0" || plain[1] != "0" || plain[2] == "1024" || plain[4] == "idle" {
		t.Errorf("the plain job read %q: want the daemon's own settings (nice 0, oom_score_adj 0, not 1024, not idle)", plain)
	}
	waitFor(t, 10*time.Second, "limited's run recorded", func() bool { return len(s.historyJSON("--job", "limited")) == 1 })
	if r := s.historyJSON("--job", "limited")[0]; r.Outcome != "ok" {
		t.Errorf("limited's run: %+v, want ok", r)
	}
}

// validate refuses a cgroup limit this host cannot apply, naming the key,
// its position and the controller, and accepts the same file where the
// controller is enabled for runs' leaves (as under a delegating systemd
// unit). Here (a cgroup v2 hierarchy without controllers) it refuses.
func TestE2EValidateRefusesLimitsThisHostCannotApply(t *testing.T) {
	s := newSandbox(t, `jobs:
  - name: capped
    schedule: "@hourly"
    command: "true"
    timeout: 1m
    memory_max: 512M
`)
	h, detectErr := cgroup.Detect()
	code, out, _ := s.runCV(10*time.Second, "validate")
	enabled := detectErr == nil && slices.Contains(h.Controllers, "memory")
	switch {
	case enabled && code != 0:
		t.Errorf("validate exit %d with the memory controller enabled, want 0:\n%s", code, out)
	case !enabled && (code != 1 || !strings.Contains(out, "jobs.yaml:7:17: memory_max cannot be applied on this host (the memory controller")):
		t.Errorf("validate exit %d, want 1 naming memory_max at 7:17 and its controller:\n%s", code, out)
	}
}
