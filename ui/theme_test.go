package ui

import (
	"io"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestResolvedColorsRenderAsAdaptive checks that converting the palette
// once gives the same escape codes as letting lipgloss convert at every
// Render, for each colour profile and background.
func TestResolvedColorsRenderAsAdaptive(t *testing.T) {
	th := defaultTheme()
	colors := []lipgloss.AdaptiveColor{th.accent, th.muted, th.subtle, th.text, th.ok, th.fail,
		th.warn, th.run, th.foreign, th.selectBg, th.bannerBg, th.bannerFg}
	for _, profile := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI, termenv.Ascii} {
		for _, dark := range []bool{true, false} {
			r := lipgloss.NewRenderer(io.Discard)
			r.SetColorProfile(profile)
			r.SetHasDarkBackground(dark)
			for _, c := range colors {
				want := r.NewStyle().Foreground(c).Background(c).Render("x")
				rc := resolve(r, c)
				if got := r.NewStyle().Foreground(rc).Background(rc).Render("x"); got != want {
					t.Errorf("profile %v, dark %v, %v: rendered %q, want %q", profile, dark, c, got, want)
				}
			}
		}
	}
}
