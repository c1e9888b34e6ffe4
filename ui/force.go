package ui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// askRun runs job now, asking first when its pause or enabled: false
// holds it: the daemon refuses such a fire unless forced, as it refuses
// `cronvisor trigger` without --force, and the question is the console's
// --force.
func (m Model) askRun(job string) (Model, tea.Cmd) {
	if j, ok := m.c.data.job(job); ok {
		if h := holdOf(j); h != nil {
			return m.askForce(job, *h), nil
		}
	}
	return m, m.action("run", job)
}

// askForce asks whether to run job although h holds it: once, the job
// staying as it is.
func (m Model) askForce(job string, h ctl.FireHold) Model {
	now := m.c.now()
	say := h.Say(func(t time.Time) string { return clock(now, t) })
	m.ask = &question{onYes: m.action("run --force", job), yes: "running " + job + " once although " + say + "…",
		text: "Run " + job + " anyway, once? " + strings.ToUpper(say[:1]) + say[1:] + ". y/n"}
	return m
}

// holdOf is what holds j against a fire now, as the console last read
// it; nil when nothing does. The daemon decides: a hold the console has
// not seen yet comes back as a refusal, and is asked about then.
func holdOf(j ctl.JobStatus) *ctl.FireHold {
	if !j.Paused && j.State != ctl.StatePaused && j.Enabled && j.State != ctl.StateDisabled {
		return nil
	}
	return &ctl.FireHold{Paused: j.Paused || j.State == ctl.StatePaused, PausedBy: j.PausedBy,
		Disabled: !j.Enabled || j.State == ctl.StateDisabled}
}
