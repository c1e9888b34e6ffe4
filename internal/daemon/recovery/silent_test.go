package recovery

import (
	"context"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestAnAdoptedRunWithoutItsKeeperIsEndedAndToldSo: an adopted run whose
// keeper does not answer (4242, frozen) or is gone (none) is ended by
// EndAdopted's fallback through its process group, SIGTERM then SIGKILL
// after the job's kill_grace; Silent says which keeper did not answer,
// how the run was ended, and, once nothing of it is left, that it ended;
// the record is the operator's kill.
func TestAnAdoptedRunWithoutItsKeeperIsEndedAndToldSo(t *testing.T) {
	for _, keeper := range []int{4242, 0} {
		t.Run("keeper "+itoa(keeper), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) { c.KillGrace = func(string) time.Duration { return time.Second } })
			pid, reap := f.orphan(t, "j", "r", started)
			if _, err := f.r.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.r.Adopted("r"); !ok {
				t.Fatal("the run is not adopted")
			}
			if keeper == 0 {
				f.r.EndAdopted("r", false) // no keeper of this state dir lives
			} else {
				f.r.mu.Lock()
				f.r.asked["r"] = "killed by operator" // as EndAdopted notes it
				o := f.r.adopted["r"]
				f.r.mu.Unlock()
				f.r.endWithoutKeeper(o, keeper)
			}
			k, via, _, ok := f.r.Silent("r")
			if !ok || k != keeper || via != "process group" {
				t.Fatalf("Silent: keeper %d, via %q, %v; want %d, process group", k, via, ok, keeper)
			}
			f.closedWithin(t, "r", recordBound) // the sleep died of the SIGTERM: its lock is free
			reap()                              // its parent, the test, reaps it: the group is empty
			deadline := time.After(10 * time.Second)
			for _, _, ended, _ := f.r.Silent("r"); !ended; _, _, ended, _ = f.r.Silent("r") {
				select {
				case <-deadline:
					t.Fatalf("the run's group (pgid %d) not told ended", pid)
				case <-time.After(20 * time.Millisecond):
				}
			}
			if got, _ := f.row(t, "r"); got.Outcome != run.Interrupted || got.Reason != "killed by operator" {
				t.Errorf("row %+v, want interrupted, killed by operator", got)
			}
		})
	}
}

// TestAKeptEndOfARunEndedWithoutItsKeeper: the End a keeper writes once
// resumed (the run exited of this daemon's SIGTERM) is recorded as the
// kill that ended it, saying how.
func TestAKeptEndOfARunEndedWithoutItsKeeper(t *testing.T) {
	tests := []struct {
		name    string
		silence *silence
		asked   string
		want    run.Outcome // "": left to the End
		reason  string
	}{
		{"killed, keeper silent", &silence{keeper: 9, via: "cgroup leaf"}, "killed by operator", run.Interrupted,
			"killed by operator (its keeper did not answer: ended through its cgroup leaf)"},
		{"replaced, keeper silent", &silence{keeper: 9, via: "process group"}, "replaced by a newer fire", run.Replaced,
			"replaced by a newer fire (its keeper did not answer: ended through its process group)"},
		{"keeper answered", nil, "killed by operator", "", ""},
		{"nothing signalled", &silence{keeper: 9}, "killed by operator", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.r.mu.Lock()
			f.r.asked["r"] = tc.asked
			if tc.silence != nil {
				f.r.silent = map[string]silence{"r": *tc.silence}
			}
			f.r.mu.Unlock()
			e := run.End{RunID: "r"}
			if got := f.r.endedWithoutKeeper(&e); got != (tc.want != "") || e.Outcome != tc.want || !strings.EqualFold(e.Reason, tc.reason) {
				t.Errorf("endedWithoutKeeper: %v, %s %q; want %s %q", got, e.Outcome, e.Reason, tc.want, tc.reason)
			}
		})
	}
}
