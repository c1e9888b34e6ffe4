package ui

import (
	"github.com/charmbracelet/lipgloss"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// styleID names a style of styles, so that a styled cell can be looked
// up by value: a lipgloss.Style is neither comparable nor cheap to copy.
type styleID uint8

const (
	noStyleID styleID = iota // the cell carries its style; not cached
	plainID
	mutedID
	runID
	runPlainID // run without bold: a holder or a next fire, not a state
	warnID
	okID
	failID
	foreignID
	headerID
	sparkID // a cell styled a character at a time by its marks
)

// byID is the style an ID names.
func (s styles) byID(id styleID) lipgloss.Style {
	switch id {
	case mutedID:
		return s.muted
	case runID:
		return s.run
	case runPlainID:
		return s.run.UnsetBold()
	case warnID:
		return s.warn
	case okID:
		return s.ok
	case failID:
		return s.fail
	case foreignID:
		return s.foreign
	case headerID:
		return s.header
	}
	return lipgloss.Style{}
}

// stateID is the style of a job's state.
func stateID(st ctl.JobState) styleID {
	switch st {
	case ctl.StateRunning:
		return runID
	case ctl.StateQueued, ctl.StateWaiting, ctl.StatePaused, ctl.StateRetrying:
		return warnID
	}
	return mutedID
}

// outcomeID is the style of a history outcome.
func outcomeID(o run.Outcome) styleID {
	switch o {
	case run.OK:
		return okID
	case run.Failed, run.Timeout, run.Error:
		return failID
	case run.Skipped, run.Replaced, run.Interrupted:
		return warnID
	case run.Running:
		return runID
	}
	return mutedID
}

// cellKey is a styled cell: its text cut to width, in a style.
type cellKey struct {
	text  string
	width int
	style styleID
	grey  bool   // drawn in the lost source's grey styles
	marks string // a sparkline's classes
}

// cellCache keeps the jobs table's styled cells from one frame to the
// next. Styling is most of a frame's cost and a frame a second redraws
// every row on screen, of which usually only a countdown changed.
type cellCache struct {
	cells map[cellKey]string
}

// cellCacheMax bounds the cache at a few screens of cells; past it the
// cache starts again empty.
const cellCacheMax = 4096

// render is the cell's text styled, from the cache when it was drawn
// before.
func (c *cellCache) render(st styles, grey bool, cl cell, width int) string {
	k := cellKey{text: cl.text, width: width, style: cl.id, grey: grey, marks: cl.marks}
	if s, ok := c.cells[k]; ok {
		return s
	}
	if c.cells == nil || len(c.cells) >= cellCacheMax {
		c.cells = make(map[cellKey]string, 256)
	}
	var s string
	if cl.marks != "" {
		s = renderMarked(st, cl.text, cl.marks, width)
	} else {
		s = st.byID(cl.id).Render(fit(cl.text, width))
	}
	c.cells[k] = s
	return s
}
