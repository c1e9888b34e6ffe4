package ui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// theme is the console's semantic palette. Each colour has a light and a
// dark variant; lipgloss picks one from the terminal's background and
// drops them all under NO_COLOR, which is why every state also has a
// glyph or a word of its own.
type theme struct {
	accent, muted, subtle, text  lipgloss.AdaptiveColor
	ok, fail, warn, run, foreign lipgloss.AdaptiveColor
	selectBg, bannerBg, bannerFg lipgloss.AdaptiveColor
}

func defaultTheme() theme {
	return theme{
		accent:   lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#A48CFF"},
		muted:    lipgloss.AdaptiveColor{Light: "#6E7781", Dark: "#8B949E"},
		subtle:   lipgloss.AdaptiveColor{Light: "#D0D7DE", Dark: "#30363D"},
		text:     lipgloss.AdaptiveColor{Light: "#1F2328", Dark: "#E6EDF3"},
		ok:       lipgloss.AdaptiveColor{Light: "#1A7F37", Dark: "#3FB950"},
		fail:     lipgloss.AdaptiveColor{Light: "#CF222E", Dark: "#F85149"},
		warn:     lipgloss.AdaptiveColor{Light: "#9A6700", Dark: "#D29922"},
		run:      lipgloss.AdaptiveColor{Light: "#0969DA", Dark: "#58A6FF"},
		foreign:  lipgloss.AdaptiveColor{Light: "#8250DF", Dark: "#D2A8FF"},
		selectBg: lipgloss.AdaptiveColor{Light: "#EAEEF2", Dark: "#1F2A37"},
		bannerBg: lipgloss.AdaptiveColor{Light: "#CF222E", Dark: "#B62324"},
		bannerFg: lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#FFFFFF"},
	}
}

// greyTheme is t with every colour but the banner's muted: what the
// console shows while its source is lost is a record, not live state, and
// must not look like it.
func greyTheme(t theme) theme {
	g := t
	g.accent, g.text, g.ok, g.fail, g.warn, g.run, g.foreign = t.muted, t.muted, t.muted, t.muted, t.muted, t.muted, t.muted
	return g
}

// styles are the theme turned into lipgloss styles, built once per model
// and passed down to every view.
type styles struct {
	app, tab, tabActive, where       lipgloss.Style
	header, selected, muted, label   lipgloss.Style
	ok, fail, warn, run, foreign     lipgloss.Style
	section, banner, status, errText lipgloss.Style
	confirm, prompt                  lipgloss.Style
	help                             help.Styles
	// match and matchCur mark a log search's matches, the current one
	// bolder.
	match, matchCur matchPen
}

func newStyles(r *lipgloss.Renderer, t theme) styles {
	c := func(c lipgloss.AdaptiveColor) lipgloss.TerminalColor { return resolve(r, c) }
	fg := func(col lipgloss.AdaptiveColor) lipgloss.Style { return r.NewStyle().Foreground(c(col)) }
	s := styles{
		app:       r.NewStyle().Bold(true).Foreground(c(t.accent)),
		tab:       fg(t.muted),
		tabActive: r.NewStyle().Bold(true).Underline(true).Foreground(c(t.accent)),
		where:     fg(t.muted),
		header:    r.NewStyle().Bold(true).Foreground(c(t.muted)),
		selected:  r.NewStyle().Background(c(t.selectBg)).Bold(true),
		muted:     fg(t.muted),
		label:     fg(t.muted),
		ok:        fg(t.ok),
		fail:      fg(t.fail).Bold(true),
		warn:      fg(t.warn),
		run:       fg(t.run).Bold(true),
		foreign:   fg(t.foreign),
		section:   r.NewStyle().Bold(true).Foreground(c(t.accent)),
		banner:    r.NewStyle().Bold(true).Foreground(c(t.bannerFg)).Background(c(t.bannerBg)),
		status:    fg(t.muted),
		errText:   fg(t.fail),
		confirm:   r.NewStyle().Bold(true).Foreground(c(t.warn)),
		prompt:    fg(t.accent),
	}
	s.match = matchPen{style: r.NewStyle().Reverse(true).Foreground(c(t.warn))}
	s.matchCur = matchPen{style: r.NewStyle().Reverse(true).Bold(true).Foreground(c(t.accent))}
	if r.ColorProfile() == termenv.Ascii {
		s.match, s.matchCur = matchPen{sgr: "7"}, matchPen{sgr: "1;7"}
	}
	s.help = help.Styles{
		ShortKey:       fg(t.text),
		ShortDesc:      fg(t.muted),
		ShortSeparator: fg(t.subtle),
		Ellipsis:       fg(t.subtle),
		FullKey:        fg(t.text),
		FullDesc:       fg(t.muted),
		FullSeparator:  fg(t.subtle),
	}
	return s
}

// resolve picks c's variant for the terminal's background and converts it
// to the terminal's colour profile once. An AdaptiveColor would do both at
// every Render: on a 256-colour terminal that is a search of the palette
// in HSLuv per styled cell, a third of the console's CPU.
func resolve(r *lipgloss.Renderer, c lipgloss.AdaptiveColor) lipgloss.TerminalColor {
	hex := c.Light
	if r.HasDarkBackground() {
		hex = c.Dark
	}
	switch tc := r.ColorProfile().Color(hex).(type) {
	case termenv.RGBColor:
		return lipgloss.Color(string(tc))
	case termenv.ANSI256Color:
		return lipgloss.Color(strconv.Itoa(int(tc)))
	case termenv.ANSIColor:
		return lipgloss.Color(strconv.Itoa(int(tc)))
	}
	return lipgloss.NoColor{} // NO_COLOR, or a terminal without colours
}

// outcome is the style of a history outcome.
func (s styles) outcome(o run.Outcome) lipgloss.Style { return s.byID(outcomeID(o)) }

// state is the style of a job state.
func (s styles) state(st ctl.JobState) lipgloss.Style { return s.byID(stateID(st)) }

// glyph is the one-cell mark of an outcome, distinct for each so that the
// timeline strip reads without colour.
func glyph(outcome run.Outcome) string {
	switch outcome {
	case run.OK:
		return "●"
	case run.Skipped:
		return "○"
	case run.Failed:
		return "✗"
	case run.Timeout:
		return "⧖"
	case run.Error:
		return "!"
	case run.Replaced:
		return "↻"
	case run.Interrupted:
		return "↯"
	case run.Running:
		return "▶"
	}
	return "·"
}

// stateGlyph marks a job state in the jobs table.
func stateGlyph(st ctl.JobState) string {
	switch st {
	case ctl.StateRunning:
		return "▶"
	case ctl.StateQueued, ctl.StateWaiting:
		return "⇢"
	case ctl.StatePaused:
		return "‖"
	case ctl.StateDisabled:
		return "–"
	case ctl.StateUnschedulable:
		return "!"
	case ctl.StateRetrying:
		return "↺"
	}
	return "·"
}
