package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// infoLines is the height of the definition block at the top of the view.
const infoLines = 5

// runsHeight is the rows of the runs list: a third of what is left after
// the definition, the durations and the two rules, between 3 and 8.
func (v detailView) runsHeight() int {
	return max(3, min(8, (v.height-infoLines-v.durHeight()-2)/3))
}

// outputHeight is the rows of the output pane.
func (v detailView) outputHeight() int {
	return max(1, v.height-infoLines-v.durHeight()-2-v.runsHeight())
}

// View draws the job.
func (v detailView) View() string {
	j, ok := v.c.data.job(v.job)
	if !ok {
		return pad([]string{"", v.c.st.errText.Render("  " + v.job + " is no longer in jobs.yaml (esc: back)")}, v.height)
	}
	if v.lv.full {
		return v.lv.title(v.outputTitle()) + "\n" + v.lv.View()
	}
	lines := append(v.info(j), v.durLines()...)
	lines = append(lines, v.rule("runs and skips", fmt.Sprintf("%d of %d", v.sel+1, len(v.recs)+1)))
	lines = append(lines, strings.Split(pad(v.runs(j), v.runsHeight()), "\n")...)
	lines = append(lines, v.lv.title(v.outputTitle()))
	return strings.Join(lines, "\n") + "\n" + v.lv.View()
}

// info is the definition block: the job's name and state, then one line
// each for its schedule, lock, current run and history.
func (v detailView) info(j ctl.JobStatus) []string {
	st, now := v.c.st, v.c.now()
	title := " " + st.section.Render(j.Name) + "  " + st.state(j.State).Render(stateGlyph(j.State)+" "+nowText(j, now))
	if j.Paused && j.State == ctl.StateRunning {
		title += st.warn.Render(" (paused)")
	}
	sched := j.Schedule + st.muted.Render(" ("+j.Timezone+")")
	if !j.NextRun.IsZero() && j.State != ctl.StatePaused && !j.Paused && j.Enabled {
		sched += " · next " + inTime(now, j.NextRun) + " at " + clock(now, j.NextRun)
	}
	last := lastText(st, j, now) + st.muted.Render(" · "+countsText(j.Counts, now))
	lines := []string{fit(title, v.width)}
	for _, p := range [][2]string{{"schedule", sched}, {"lock", lockText(st, j, now)},
		{"run", runText(j, now)}, {"history", last}} {
		lines = append(lines, fit(" "+st.label.Render(fmt.Sprintf("%-9s", p[0]))+p[1], v.width))
	}
	return lines
}

// lockText is the job's lock and who holds it, in words.
func lockText(st styles, j ctl.JobStatus, now time.Time) string {
	h := j.Holder
	switch {
	case j.Lock == "":
		return st.muted.Render("none (overlap: allow)")
	case h == nil:
		return j.Lock + st.muted.Render(" · free")
	}
	held := " for " + dur(now.Sub(h.Since))
	if h.Since.IsZero() {
		held = ""
	}
	who := "pid " + pidHost(h.PID, h.Host)
	switch holderKind(j, h) {
	case "own":
		return j.Lock + " · " + st.run.UnsetBold().Render("held by this run, "+who+held)
	case "foreign":
		return j.Lock + " · " + st.foreign.Render("held outside cronvisor by "+who+held+": "+h.Cmdline)
	}
	return j.Lock + " · " + st.warn.Render("held by "+h.Job+" run "+h.RunID+", "+who+held)
}

func lastText(st styles, j ctl.JobStatus, now time.Time) string {
	if j.LastOutcome == "" {
		return st.muted.Render("never ran")
	}
	return st.outcome(j.LastOutcome).Render(glyph(j.LastOutcome)+" "+string(j.LastOutcome)) + " " + ago(now, j.LastEndedAt)
}

func runText(j ctl.JobStatus, now time.Time) string {
	if j.State == ctl.StateRetrying {
		return "none running; " + retryText(j, now)
	}
	if w := j.WaitingFor; w != nil && j.State != ctl.StateRunning {
		return "none running; " + waitText(*w, now)
	}
	if j.State != ctl.StateRunning {
		return "none running"
	}
	s := j.RunID + " · pid " + strconv.Itoa(j.PID) + " since " + clock(now, j.StartedAt)
	if len(j.Resources) > 0 {
		s += " · slots " + strings.Join(j.Resources, " ")
	}
	if !j.LastBeatAt.IsZero() {
		s += " · " + beatText(j, now)
	}
	if !j.Deadline.IsZero() {
		s += " · deadline " + clock(now, j.Deadline) + " (" + dur(j.Deadline.Sub(j.StartedAt).Round(time.Second)) + " timeout)"
	}
	return s
}

// waitText is a fire's wait for a resource's slot: "run r1 waiting for
// db (2/2 held) since 12:00:01, gives up in 50s".
func waitText(w ctl.Waiting, now time.Time) string {
	return "run " + w.RunID + " " + w.String() + " since " + clock(now, w.Since) + ", gives up " + inTime(now, w.Until)
}

// beatText is the run's newest beat: its progress and how long ago it
// came (docs/heartbeats.md).
func beatText(j ctl.JobStatus, now time.Time) string {
	if j.Progress == "" {
		return "beat " + ago(now, j.LastBeatAt)
	}
	return "progress " + j.Progress + " (beat " + ago(now, j.LastBeatAt) + ")"
}

func countsText(c ctl.Counts, now time.Time) string {
	if c.Since.IsZero() {
		return "no counts: no daemon has counted this job"
	}
	s := plural(c.Runs, "run") + ", " + plural(c.Skips, "skip") + ", " + plural(c.Failures, "failure")
	if !c.Since.IsZero() {
		s += " since " + clock(now, c.Since)
	}
	return s
}

// rule is a section line of the view.
func (v detailView) rule(title, right string) string {
	if right != "" {
		right = v.c.st.muted.Render(right)
	}
	return rule(v.c.st, title, right, v.width)
}

// recordColumns lay out a list of records: outcome, time (timeW wide),
// run time, and why. They have no titles; the list reads without them.
func recordColumns(timeW int) []column {
	return []column{
		{min: 9, want: 11, max: 13, grow: 2},
		{min: 8, want: timeW, max: timeW, grow: 3},
		{min: 4, want: 6, max: 6, drop: 1, grow: 4},
		{min: 10, want: 30, max: 200, grow: 1},
	}
}

// runs is the list of the live output and the job's recent records.
func (v detailView) runs(j ctl.JobStatus) []string {
	st, now := v.c.st, v.c.now()
	times := []time.Time{j.StartedAt}
	for _, r := range v.recs[max(v.off-1, 0):min(v.off+v.runsHeight(), len(v.recs))] {
		times = append(times, startTime(r))
	}
	widths := layout(recordColumns(clockWidth(now, times...)), v.width-2)
	var lines []string
	for i := v.off; i < len(v.recs)+1 && i < v.off+v.runsHeight(); i++ {
		var cells []cell
		if i == 0 {
			live := cell{text: "▶ live", id: runID}
			what := fmt.Sprintf("output of run %s, pid %d", j.RunID, j.PID)
			if j.State != ctl.StateRunning {
				live = cell{text: "· live", id: mutedID}
				what = "not running; the last " + strconv.Itoa(tailLines) + " lines seen are kept"
			}
			cells = []cell{live, {text: clock(now, j.StartedAt), id: mutedID}, {}, {text: what, id: mutedID}}
		} else {
			cells = recordCells(st, now, v.recs[i-1])
		}
		lines = append(lines, row(st, cells, widths, i == v.sel, v.width))
	}
	return lines
}

// recordCells are one history record as list cells: outcome, time,
// duration, and why.
func recordCells(st styles, now time.Time, r run.Record) []cell {
	why := st.outcome(r.Outcome).UnsetBold()
	return []cell{
		{text: glyph(r.Outcome) + " " + string(r.Outcome), id: outcomeID(r.Outcome)},
		{text: clock(now, startTime(r)), id: mutedID},
		{text: runTime(r), id: mutedID},
		{text: localTimes(now, recordDetail(r)), style: &why},
	}
}

func (v detailView) outputTitle() string {
	r, ok := v.selected()
	t := "live output"
	if ok {
		t = "run " + r.RunID
	}
	if v.lv.full { // the runs list above is gone: say whose
		return v.job + " · " + t
	}
	return t
}
