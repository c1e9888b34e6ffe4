package runner

import (
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"cronvisor/internal/config"
	"cronvisor/internal/proc"
)

func TestSetupFromLimits(t *testing.T) {
	n, oom, files, core := 10, -5, uint64(1024), uint64(config.Unlimited)
	tests := []struct {
		name   string
		limits config.Limits
		want   *proc.Setup
	}{
		{"none: no shim", config.Limits{}, nil},
		{"cgroup limits only: no shim", config.Limits{MemoryMax: 1 << 30, CPUMax: 0.5}, nil},
		{"nice", config.Limits{Nice: &n}, &proc.Setup{Nice: &n}},
		{"ionice idle", config.Limits{IONice: "idle"}, &proc.Setup{IOPrio: &proc.IOPrio{Class: proc.IOPrioIdle}}},
		{"ionice best-effort", config.Limits{IONice: "best-effort:7"}, &proc.Setup{IOPrio: &proc.IOPrio{Class: proc.IOPrioBestEffort, Level: 7}}},
		{"ionice realtime", config.Limits{IONice: "realtime:0"}, &proc.Setup{IOPrio: &proc.IOPrio{Class: proc.IOPrioRealtime}}},
		{"oom_score_adj", config.Limits{OOMScoreAdj: &oom}, &proc.Setup{OOMScoreAdj: &oom}},
		{"rlimits", config.Limits{NoFile: &files, Core: &core},
			&proc.Setup{Rlimits: []proc.Rlimit{{Resource: unix.RLIMIT_NOFILE, Value: 1024}, {Resource: unix.RLIMIT_CORE, Value: unix.RLIM_INFINITY}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := setup(tt.limits); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("setup = %+v, want %+v", got, tt.want)
			}
		})
	}
}
