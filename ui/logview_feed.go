package ui

import (
	"cronvisor/internal/ctl"
)

// feedLog hands the log pane what the selection shows: anew when the
// selection or its saved log changed, as more lines when the live output
// (or an adopted run's saved log) grew.
func (v detailView) feedLog(j ctl.JobStatus) detailView {
	st := v.c.st
	r, picked := v.selected()
	var head []string
	if cost := costLine(st, r); picked && cost != "" {
		head = append(head, cost)
	}
	switch {
	case picked:
		lines := v.log.lines
		if v.log.none {
			head, lines = append(head, noLog(st, v.c.now(), r)...), nil
		}
		return v.feed("saved "+v.selKey+"#"+itoa(v.log.gen), v.job+"-"+r.RunID, head, lines, nil, len(lines), false)
	case j.Adopted && j.State == ctl.StateRunning && v.adopted.key == j.RunID:
		lines := v.adopted.lines
		return v.feed("adopted "+j.RunID, v.job+"-"+j.RunID, head, lines, nil, len(lines), true)
	}
	total := v.c.data.tailTotal(v.job)
	if total == 0 {
		head = []string{st.muted.Render("no output seen yet; the output of the next run of " + v.job + " appears here live")}
	}
	id := "live " + v.job
	if id == v.onLog && total == v.lv.total && len(head) == len(v.lv.head) {
		return v // nothing new: the tail is not copied again
	}
	name := v.job + "-live"
	if j.RunID != "" {
		name = v.job + "-" + j.RunID
	}
	return v.feed(id, name, head, v.c.data.tail(v.job), v.c.data.tailTimes(v.job), total, true)
}

// feed shows lines as the log id, which grows (live) or is replaced.
func (v detailView) feed(id, name string, head, lines []string, times []int64, total int, live bool) detailView {
	switch {
	case id != v.onLog:
		v.lv = v.lv.show(name, head, lines, times, live)
		v.lv.total = total
	case total != v.lv.total || len(head) != len(v.lv.head):
		v.lv = v.lv.grow(head, lines, times, total)
		v.lv.name = name
	default:
		v.lv.head = head // a cost line's figures may change
	}
	v.onLog = id
	return v
}
