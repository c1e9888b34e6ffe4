package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
)

// learnedFor is the named job's learned durations; nil for none.
func (s *store) learnedFor(name string) *learned {
	if i, ok := s.find(name); ok {
		return s.jobs[i].learned
	}
	return nil
}

// timed are the records of the detail's page that ran to an end, oldest
// first: the bars of its chart.
func (v detailView) timed() []run.Record {
	var recs []run.Record
	for _, r := range slices.Backward(v.recs) {
		if !r.StartedAt.IsZero() && !r.EndedAt.IsZero() {
			recs = append(recs, r)
		}
	}
	return recs
}

// chartHeight is the chart's lines: more on a taller terminal, at most 5.
func (v detailView) chartHeight() int {
	return max(2, min(5, (v.height-6)/5))
}

// durHeight is the lines of the durations section (durLines).
func (v detailView) durHeight() int {
	head, chart, _ := v.durLayout(v.c.data.learnedFor(v.job), len(v.timed()) > 0)
	return head + chart
}

// durLayout is how the durations section fits in what the detail can
// spare beside 3 runs and 3 lines of output: the lines of its head (the
// rule, the figures, the advice) and of its chart. On a short terminal
// the chart shrinks to 2 lines, then goes; then the advice is one line,
// cut (short); then the head is cut.
func (v detailView) durLayout(l *learned, timed bool) (head, chart int, short bool) {
	if l == nil && !timed {
		return 0, 0, false
	}
	room := v.height - infoLines - 2 - 6
	head = len(v.durHead(l, false))
	if short = head > room; short {
		head = len(v.durHead(l, true))
	}
	if timed {
		if chart = min(v.chartHeight(), room-head); chart < 2 {
			chart = 0
		}
	}
	if head = min(head, room); head < 2 {
		head = 0 // a rule alone says nothing
	}
	return head, chart, short
}

// durHead is the section's rule, the learned figures and the advice on
// the job's timeout (on one line, cut, when short).
func (v detailView) durHead(l *learned, short bool) []string {
	st, recs := v.c.st, v.timed()
	right := ""
	if len(recs) > 0 {
		right = plural(len(recs), "run") + " since " + clock(v.c.now(), recs[0].StartedAt)
	}
	lines := []string{v.rule("durations", right)}
	if l == nil {
		return lines
	}
	for _, f := range figureLines(l, v.width) {
		lines = append(lines, fit(" "+strings.ReplaceAll(f, " · ", st.muted.Render(" · ")), v.width))
	}
	advice := wrapItems([]string{l.advice}, v.width)
	if short {
		advice = []string{l.advice}
	}
	for _, a := range advice {
		if a != "" {
			lines = append(lines, st.warn.Render(fit(" "+a, v.width)))
		}
	}
	return lines
}

// durLines is the durations section of the detail: a rule, the figures
// learned from the job's successful runs and the advice on its timeout,
// and a chart of what the runs on the detail's page took. Nothing when
// the job has neither.
func (v detailView) durLines() []string {
	l, recs := v.c.data.learnedFor(v.job), v.timed()
	head, chart, short := v.durLayout(l, len(recs) > 0)
	if head+chart == 0 {
		return nil
	}
	lines := v.durHead(l, short)[:head]
	if chart > 0 {
		lines = append(lines, durChart(v.c.st, l, recs, chart, v.width)...)
	}
	return lines
}

// figureLines are the learned figures, as status JOB says them, in
// lines of at most two that fit width.
func figureLines(l *learned, width int) []string {
	ms := func(v int64) string { return precise(time.Duration(v) * time.Millisecond) }
	items := []string{plural(l.runs, "ok run"), "p50 " + ms(l.p50), "p95 " + ms(l.p95), "p99 " + ms(l.p99), "max " + ms(l.max)}
	if l.runs < durations.MinSamples {
		items = append(items, "nothing judged before "+strconv.Itoa(durations.MinSamples)+" runs")
	}
	if l.slowAfter > 0 {
		items = append(items, "slow after "+ms(l.slowAfter))
	}
	if l.fastBelow > 0 {
		items = append(items, "fast below "+ms(l.fastBelow))
	}
	if l.suggested > 0 {
		items = append(items, "suggested timeout "+ms(l.suggested))
	}
	lines := wrapItems(items, width)
	return lines[:min(2, len(lines))]
}

// wrapItems joins items with " · " into lines that fit width with a
// leading space, an item to a line at least, a long one wrapped at its
// spaces; at most two lines, the second cut to fit.
func wrapItems(items []string, width int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case len([]rune(cur+" · "+it)) < width:
			cur += " · " + it
		default:
			lines, cur = append(lines, cur), it
		}
		for len([]rune(cur)) >= width && width > 1 {
			cut := strings.LastIndexByte(string([]rune(cur)[:width-1]), ' ')
			if cut <= 0 {
				break
			}
			lines, cur = append(lines, cur[:cut]), cur[cut+1:]
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines[:min(2, len(lines))]
}

// durChart draws what recs took (oldest first) in h lines of width: a
// bar a run, the newest that fit, from zero to the longest (or the p95,
// if higher). Ok runs are coloured by the band (as the jobs table's
// sparkline; l may be nil), the others by their outcome, with its glyph
// on top so that they read without colour. The axis names the top and the
// band's bound, whose line is dotted across the chart.
func durChart(st styles, l *learned, recs []run.Record, h, width int) []string {
	took := make([]int64, len(recs))
	top := int64(1)
	if l != nil {
		top = max(top, l.p95)
	}
	for i, r := range recs {
		took[i] = r.EndedAt.Sub(r.StartedAt).Milliseconds()
		top = max(top, took[i])
	}
	labels := make([]string, h)
	labels[0], labels[h-1] = precise(time.Duration(top)*time.Millisecond), "0"
	bandRow := -1
	if bound, name := bandOf(l); bound > 0 && bound < top {
		bandRow = h - 1 - min(h-1, int(bound*int64(8*h)/top/8))
		if bandRow > 0 {
			labels[bandRow] = name
		}
	}
	labW := 0
	for _, s := range labels {
		labW = max(labW, len([]rune(s)))
	}
	plotW := max(1, width-labW-3)
	step := 1
	if 2*len(recs) <= plotW {
		step = 2 // a gap between bars
	}
	from := max(0, len(recs)-plotW/step)
	lines := make([]string, h)
	for row := range h {
		var segs segments
		for i := from; i < len(recs); i++ {
			segs.add(barCell(st, l, recs[i].Outcome, took[i], top, h, row, bandRow))
			if step == 2 {
				segs.add(gapCell(row, bandRow))
			}
		}
		lines[row] = fit(" "+st.muted.Render(strings.Repeat(" ", labW-len([]rune(labels[row])))+labels[row]+" ┤")+segs.render(st), width)
	}
	return lines
}

// bandOf is the bound the chart marks: the slow bound the job learns,
// else its p95 once runs are judged; 0 for none.
func bandOf(l *learned) (int64, string) {
	switch {
	case l == nil || l.runs < durations.MinSamples:
		return 0, ""
	case l.slowAfter > 0:
		return l.slowAfter, "slow"
	}
	return l.p95, "p95"
}

// barCell is one run's cell in row (0: the top) of a chart h high.
func barCell(st styles, l *learned, o run.Outcome, ms, top int64, h, row, bandRow int) (string, styleID) {
	eighths := max(1, (ms*int64(8*h)+top-1)/top)
	fill := min(8, eighths-int64(h-1-row)*8)
	id := outcomeID(o)
	if o == run.OK {
		id = okID
		if l != nil {
			id = []styleID{okID, warnID, runPlainID}[l.class(ms)]
		}
	}
	switch {
	case fill <= 0:
		return gapCell(row, bandRow)
	case o != run.OK && fill+int64(h-1-row)*8 == eighths:
		return glyph(o), id // the bar's top
	}
	return string(bars[fill-1]), id
}

// gapCell is an empty cell of row: the band's dotted line on its row.
func gapCell(row, bandRow int) (string, styleID) {
	if row == bandRow {
		return "┈", mutedID
	}
	return " ", plainID
}

// segments are a line's cells, runs of one style joined, so that a line
// is a few Render calls.
type segments struct {
	texts []string
	ids   []styleID
}

func (s *segments) add(text string, id styleID) {
	if n := len(s.ids); n > 0 && s.ids[n-1] == id {
		s.texts[n-1] += text
		return
	}
	s.texts, s.ids = append(s.texts, text), append(s.ids, id)
}

func (s segments) render(st styles) string {
	var b strings.Builder
	for i, t := range s.texts {
		b.WriteString(st.byID(s.ids[i]).Render(t))
	}
	return b.String()
}
