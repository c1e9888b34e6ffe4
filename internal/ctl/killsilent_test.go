package ctl

import (
	"strings"
	"testing"
	"time"
)

// TestKillResultOfASilentKeeper: an adopted run whose keeper did not
// answer is told apart, with the keeper's pid and how the daemon ended
// the run, and the result is Silent (the kill exits non-zero).
func TestKillResultOfASilentKeeper(t *testing.T) {
	now := time.Now()
	const tail = "; its record waits for its keeper, which holds its lock, to resume or be gone"
	tests := []struct {
		name string
		run  KilledRun
		want string
	}{
		{"ended", KilledRun{RunID: "r1", Adopted: true, KeeperSilent: true, KeeperPID: 7, EndedVia: "cgroup leaf", Ended: true},
			"kill j: adopted run r1 signalled, keeper not answering (pid 7): ended through its cgroup leaf" + tail},
		{"going", KilledRun{RunID: "r1", Adopted: true, KeeperSilent: true, KeeperPID: 7, EndedVia: "process group"},
			"kill j: adopted run r1 signalled, keeper not answering (pid 7): SIGTERM sent through its process group, not ended yet" + tail},
		{"nothing found", KilledRun{RunID: "r1", Adopted: true, KeeperSilent: true, KeeperPID: 7},
			"kill j: adopted run r1 signalled, keeper not answering (pid 7): nothing of the run found to signal; it goes on"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := KillResult{Killed: 1, Now: now, Runs: []KilledRun{tc.run}}
			if got := strings.Join(res.Lines("j", nil), "\n"); got != tc.want {
				t.Errorf("Lines:\n%s\nwant\n%s", got, tc.want)
			}
			if !res.Silent() {
				t.Error("Silent: false, want true")
			}
		})
	}
	if (KillResult{Runs: []KilledRun{{RunID: "r1", Ended: true}}}).Silent() {
		t.Error("Silent of a run ended by its keeper: true")
	}
}
