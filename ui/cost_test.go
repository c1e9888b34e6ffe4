package ui

import (
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

func TestCostLine(t *testing.T) {
	st := newStyles(lipgloss.DefaultRenderer(), defaultTheme())
	ran := func(o run.Outcome, u run.Usage) run.Record {
		return run.Record{Job: "j", RunID: "r", Outcome: o, StartedAt: at(-time.Minute), EndedAt: at(0), Usage: u}
	}
	measured := run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 120 << 20}
	for _, tc := range []struct {
		name string
		rec  run.Record
		want string
	}{
		{"measured", ran(run.OK, measured), "  cpu 0.52s user + 0.03s system · peak 120 MiB"},
		{"no memory controller", ran(run.OK, run.Usage{Measured: true, CPUUser: 2500 * time.Millisecond}),
			"  cpu 2.50s user + 0.00s system · peak memory not measured"},
		{"OOM killed", ran(run.Failed, run.Usage{Measured: true, MemoryPeak: 1536 << 20, OOMKilled: true}),
			"  cpu 0.00s user + 0.00s system · peak 1.5 GiB · killed by the OOM killer"},
		{"not measured", ran(run.Timeout, run.Usage{}), "  cost not measured (no cgroup)"},
		{"still running", ran(run.Running, measured), ""},
		{"skipped", run.Record{Job: "j", RunID: "r", Outcome: run.Skipped, ScheduledAt: at(0)}, ""},
		{"never started", run.Record{Job: "j", RunID: "r", Outcome: run.Error, EndedAt: at(0)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := costLine(st, tc.rec); got != tc.want {
				t.Errorf("costLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBytesText(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {64 << 10, "64 KiB"}, {120 << 20, "120 MiB"}, {1536 << 20, "1.5 GiB"}, {1 << 30, "1 GiB"}, {300 << 30, "300 GiB"}} {
		if got := bytesText(tc.n); got != tc.want {
			t.Errorf("bytesText(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestFinishedEventCarriesUsage: the record the console makes of a
// run_finished event has the run's cost before history is read again.
func TestFinishedEventCarriesUsage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage *ctl.WireUsage
		want  run.Usage
	}{
		{"measured", &ctl.WireUsage{CPUUserMS: 520, CPUSystemMS: 30, MemoryPeakBytes: 1 << 20},
			run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 1 << 20}},
		{"not measured", nil, run.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			s.apply(ctl.WireEvent{Type: ctl.EventRunFinished, Job: "a", RunID: "r2", Time: at(time.Minute), StartedAt: at(0),
				Outcome: "ok", Usage: tc.usage})
			if len(s.records) != 1 || s.records[0].Usage != tc.want {
				t.Fatalf("records %+v, want one with usage %+v", s.records, tc.want)
			}
		})
	}
}
