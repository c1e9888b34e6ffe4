package e2e

import (
	"fmt"
	"testing"
	"time"
)

// burnHalfSecond is a job that burns 0.5 s of CPU of its own, whatever
// the machine's load: a shell loop that reads its own utime+stime
// (/proc/$$/stat, fields 14 and 15, in clock ticks) until they reach half
// a second. No process is started in the loop (read and set are
// builtins), so the run's CPU is the shell's, plus getconf's and the
// shell's start-up.
const burnHalfSecond = `hz=$(getconf CLK_TCK); ` +
	`while :; do read -r s < /proc/$$/stat; set -- $s; [ $(( ${14} + ${15} )) -ge $(( hz / 2 )) ] && exit 0; done`

// TestE2EUsageOfABusyRun: issue 28's "a run that burns 0.5 s of CPU has
// cpu_user+cpu_system within 20 % of it in history --json". It needs the
// run's cgroup accounting (package cgroup, through proc.Run): until a run
// is contained and measured, its record has null CPU times and the test
// fails saying "usage not measured".
func TestE2EUsageOfABusyRun(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, fmt.Sprintf(`jobs:
  - {name: burn, schedule: "@yearly", command: %q, timeout: 60s}
`, burnHalfSecond))
	start := time.Now()
	if code, _, stderr := s.runCV(60*time.Second, "run", "burn"); code != 0 {
		t.Fatalf("run burn: exit %d; stderr %q", code, stderr)
	}
	t.Logf("the run took %v of wall time", time.Since(start).Round(time.Millisecond))
	recs := s.historyRaw("--job", "burn")
	if len(recs) != 1 {
		t.Fatalf("history --json: %d records, want 1: %v", len(recs), recs)
	}
	r := recs[0]
	if r["outcome"] != "ok" {
		t.Fatalf("outcome %v (reason %v), want ok", r["outcome"], r["reason"])
	}
	user, okU := r["cpu_user_ms"].(float64)
	system, okS := r["cpu_system_ms"].(float64)
	if !okU || !okS {
		t.Fatalf("usage not measured: cpu_user_ms %v, cpu_system_ms %v (is the run contained in a cgroup? see status)",
			r["cpu_user_ms"], r["cpu_system_ms"])
	}
	t.Logf("cpu_user_ms %v, cpu_system_ms %v, memory_peak_bytes %v", user, system, r["memory_peak_bytes"])
	if sum := user + system; sum < 400 || sum > 600 {
		t.Errorf("cpu_user_ms + cpu_system_ms = %v, want 500 within 20 %% (400..600)", sum)
	}
	if r["oom_killed"] != false {
		t.Errorf("oom_killed = %v, want false", r["oom_killed"])
	}
}
