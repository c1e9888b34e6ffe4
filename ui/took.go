package ui

import (
	"strings"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/ctl"
)

// recentMax is the most bars a sparkline has: the wire's RecentMS holds
// the newest 16 successful runs.
const recentMax = 16

// bars are a sparkline's eight heights, lowest first.
var bars = [8]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// A bar's class: where its run lies against the learned band.
const (
	inBand uint8 = iota
	aboveBand
	belowBand
)

// learned is what a row keeps of a job's ctl.Durations: the figures the
// detail shows (milliseconds, 0: none) and the sparkline already drawn,
// a byte a bar (its height, and its class above the low three bits).
// Comparable, so that an unchanged re-read is no change; about 100
// bytes, and only for jobs with successful runs.
type learned struct {
	runs                            int
	p50, p95, p99, max              int64
	slowAfter, fastBelow, suggested int64
	newest                          int64 // the newest run's
	advice                          string
	n                               uint8
	spark                           [recentMax]uint8
}

// learnedOf compacts d; nil for none.
func learnedOf(d *ctl.Durations) *learned {
	if d == nil || d.Runs == 0 {
		return nil
	}
	l := &learned{runs: d.Runs, p50: d.P50MS, p95: d.P95MS, p99: d.P99MS, max: d.MaxMS,
		slowAfter: d.SlowAfterMS, fastBelow: d.FastBelowMS, suggested: d.SuggestedTimeoutMS, advice: d.TimeoutAdvice}
	recent := d.RecentMS[max(0, len(d.RecentMS)-recentMax):]
	if len(recent) == 0 {
		return l
	}
	l.newest, l.n = recent[len(recent)-1], uint8(len(recent))
	// Heights span the band, the p5 to the p95, and the runs outside it:
	// a steady job's jitter shows, and a run past the band stretches the
	// scale, coloured. (The detail's chart is drawn from zero, with an
	// axis.)
	lo, hi := d.P5MS, d.P95MS
	for _, ms := range recent {
		lo, hi = min(lo, ms), max(hi, ms)
	}
	for i, ms := range recent {
		level := int64(3)
		if hi > lo {
			level = ((ms-lo)*14 + hi - lo) / (2 * (hi - lo)) // rounded to 0..7
		}
		l.spark[i] = uint8(level) | l.class(ms)<<3
	}
	return l
}

// class places a run's duration against the band: above the slow bound
// the job learns (warn_after: auto), else above the p95; below the fast
// bound it learns (warn_fast: auto). Nothing is judged before
// durations.MinSamples runs, as the daemon judges nothing.
func (l *learned) class(ms int64) uint8 {
	switch {
	case l.runs < durations.MinSamples:
		return inBand
	case l.slowAfter > 0 && ms > l.slowAfter, l.slowAfter == 0 && ms > l.p95:
		return aboveBand
	case l.fastBelow > 0 && ms < l.fastBelow:
		return belowBand
	}
	return inBand
}

// tookCell is the TOOK column's cell, w wide: the newest runs' bars that
// fit, and the newest run's duration after them when all fit with room
// to spare. marks holds a class digit a bar, and 'm' for the text.
func tookCell(l *learned, w int) cell {
	if l == nil || l.n == 0 {
		return cell{text: "—", id: mutedID}
	}
	n := min(int(l.n), w)
	var text strings.Builder
	marks := make([]byte, 0, w)
	for _, b := range l.spark[int(l.n)-n : l.n] {
		text.WriteRune(bars[b&7])
		marks = append(marks, '0'+b>>3)
	}
	if s := precise(time.Duration(l.newest) * time.Millisecond); n == int(l.n) && w >= n+1+len(s) {
		text.WriteString(" " + s)
		marks = append(marks, strings.Repeat("m", 1+len(s))...)
	}
	return cell{text: text.String(), id: sparkID, marks: string(marks)}
}

// renderMarked styles a cell whose marks give each of its characters a
// style: the runs of one mark in one Render each.
func renderMarked(st styles, text, marks string, w int) string {
	var b strings.Builder
	runes := []rune(text)
	for i := 0; i < len(runes) && i < w; {
		k := i
		for k < len(runes) && k < w && marks[k] == marks[i] {
			k++
		}
		b.WriteString(st.byID(markID(marks[i])).Render(string(runes[i:k])))
		i = k
	}
	return b.String() + strings.Repeat(" ", max(0, w-len(runes)))
}

// markID is the style of a mark: a bar in, above or below the band, or
// muted text.
func markID(m byte) styleID {
	switch m {
	case '0' + aboveBand:
		return warnID
	case '0' + belowBand:
		return runPlainID
	}
	return mutedID
}
