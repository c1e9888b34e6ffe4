package ui

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// The command strip: every action that changes something shows, for
// stripFor on a line above the status line, the CLI command that does the
// same (lazygit's command log), and the command log (`@`, `:log`) lists
// every one of the session with its time and result. A read-only console
// changes nothing: it shows the read commands of what it looks at
// instead (a job's detail is `status JOB`, the tabs `status`, `locks`,
// `history`).

// stripFor is how long the strip shows a command.
const stripFor = 5 * time.Second

// cmdLogMax bounds the command log: the session's newest commands.
const cmdLogMax = 200

// cliVerbs are the CLI's commands for the console's actions, by the
// action's verb (cmds.go's action).
var cliVerbs = map[string]string{
	"run":         "trigger",
	"run --force": "trigger --force",
	"pause":       "pause",
	"resume":      "resume",
	"kill":        "kill",
	"reload":      "reload",
}

// cliReads are the CLI's commands for what a read-only console shows:
// the tabs, and (with a job) a job's detail.
var cliReads = [tabCount]string{tabJobs: "status", tabLocks: "locks", tabHistory: "history", tabTimeline: "history", tabHosts: "status --fleet"}

// cliCommand is the command line that does what verb did to job.
func cliCommand(verb, job string) string {
	s := "cronvisor " + cliVerbs[verb]
	if job != "" {
		s += " " + job
	}
	return s
}

// CLICommands are every command line the console may show for job, for
// the CLI's test that parses each one (internal/cli).
func CLICommands(job string) []string {
	var out []string
	for _, verb := range slices.Sorted(maps.Keys(cliVerbs)) {
		j := job
		if verb == "reload" {
			j = ""
		}
		out = append(out, cliCommand(verb, j))
	}
	for _, r := range cliReads {
		out = append(out, "cronvisor "+r)
	}
	return append(out, "cronvisor status "+job)
}

// logged is one command of the session.
type logged struct {
	at     time.Time
	line   string // the command line
	result string // what it did; "" for a read
	failed bool
}

// cmdStrip is the strip and the command log behind it.
type cmdStrip struct {
	log     []logged
	visible bool // the strip shows the newest; the layout counts its line
	open    bool // the command log is on screen
}

// record adds a command to the log and shows it on the strip.
func (m Model) record(l logged) Model {
	l.at = m.wall()
	if len(m.strip.log) >= cmdLogMax {
		m.strip.log = append(m.strip.log[:0], m.strip.log[1:]...)
	}
	m.strip.log = append(m.strip.log, l)
	if !m.strip.visible {
		m.strip.visible = true
		return m.layout()
	}
	return m
}

// logAction records what an action did, as the CLI command that does
// the same.
func (m Model) logAction(msg actionMsg) Model {
	l := logged{line: cliCommand(msg.verb, msg.job), result: msg.done, failed: msg.warn}
	if msg.err != nil {
		l.result, l.failed = firstLine(msg.err.Error()), true
	}
	return m.record(l)
}

// logRead records a read-only console's read command.
func (m Model) logRead(cmd string) Model {
	if !m.opts.ReadOnly {
		return m
	}
	return m.record(logged{line: "cronvisor " + cmd})
}

// expireStrip hides the strip once its command is stripFor old.
func (m Model) expireStrip(now time.Time) Model {
	if !m.strip.visible || len(m.strip.log) == 0 || now.Sub(m.strip.log[len(m.strip.log)-1].at) < stripFor {
		return m
	}
	m.strip.visible = false
	return m.layout()
}

// stripLine is the strip: the newest command, and what it did.
func (m Model) stripLine() string {
	st := m.c.st
	l := m.strip.log[len(m.strip.log)-1]
	s := st.prompt.Render(" $ "+l.line) + st.muted.Render("   @ lists them all")
	return fit(s, m.width)
}

// cmdLogView is the command log in place of the body, newest last: the
// newest that fit in h lines.
func (m Model) cmdLogView(h int) string {
	st := m.c.st
	lines := []string{st.section.Render(" Command log") + st.muted.Render("  the CLI commands of this session's actions (esc or @ closes)"), ""}
	if len(m.strip.log) == 0 {
		what := "nothing changed yet: run, pause, resume, kill and reload show their command here"
		if m.opts.ReadOnly {
			what = "nothing read yet"
		}
		lines = append(lines, st.muted.Render("  "+what))
	}
	from := max(0, len(m.strip.log)-(h-len(lines)))
	for _, l := range m.strip.log[from:] {
		text := "  " + clock(m.wall(), l.at) + "  " + l.line
		if l.result != "" {
			text += "   → " + l.result
		}
		style := st.status
		if l.failed {
			style = st.warn
		}
		lines = append(lines, style.Render(fit(localTimes(m.wall(), text), m.width)))
	}
	return pad(lines, h)
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
