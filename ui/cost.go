package ui

import (
	"fmt"
	"time"

	"cronvisor/internal/base/run"
)

// costLine is what an ended run cost, the first line of its output pane:
// "cpu 0.52s user + 0.03s system · peak 120 MiB", or why it is unknown.
// "" for a record that is no run (a skip, a run that never started).
func costLine(st styles, r run.Record) string {
	if r.StartedAt.IsZero() || !r.Outcome.Final() || r.Outcome == run.Skipped {
		return ""
	}
	u := r.Usage
	if !u.Measured {
		return st.muted.Render("  cost not measured (no cgroup)")
	}
	s := "  cpu " + cpuSeconds(u.CPUUser) + " user + " + cpuSeconds(u.CPUSystem) + " system · peak "
	if u.MemoryPeak > 0 {
		s += bytesText(u.MemoryPeak)
	} else {
		s += "memory not measured"
	}
	s = st.muted.Render(s)
	if u.OOMKilled {
		s += st.warn.Render(" · killed by the OOM killer")
	}
	return s
}

// cpuSeconds is a CPU time in seconds, to the hundredth.
func cpuSeconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// bytesText is a size in binary units: "512 B", "64 KiB", "120 MiB",
// "1.5 GiB", a decimal only under 10 units.
func bytesText(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if i > 0 && v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%d %s", int64(v), units[i])
}
