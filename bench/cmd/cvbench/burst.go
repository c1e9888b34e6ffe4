package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// burstTail is how long the burst window runs on after its last
// boundary: the last burst's starts and their CPU fall inside it.
const burstTail = 20 * time.Second

// burstRetries is added to the burst's cronvisor defaults: retries
// configured, as a production host would, on jobs that never fail, so
// that nothing more runs.
const burstRetries = "  retries: 2\n  retry_backoff: 5s\n"

// burstOptions are o set for the burst part: o.burstJobs jobs on
// `* * * * *`, a window of o.burstMinutes boundaries.
func burstOptions(o options) options {
	o.jobs, o.period = o.burstJobs, time.Minute
	o.duration = time.Duration(o.burstMinutes-1)*time.Minute + burstTail
	o.alerts = burstRetries + o.alerts
	return o
}

// partName names a lateness part: in the title, the summary's figures,
// and the slot's unit.
type partName struct {
	title, prefix, unit, last string
}

func latenessPart(o options) partName {
	if o.slotPeriod() == time.Minute {
		return partName{
			title:  fmt.Sprintf("burst: %d jobs on * * * * *, all due at each minute boundary", o.jobs),
			prefix: fmt.Sprintf("burst of %d jobs/min", o.jobs), unit: "minute", last: "last start of each burst",
		}
	}
	n := partName{title: fmt.Sprintf("%d: %d job(s) every second", o.jobs, o.jobs), unit: "second",
		prefix: fmt.Sprintf("%d job/s", o.jobs), last: "last start of each second"}
	if o.jobs > 1 {
		n.prefix = fmt.Sprintf("%d jobs/s", o.jobs)
	}
	return n
}

// latenessRows are a lateness part's lines of the summary.
func latenessRows(name partName, m [3][6]float64, runs [3][]latencyRun, checks [3][]fireCheck) []summaryRow {
	figures := []string{"start lateness p50 (ms)", "start lateness p99 (ms)", "start lateness max (ms)",
		name.last + " p50 (ms)", name.last + " p99 (ms)", "CPU per fire (ms)"}
	single := name.prefix == "1 job/s" // one start per slot: its last is its start
	var rows []summaryRow
	for i, f := range figures {
		if single && (i == 3 || i == 4) {
			continue
		}
		row := summaryRow{figure: name.prefix + ": " + f, unit: "%.2f", has: [3]bool{true, true, true}}
		if i == 5 {
			row.unit = "%.3f"
		}
		for side := range m {
			row.vals[side] = m[side][i]
		}
		rows = append(rows, row)
	}
	fires := summaryRow{figure: name.prefix + ": fires started / expected (cronvisor: and every fire started or recorded)"}
	skips := summaryRow{figure: name.prefix + ": skips and failures per rep (cronvisor: with reasons)"}
	for side, cs := range checks {
		var each, sk []string
		for rep, c := range cs {
			s := fmt.Sprintf("%d/%d", c.started, c.expected)
			if side == cronvisorSide {
				s += map[bool]string{true: " PASS", false: " FAIL"}[c.passed()]
			}
			each = append(each, s)
			sk = append(sk, skipText(runs[side][rep]))
		}
		fires.text[side], skips.text[side] = strings.Join(each, ", "), strings.Join(sk, "; ")
	}
	return append(rows, fires, skips)
}

// skipText is a run's skips and failures, with their reasons when the
// scheduler records them (cronvisor's log; supercronic's warnings carry
// none that tell fires apart, the floor has none).
func skipText(r latencyRun) string {
	s := fmt.Sprintf("%d/%d", r.skipped, r.failed)
	if len(r.reasons) == 0 {
		return s
	}
	var rs []string
	for _, k := range slices.Sorted(maps.Keys(r.reasons)) {
		rs = append(rs, fmt.Sprintf("%s: %d", k, r.reasons[k]))
	}
	return s + " (" + strings.Join(rs, ", ") + ")"
}
