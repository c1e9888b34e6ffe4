package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// durabilities are the two values of jobs.yaml's durability key, each
// with the line that selects it (issue 29).
var durabilities = []struct{ name, yaml string }{
	{"machine", "durability: machine\n"},
	{"process", "durability: process\n"},
}

// eachDurability runs f as a parallel subtest per durability mode, given
// the jobs.yaml line that selects it: the "nothing lost" tests hold in
// both, since process leaves out only the syncs that a machine crash
// needs, never a write a crash of a process could lose.
func eachDurability(t *testing.T, f func(t *testing.T, yaml string)) {
	t.Helper()
	for _, d := range durabilities {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			f(t, d.yaml)
		})
	}
}

// syncCalls are the system calls that write the page cache to disk.
const syncCalls = "trace=fsync,fdatasync,sync_file_range,syncfs,sync,msync"

// TestE2EDurabilitySyncs (issue 29): every process of a daemon and of a
// `cronvisor run` beside it (keepers and jobs too), under strace, for a
// few scheduled and one manual run: with durability: machine they sync
// (the history's commits, the slot cursors, these through the daemon's
// cursor journal and never a lock file's own sync); with process, not
// once.
func TestE2EDurabilitySyncs(t *testing.T) {
	fullSuiteOnly(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatal("strace is missing: test.sh installs it")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		wantSyncs  bool
	}{
		{"machine", "durability: machine\n", true},
		{"process", "durability: process\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, tc.yaml+`jobs:
  - {name: tick, schedule: "* * * * * *", command: "true", timeout: 10s}
`)
			traces := t.TempDir()
			traced := func(name string, args ...string) *proc {
				return s.startEnv(nil, strace, append([]string{"-f", "-qq", "-y", "-e", syncCalls,
					"-o", filepath.Join(traces, name), cvBin, "--config", s.config}, args...)...)
			}
			d := traced("daemon", "daemon", "--log-format", "json")
			waitFor(t, 20*time.Second, "the daemon started", func() bool { return strings.Contains(d.stderr(), `"msg":"cronvisor started"`) })
			waitFor(t, 20*time.Second, "three scheduled runs recorded", func() bool { return len(s.runsByID()) >= 3 })
			if code := traced("run", "run", "tick").wait(20 * time.Second); code != 0 {
				t.Errorf("run tick: exit %d", code)
			}
			waitFor(t, 10*time.Second, "one more run recorded", func() bool { return len(s.runsByID()) >= 5 })
			_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
			d.wait(10 * time.Second)
			for _, name := range []string{"daemon", "run"} {
				var syncs []string
				for _, l := range lines(readFile(t, filepath.Join(traces, name))) {
					if strings.Contains(l, "sync") {
						syncs = append(syncs, l)
					}
				}
				if (len(syncs) > 0) != tc.wantSyncs {
					t.Errorf("%s: %d sync calls, want syncs %v: %q", name, len(syncs), tc.wantSyncs, syncs[:min(len(syncs), 5)])
				}
				// The slot cursors are made durable by the cursor journal's
				// group sync, never by a sync of each lock file.
				journal := 0
				for _, l := range syncs {
					if strings.Contains(l, ".lock>") {
						t.Errorf("%s synced a lock file: %s", name, l)
					}
					if strings.Contains(l, "/cursors/") {
						journal++
					}
				}
				if name == "daemon" && tc.wantSyncs && journal == 0 {
					t.Errorf("daemon: no sync of its cursor journal among %q", syncs[:min(len(syncs), 8)])
				}
				t.Logf("%s: %d sync calls", name, len(syncs))
			}
			if want := `"durability":"` + tc.name + `"`; !strings.Contains(d.stderr(), want) {
				t.Errorf("the daemon's start record lacks %s", want)
			}
		})
	}
}
