package main

import (
	"fmt"
	"io"
	"strings"
)

// summaryRow is one figure of the summary table: per side (bare floor,
// supercronic, cronvisor) a value, or a text where the figure is not a
// number.
type summaryRow struct {
	figure string
	unit   string // the values' format, e.g. "%.2f"
	vals   [3]float64
	has    [3]bool   // which sides have the figure (no floor for idle)
	text   [3]string // instead of vals, when set
}

func printCompareRun(w io.Writer, r latencyRun, c fireCheck) {
	fmt.Fprintf(w, "%-18s %6d/%-6d %8.2f %8.2f %8.2f %10.2f %10.2f %9.3f %5d/%-3d %8d %8d\n", r.label,
		len(r.starts), r.expected, ms(quantile(r.starts, .5)), ms(quantile(r.starts, .99)),
		ms(quantile(r.starts, 1)), ms(quantile(r.last, .5)), ms(quantile(r.last, .99)),
		ms(r.cpuPerFire()), r.skipped, r.failed, c.missing, c.doubled)
}

func printCompareMedians(w io.Writer, label string, m [6]float64) {
	fmt.Fprintf(w, "%-18s %13s %8.2f %8.2f %8.2f %10.2f %10.2f %9.3f\n", label, "", m[0], m[1], m[2], m[3], m[4], m[5])
}

// ratio is a/b as text, "n/a" without a b.
func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// printRatio prints a/b for each median figure.
func printRatio(w io.Writer, name string, a, b [6]float64) {
	fmt.Fprintf(w, "ratio %s: start p50 %s, p99 %s, max %s; last-of-slot p50 %s, p99 %s; cpu/fire %s\n", name,
		ratio(a[0], b[0]), ratio(a[1], b[1]), ratio(a[2], b[2]), ratio(a[3], b[3]), ratio(a[4], b[4]), ratio(a[5], b[5]))
}

// passed says whether every fire was started or recorded, once each.
func (c fireCheck) passed() bool {
	return c.missing == 0 && c.doubled == 0 && c.started+c.recorded == c.expected
}

// printAccount prints what became of a daemon's fires: for cronvisor a
// PASS/FAIL line (every fire started or recorded, none lost), for
// supercronic, which records no skip, the starts against the expected.
func printAccount(w io.Writer, r latencyRun, c fireCheck) {
	if !strings.HasPrefix(r.label, "cronvisor") {
		fmt.Fprintf(w, "%s: %d/%d fires started; %d missing (late over a slot or skipped: it records neither), %d doubled\n",
			r.label, c.started, c.expected, c.missing, c.doubled)
		return
	}
	verdict := "FAIL"
	if c.passed() {
		verdict = "PASS"
	}
	fmt.Fprintf(w, "%s: %s: %d started + %d with a skip or failure record = %d of %d fires; %d lost, %d doubled; "+
		"stopped %.1f s after SIGTERM\n", r.label, verdict, c.started, c.recorded, c.started+c.recorded, c.expected,
		c.missing, c.doubled, r.stopped.Seconds())
}

// printSummary prints the rows as a markdown table with the ratios of
// cronvisor to supercronic and of each to the floor.
func printSummary(w io.Writer, rows []summaryRow) {
	fmt.Fprintln(w, "summary (medians; ratios of the medians):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | bare floor | supercronic | cronvisor | cronvisor / supercronic | cronvisor / floor | supercronic / floor |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		var cell [3]string
		for side := range cell {
			switch {
			case r.text[side] != "":
				cell[side] = r.text[side]
			case r.has[side]:
				cell[side] = fmt.Sprintf(r.unit, r.vals[side])
			default:
				cell[side] = "n/a"
			}
		}
		rat := func(a, b int) string {
			if !r.has[a] || !r.has[b] {
				return ""
			}
			return ratio(r.vals[a], r.vals[b])
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.figure, cell[0], cell[1], cell[2],
			rat(cronvisorSide, supercronicSide), rat(cronvisorSide, floorSide), rat(supercronicSide, floorSide))
	}
}

// compareIdle starts the floor (bench/cmd/floor, when o.floor is set),
// supercronic and cronvisor with o.jobs hourly jobs, in turn, o.reps
// times, and prints their start-up and idle cost.
func compareIdle(o options, w io.Writer) ([]summaryRow, error) {
	runs, err := runIdleSides(o)
	if err != nil {
		return nil, err
	}
	m := printIdleRuns(o, w, runs)
	for _, p := range []struct {
		name string
		a, b int
	}{{"cronvisor/supercronic", cronvisorSide, supercronicSide}, {"cronvisor/floor", cronvisorSide, floorSide},
		{"supercronic/floor", supercronicSide, floorSide}} {
		if len(runs[p.b]) == 0 {
			continue
		}
		a, b := m[p.a], m[p.b]
		fmt.Fprintf(w, "ratio %s: start-up cpu %s, settled %s, idle cpu %s, RSS %s, HWM %s\n", p.name,
			ratio(a[2], b[2]), ratio(a[1], b[1]), ratio(a[4], b[4]), ratio(a[7], b[7]), ratio(a[8], b[8]))
	}
	part := fmt.Sprintf("%d idle hourly jobs: ", o.jobs)
	var rows []summaryRow
	for _, f := range []struct {
		name string
		k    int
		unit string
	}{{"start-up CPU until settled (ms)", 2, "%.1f"}, {"RSS after the idle span (MiB)", 7, "%.1f"},
		{"HWM (MiB)", 8, "%.1f"}, {"idle CPU (ms/min)", 4, "%.2f"}} {
		rows = append(rows, summaryRow{figure: part + f.name, unit: f.unit, has: [3]bool{len(runs[floorSide]) > 0, true, true},
			vals: [3]float64{m[floorSide][f.k], m[supercronicSide][f.k], m[cronvisorSide][f.k]}})
	}
	return rows, nil
}

// runIdleSides runs each side's idle measurement o.reps times, in turn.
func runIdleSides(o options) ([3][]idleRun, error) {
	var runs [3][]idleRun
	for rep := range o.reps {
		if o.floor != "" {
			f, err := runIdleFloor(o, rep)
			if err != nil {
				return runs, err
			}
			runs[floorSide] = append(runs[floorSide], f)
		}
		s, err := runIdleSupercronic(o, rep)
		if err != nil {
			return runs, err
		}
		c, err := runIdle(o, rep)
		if err != nil {
			return runs, err
		}
		runs[supercronicSide], runs[cronvisorSide] = append(runs[supercronicSide], s), append(runs[cronvisorSide], c)
	}
	return runs, nil
}

// printIdleRuns prints every idle run and each side's medians, which it
// returns.
func printIdleRuns(o options, w io.Writer, runs [3][]idleRun) [3][9]float64 {
	fmt.Fprintf(w, "compare idle: %d hourly job(s), cronvisor with %d history row(s) per job, idle span %v, %d rep(s)\n",
		o.jobs, o.rowsPerJob, o.duration, o.reps)
	fmt.Fprintln(w, "the floor and supercronic write no ready line: their start-up is from exec until their CPU use settles, "+
		"as cronvisor's settled is; the floor holds the same schedules on one timer and runs nothing")
	fmt.Fprintf(w, "%-18s %9s %11s %12s %10s %15s %12s %7s %8s %8s\n", "run", "ready ms", "settled ms",
		"start cpu ms", "(stat) ms", "idle cpu ms/min", "wakeups/min", "threads", "RSS MiB", "HWM MiB")
	row := func(label string, v [9]float64) {
		ready := "-"
		if v[0] > 0 {
			ready = fmt.Sprintf("%.1f", v[0])
		}
		fmt.Fprintf(w, "%-18s %9s %11.1f %12.1f %10.0f %15.2f %12.1f %7.0f %8.1f %8.1f\n",
			label, ready, v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])
	}
	var m [3][9]float64
	for side, name := range [3]string{"floor", "supercronic", "cronvisor"} {
		if len(runs[side]) == 0 {
			continue
		}
		var cols [9][]float64
		for i, r := range runs[side] {
			v := r.figures()
			row(fmt.Sprintf("%s #%d", name, i+1), v)
			for k := range v {
				cols[k] = append(cols[k], v[k])
			}
		}
		for k := range cols {
			m[side][k] = median(cols[k])
		}
		row("median "+name, m[side])
	}
	return m
}
