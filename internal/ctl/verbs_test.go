package ctl

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestFireHoldSays: the one sentence every client prints for a refused
// or forced fire, and what the job stays.
func TestFireHoldSays(t *testing.T) {
	at := time.Now().Truncate(time.Minute)
	by := &PauseInfo{User: "root", At: at}
	tests := []struct {
		name       string
		hold       FireHold
		want, stay string
	}{
		{"paused", FireHold{Paused: true, PausedBy: by}, "the job is paused (by root at " + at.Local().Format("15:04") + ")", "it stays paused"},
		{"paused, nobody known", FireHold{Paused: true}, "the job is paused", "it stays paused"},
		{"disabled", FireHold{Disabled: true}, "the job is disabled (enabled: false in jobs.yaml)", "it stays disabled"},
		{"both", FireHold{Paused: true, PausedBy: &PauseInfo{User: "ops"}, Disabled: true},
			"the job is paused (by ops) and disabled (enabled: false in jobs.yaml)", "it stays paused and disabled"},
		{"another day", FireHold{Paused: true, PausedBy: &PauseInfo{User: "root", At: at.AddDate(0, 0, -2)}},
			"the job is paused (by root at " + at.AddDate(0, 0, -2).Local().Format("2006-01-02 15:04") + ")", "it stays paused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hold.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := tt.hold.Stays(); got != tt.stay {
				t.Errorf("Stays() = %q, want %q", got, tt.stay)
			}
		})
	}
}

// TestKillResultLines: a kill's answer at every moment of a run's end.
func TestKillResultLines(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	hms := func(t time.Time) string { return t.Local().Format("15:04:05") }
	ended := KilledRun{RunID: "r1", Ended: true, Outcome: run.Interrupted}
	tests := []struct {
		name string
		res  KillResult
		want []string
	}{
		{"nothing ran", KillResult{Now: now}, nil},
		{"ended", KillResult{Killed: 1, Now: now, Runs: []KilledRun{ended}}, []string{"killed j: 1 run ended (interrupted)"}},
		{"two ended, one adopted", KillResult{Killed: 3, Now: now, Runs: []KilledRun{ended, {RunID: "r2", Ended: true, Outcome: run.Interrupted},
			{RunID: "r3", Adopted: true, Ended: true, Outcome: run.OK}}},
			[]string{"killed j: 2 runs ended (interrupted)", "killed j: 1 adopted run ended (ok)"}},
		{"signalled, still going", KillResult{Killed: 1, Now: now, Runs: []KilledRun{{RunID: "r1", SignalledAt: now, KillAt: now.Add(2500 * time.Millisecond)}}},
			[]string{"killed j: 1 run signalled: ending within 3s (SIGKILL due at " + hms(now.Add(2500*time.Millisecond)) + ")"}},
		{"a second kill", KillResult{Killed: 1, Now: now, Runs: []KilledRun{{RunID: "r1", Already: true, SignalledAt: now.Add(-time.Second), KillAt: now.Add(2 * time.Second)}}},
			[]string{"kill j: run r1 is already being ended (signalled at " + hms(now.Add(-time.Second)) + "); SIGKILL due at " + hms(now.Add(2*time.Second)) + ", in 2s"}},
		{"past its SIGKILL", KillResult{Killed: 1, Now: now, Runs: []KilledRun{{RunID: "r1", Already: true, SignalledAt: now.Add(-5 * time.Second), KillAt: now.Add(-2 * time.Second)}}},
			[]string{"kill j: run r1 is already being ended (signalled at " + hms(now.Add(-5*time.Second)) + "); SIGKILL sent at " + hms(now.Add(-2*time.Second)) + ", not ended yet"}},
		{"a retry cancelled", KillResult{Killed: 1, Now: now, RetriesCancelled: 1}, []string{"killed j: no retry: 1 slot waiting for its next attempt ended"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.res.Lines("j", nil); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
