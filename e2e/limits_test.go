package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/proc/cgroup"

	"golang.org/x/sys/unix"
)

// limitsReadings is what a job writes of its own settings, read from
// inside it by the processes it forks: nice, oom_score_adj, the soft and
// hard open-file limits and the I/O priority; then whether the job's own
// process is traced (its TracerPid).
const limitsReadings = `{ cut -d" " -f19 /proc/self/stat; cat /proc/self/oom_score_adj; ulimit -Sn; ulimit -Hn; ionice; grep ^TracerPid /proc/$$/status | cut -f2; } > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"`

// TestE2EProcessLimits: a daemon runs a job with nice, ionice,
// oom_score_adj and nofile, and everything the job forks sees them (issue
// 28's third done-when); a job without them gets the daemon's own. The
// same holds for a daemon without CAP_SYS_PTRACE, which starts such runs
// through the exec shim rather than stopped at their exec, and either
// way the job runs untraced.
func TestE2EProcessLimits(t *testing.T) {
	for _, way := range []struct {
		name   string
		prefix []string // what starts the daemon
	}{
		{"traced", nil},
		{"shim: no CAP_SYS_PTRACE", []string{"setpriv", "--bounding-set", "-sys_ptrace", "--inh-caps", "-sys_ptrace"}},
	} {
		t.Run(way.name, func(t *testing.T) { processLimits(t, way.prefix) })
	}
}

func processLimits(t *testing.T, prefix []string) {
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
	d := s.startDaemonVia(prefix)
	defer stopDaemons(t, d)
	if traces, want := hasCap(t, d.pid(), unix.CAP_SYS_PTRACE), len(prefix) == 0; traces != want {
		t.Fatalf("the daemon has CAP_SYS_PTRACE: %v, want %v", traces, want)
	}
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
	want := []string{"10", "500", "1024", "1024", "idle", "0"}
	if strings.Join(limited, "|") != strings.Join(want, "|") {
		t.Errorf("the limited job read nice, oom_score_adj, nofile soft and hard, ionice, TracerPid = %q, want %q", limited, want)
	}
	if len(plain) != 6 || plain[0] != "0" || plain[1] != "0" || plain[2] == "1024" || plain[4] == "idle" || plain[5] != "0" {
		t.Errorf("the plain job read %q: want the daemon's own settings (nice 0, oom_score_adj 0, not 1024, not idle), untraced", plain)
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

// hasCap reports whether process pid has capability c in effect.
func hasCap(t *testing.T, pid, c int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for ln := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(ln, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<c) != 0
		}
	}
	t.Fatalf("no CapEff in /proc/%d/status", pid)
	return false
}
