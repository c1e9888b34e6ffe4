package service

import (
	"testing"

	"cronvisor/internal/ctl"
)

// TestKillTellsAKeeperThatDidNotAnswer: an adopted run that recovery
// ended without its keeper (which did not answer) is told so, with the
// keeper's pid, how the run was ended and whether it is over; a keeper
// that answered, or none alive, leaves the run to the usual answer.
func TestKillTellsAKeeperThatDidNotAnswer(t *testing.T) {
	type silence struct {
		keeper     int
		via        string
		ended, ok  bool
		configured bool
	}
	tests := []struct {
		name    string
		adopted bool
		s       silence
		want    ctl.KilledRun // RunID and Adopted aside
		noted   bool
	}{
		{"no recovery", true, silence{}, ctl.KilledRun{}, false},
		{"own run", false, silence{keeper: 7, via: "cgroup leaf", ended: true, ok: true, configured: true}, ctl.KilledRun{}, false},
		{"the keeper answered", true, silence{configured: true}, ctl.KilledRun{}, false},
		{"no keeper alive", true, silence{via: "process group", ok: true, configured: true}, ctl.KilledRun{}, false},
		{"silent, ended", true, silence{keeper: 7, via: "cgroup leaf", ended: true, ok: true, configured: true},
			ctl.KilledRun{KeeperSilent: true, KeeperPID: 7, EndedVia: "cgroup leaf", Ended: true}, true},
		{"silent, going", true, silence{keeper: 7, via: "process group", ok: true, configured: true},
			ctl.KilledRun{KeeperSilent: true, KeeperPID: 7, EndedVia: "process group"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{}
			if tc.s.configured {
				WithSilentKeepers(func(string) (int, string, bool, bool) { return tc.s.keeper, tc.s.via, tc.s.ended, tc.s.ok })(s)
			}
			k := ctl.KilledRun{RunID: "r", Adopted: tc.adopted}
			if got := s.noteSilent(&k); got != tc.noted {
				t.Errorf("noteSilent: %v, want %v", got, tc.noted)
			}
			k.RunID, k.Adopted = "", false
			if k != tc.want {
				t.Errorf("the run told %+v, want %+v", k, tc.want)
			}
		})
	}
}
