package ui

import (
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// The timeline's marks. A bar is its run from start to end, the end cell
// holding the outcome's glyph (glyph in theme.go); the others are points.
const (
	tlBar      = '━'
	tlWait     = '┄' // from the slot to the start: a queued or delayed fire
	tlNow      = '│'
	tlNext     = '◇' // a fire to come
	tlDeadline = '┊' // the running run's deadline
	tlMissed   = '◌'
	tlHostLost = '⊗'
	tlUnread   = '·' // history the console has not read (yet)
	tlHead     = '▶'
)

// nowID is the now-line's style, the accent; beyond the cell cache's IDs.
const nowID styleID = 250

// tlGeom maps time to columns: from is the first column's time and cell
// a column's span, in nanoseconds; the now-line is column nowCol of tw.
type tlGeom struct {
	nameW, tw, nowCol int
	from, cell, now   int64
}

// geom lays the window out across the width at now.
func (v timelineView) geom(now time.Time) tlGeom {
	nameW := 8
	from, to := v.shown()
	for _, l := range v.lanes[from:to] {
		nameW = max(nameW, len(v.label(l)))
	}
	nameW = min(nameW, 24, max(v.width/4, 8))
	tw := max(v.width-nameW-4, 10)
	nowCol := max(tw*(100-tlFuture)/100, 1)
	cell := max(int64(v.window().d)/int64(nowCol), 1)
	n := now.UnixNano()
	return tlGeom{nameW: nameW, tw: tw, nowCol: nowCol, cell: cell, now: n, from: n - int64(nowCol)*cell}
}

// col is t's column; it may fall off either end.
func (g tlGeom) col(t int64) int {
	d := t - g.from
	if d < 0 {
		return int((d - g.cell + 1) / g.cell)
	}
	return int(d / g.cell)
}

// label is a lane's name: the job, and its host in a shared history.
func (v timelineView) label(l lane) string {
	name := v.c.data.jobs[l.job].name
	if l.host == "" {
		return name
	}
	return name + "@" + shortHost(l.host)
}

// View draws the window's rule, the time axis, the lanes on screen and
// what the cursor is on.
func (v timelineView) View() string {
	st := v.c.st
	now := v.c.now()
	g := v.geom(now)
	lines := v.head()
	legend := st.ok.Render("━● run") + " " + st.warn.Render("○ skip") + " " + st.warn.Render(string(tlMissed)+" missed") +
		" " + st.fail.Render(string(tlHostLost)+" host lost") + " " + st.muted.Render(string(tlNext)+" next")
	lines = append(lines, rule(st, "timeline · "+v.window().name+" (0-5)", legend, v.width))
	lines = append(lines, v.axis(g, now))
	if len(v.lanes) == 0 {
		lines = append(lines, st.muted.Render("  no jobs"))
	}
	from, to := v.shown()
	p, c := newPens(st), make(canvas, g.tw) // the canvas is each lane's in turn
	var cur []tlItem
	sel := -1
	for i := from; i < to; i++ {
		items := v.items(v.lanes[i], g.from, g.from+int64(g.tw)*g.cell)
		s := -1
		if i == v.cur.pos {
			cur, sel = items, v.pick(items)
			s = sel
		}
		lines = append(lines, v.laneLine(g, p, c, v.lanes[i], items, s, i == v.cur.pos))
	}
	for len(lines) < v.height-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:max(v.height-1, 0)], v.footLine(now, cur, sel))
	return pad(lines, v.height)
}

// axis is the time of day at even steps above the columns.
func (v timelineView) axis(g tlGeom, now time.Time) string {
	step, layout := tickStep(g.cell)
	_, off := now.Zone()
	offset := int64(off) * int64(time.Second)
	first := ((g.from+offset)/step + 1) * step // the first whole step on screen, in local time
	b := []byte(strings.Repeat(" ", g.nameW+4+g.tw))
	last := -1
	for t := first - offset; ; t += step {
		c := g.col(t)
		label := time.Unix(0, t).In(now.Location()).Format(layout)
		if c+len(label) > g.tw {
			break
		}
		if c > last {
			copy(b[g.nameW+4+c:], label)
			last = c + len(label)
		}
	}
	return v.c.st.muted.Render(strings.TrimRight(string(b), " "))
}

// tickStep is the axis's step at cell nanoseconds a column: the smallest
// whose labels leave two columns between them, and the labels' layout.
func tickStep(cell int64) (int64, string) {
	steps := []time.Duration{10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		3 * time.Hour, 6 * time.Hour, 12 * time.Hour}
	for _, s := range steps {
		layout := "15:04"
		if s < time.Minute {
			layout = "15:04:05"
		}
		if int64(s)/cell >= int64(len(layout)+2) {
			return int64(s), layout
		}
	}
	return int64(24 * time.Hour), "15:04"
}

// tlCell is one column of a lane as painted: a later paint of a lower
// rank does not cover it, so that a failure outlives the runs around it
// in a column that holds several.
type tlCell struct {
	r    rune
	id   styleID
	rank uint8
	sel  bool
}

// canvas is a lane's columns.
type canvas []tlCell

func (c canvas) put(col int, r rune, id styleID, rank uint8) {
	if col >= 0 && col < len(c) && rank >= c[col].rank {
		c[col] = tlCell{r: r, id: id, rank: rank, sel: c[col].sel}
	}
}

// fill paints columns [a, b] with r, clipped to the canvas.
func (c canvas) fill(a, b int, r rune, id styleID, rank uint8) {
	for i := max(a, 0); i <= min(b, len(c)-1); i++ {
		c.put(i, r, id, rank)
	}
}

// laneLine is one lane: its name and its columns, painted on c; sel is
// the selected item's position in items (-1: none on this lane).
func (v timelineView) laneLine(g tlGeom, p *pens, c canvas, l lane, items []tlItem, sel int, cursor bool) string {
	for i := range c {
		c[i] = tlCell{r: ' '}
	}
	name := v.c.data.jobs[l.job].name
	switch since := v.c.data.tl.since(name); {
	case since == 0:
		c.fill(0, g.nowCol-1, tlUnread, mutedID, 0)
	case since > g.from:
		c.fill(0, g.col(since)-1, tlUnread, mutedID, 0)
	}
	c.put(g.nowCol, tlNow, nowID, 1)
	v.paintNext(g, c, l)
	for i, it := range items {
		a, b := v.paintItem(g, c, l, it)
		if i == sel {
			for k := max(a, 0); k <= min(b, len(c)-1); k++ {
				c[k].sel = true
			}
		}
	}
	prefix := "  "
	if cursor {
		prefix = "› "
	}
	head := prefix + fit(v.label(l), g.nameW) + "  "
	if cursor {
		head = v.c.st.selected.Render(head)
	}
	return head + c.render(p)
}

// paintItem paints one run or mark and returns the columns it covers.
func (v timelineView) paintItem(g tlGeom, c canvas, l lane, it tlItem) (int, int) {
	if it.running {
		j, _ := v.running(l)
		a := g.col(j.StartedAt.UnixNano())
		c.fill(a, g.nowCol-1, tlBar, runID, 4)
		c.put(g.nowCol, tlHead, runID, 11)
		if !j.Deadline.IsZero() {
			c.put(g.col(j.Deadline.UnixNano()), tlDeadline, warnID, 5)
		}
		return a, g.nowCol
	}
	s := it.sp
	switch s.markOf() {
	case markSkip:
		a, b := g.col(s.slot), g.col(max(s.end, s.slot))
		if s.slot != 0 && s.end-s.slot >= g.cell {
			// It waited (for its lock's queue, a resource's slot) before
			// it gave up: the wait, then the skip where it ended.
			c.fill(a, b-1, tlWait, mutedID, 3)
		} else {
			b = a
		}
		c.put(b, []rune(glyph(run.Skipped))[0], warnID, 7)
		return a, b
	case markMissed:
		a := g.col(s.slot)
		c.put(a, tlMissed, warnID, 8)
		return a, a
	}
	a, b := g.col(s.start), g.col(max(s.end, s.start))
	if s.slot != 0 && !s.manual && s.start-s.slot >= g.cell {
		c.fill(g.col(s.slot), a-1, tlWait, mutedID, 3)
	}
	id := outcomeID(s.outcome)
	c.fill(a, b-1, tlBar, id, 4)
	end := []rune(glyph(s.outcome))[0]
	if s.markOf() == markHostLost {
		end, id = tlHostLost, failID
	}
	c.put(b, end, id, endRank(s.outcome))
	return min(a, g.col(s.slot)), b
}

// endRank is how an outcome's end glyph ranks against another's in one
// column: trouble above success.
func endRank(o run.Outcome) uint8 {
	switch o {
	case run.OK:
		return 6
	case run.Replaced, run.Interrupted:
		return 9
	}
	return 10
}

// paintNext marks the lane's next fire and, when its last fires were
// evenly spaced, the ones after it at that period: the daemon says only
// the next, and the console keeps no schedule arithmetic of its own.
func (v timelineView) paintNext(g tlGeom, c canvas, l lane) {
	r := v.c.data.jobs[l.job]
	if r.nextRun == 0 || (l.host != "" && l.host != v.c.data.host) {
		return
	}
	c.put(g.col(r.nextRun), tlNext, runPlainID, 2)
	period := v.period(r.name, r.nextRun)
	if period < 2*g.cell { // marks in every other column say nothing
		return
	}
	for t := r.nextRun + period; g.col(t) < g.tw; t += period {
		c.put(g.col(t), tlNext, runPlainID, 2)
	}
}

// period is the spacing of the job's last two slots when the next fire
// keeps it (within a second), else 0.
func (v timelineView) period(job string, next int64) int64 {
	spans := v.c.data.tl.jobs[job]
	var slots [2]int64
	n := 0
	for i := len(spans) - 1; i >= 0 && n < 2; i-- {
		if s := spans[i].slot; s != 0 && !spans[i].manual && (n == 0 || s != slots[0]) {
			slots[n] = s
			n++
		}
	}
	if n < 2 {
		return 0
	}
	p := slots[0] - slots[1]
	if p <= 0 || abs64(next-slots[0]-p) > int64(time.Second) {
		return 0
	}
	return p
}

// render writes the canvas with one style per run of like cells.
func (c canvas) render(p *pens) string {
	var b strings.Builder
	b.Grow(len(c) * 4)
	for i := 0; i < len(c); {
		k := i
		pen := p.of(c[i].id, c[i].sel)
		b.WriteString(pen.pre)
		for k < len(c) && c[k].id == c[i].id && c[k].sel == c[i].sel {
			b.WriteRune(c[k].r)
			k++
		}
		b.WriteString(pen.post)
		i = k
	}
	return b.String()
}

// pen is what a style writes before and after a text: a run of cells
// is then written without lipgloss's Render, which costs as much as
// the rest of a frame for a few hundred runs.
type pen struct{ pre, post string }

// pens are the canvas's styles as pens, made once a frame (the styles
// turn grey while the source is lost).
type pens struct {
	st   styles
	made map[uint16]pen
}

func newPens(st styles) *pens { return &pens{st: st, made: map[uint16]pen{}} }

// of is the pen of a cell's style; the selected run's cells reversed.
func (p *pens) of(id styleID, sel bool) pen {
	k := uint16(id) << 1
	if sel {
		k |= 1
	}
	if pn, ok := p.made[k]; ok {
		return pn
	}
	var pn pen
	if id != noStyleID || sel {
		s := p.st.byID(id)
		if id == nowID {
			s = p.st.prompt
		}
		if sel {
			s = s.Reverse(true)
		}
		pre, post, _ := strings.Cut(s.Render("x"), "x")
		pn = pen{pre: pre, post: post}
	}
	p.made[k] = pn
	return pn
}

// footLine says what the cursor is on.
func (v timelineView) footLine(now time.Time, items []tlItem, sel int) string {
	st := v.c.st
	if sel < 0 {
		return fit(st.muted.Render("  nothing ran in this window; ←/→ move over runs, 0-5 pick the window"), v.width)
	}
	l := v.lanes[v.cur.pos]
	name := v.c.data.jobs[l.job].name
	it := items[sel]
	if it.running {
		j, _ := v.running(l)
		s := st.run.Render("▶ running") + " " + name + " since " + clock(now, j.StartedAt) + " (" + dur(now.Sub(j.StartedAt)) + ")"
		if !j.Deadline.IsZero() {
			s += st.warn.Render(" deadline " + clock(now, j.Deadline))
		}
		return fit("› "+s, v.width)
	}
	r := it.sp.record(name)
	rc := recordCells(st, now, r)
	s := st.byID(rc[0].id).Render(rc[0].text) + " " + name + " " + rc[1].text
	if t := rc[2].text; t != "" {
		s += " took " + t
	}
	if r.Outcome != run.Skipped && !r.ScheduledAt.IsZero() && r.StartedAt.Sub(r.ScheduledAt) >= time.Second && !r.Manual {
		s += " (waited " + dur(r.StartedAt.Sub(r.ScheduledAt)) + ")"
	}
	if rc[3].text != "" {
		s += " · " + rc[3].text
	}
	return fit("› "+s, v.width)
}
