package ui

import (
	"errors"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// detailKeys are the job detail's bindings: up/down pick a run, the page
// keys and the wheel scroll its output.
type detailKeys struct {
	Up, Down                          key.Binding
	Pick                              key.Binding // Up and Down in the short help
	ScrollUp, ScrollDown, Top, Bottom key.Binding
	Back                              key.Binding
	actionKeys
}

func newDetailKeys() detailKeys {
	l := newListKeys()
	return detailKeys{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "newer run")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "older run")),
		Pick:       key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "runs")),
		ScrollUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "log up")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", " "), key.WithHelp("pgdn", "log")),
		Top:        l.Top,
		Bottom:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "follow")),
		Back:       key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		actionKeys: newActionKeys(),
	}
}

// ShortHelp implements help.KeyMap.
func (k detailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Back, k.Pick, k.ScrollDown, k.Run, k.Pause, k.Kill}
}

// FullHelp implements help.KeyMap.
func (k detailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Back}, {k.ScrollUp, k.ScrollDown, k.Top, k.Bottom}, {k.Run, k.Pause, k.Kill}}
}

// detailView is one job: its definition, its recent runs and skips, and
// the output of the live run or of a past one. The selection is a
// record's identity (selKey), not a row: new records push the rows down
// and the cursor goes with the record it is on, so the runs list, the
// output's title and the output itself always name the same run.
type detailView struct {
	c      *common
	keys   detailKeys
	job    string
	recs   []run.Record // the job's history, newest first, no open runs
	sel    int          // 0: the live output; i: recs[i-1], the record selKey names
	selKey string       // the selected record's recKey, "" for the live output
	off    int          // first entry shown in the runs list
	vp     viewport.Model
	log    savedLog // the saved log on display while a record is selected
	width  int
	height int
}

// savedLog is the saved output of the record whose recKey is key.
type savedLog struct {
	key   string
	lines []string
	none  bool // no saved log: a skip, or none was written; the record explains itself
}

func newDetailView(c *common) detailView {
	vp := viewport.New(0, 0)
	vp.MouseWheelEnabled = false // the view scrolls it, so keys never clash
	return detailView{c: c, keys: newDetailKeys(), vp: vp}
}

// open shows job, following its live output.
func (v detailView) open(job string) detailView {
	v.job, v.recs, v.sel, v.selKey, v.off, v.log = job, nil, 0, "", 0, savedLog{}
	return v.Refresh().follow()
}

// SetSize sets the area the view draws in.
func (v detailView) SetSize(w, h int) detailView {
	v.width, v.height = w, h
	v.vp.Width, v.vp.Height = w, v.outputHeight()
	return v.Refresh()
}

// KeyMap is the detail's keys.
func (v detailView) KeyMap() help.KeyMap { return v.keys }

// Editing is false: the detail has no text input.
func (v detailView) Editing() bool { return false }

// selected is the selected record; false for the live output.
func (v detailView) selected() (run.Record, bool) {
	if v.sel == 0 {
		return run.Record{}, false
	}
	return v.recs[v.sel-1], true
}

// setRecords takes a fetched page of the job's history and finds the
// selected record in it again. A selected record that fell off the page's
// end stays, last: it is older than every record of the page.
func (v detailView) setRecords(recs []run.Record) detailView {
	held, holding := v.selected()
	v.recs = make([]run.Record, 0, len(recs)+1)
	v.sel = 0
	for _, r := range recs {
		if r.Outcome == run.Running {
			continue
		}
		v.recs = append(v.recs, r)
		if holding && recKey(r) == v.selKey {
			v.sel = len(v.recs)
		}
	}
	if holding && v.sel == 0 {
		v.recs = append(v.recs, held)
		v.sel = len(v.recs)
	}
	return v.Refresh()
}

// Update handles keys and mouse.
func (v detailView) Update(msg tea.Msg) (detailView, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			v.vp.ScrollUp(wheelStep)
		case tea.MouseButtonWheelDown:
			v.vp.ScrollDown(wheelStep)
		}
		return v, nil
	case logMsg:
		return v.gotLog(msg), nil
	case tea.KeyMsg:
		return v.key(msg)
	}
	return v, nil
}

// gotLog shows a saved log read for the selected record; a log of a
// record no longer selected is dropped.
func (v detailView) gotLog(msg logMsg) detailView {
	r, ok := v.selected()
	if !ok || msg.job != v.job || msg.run != r.RunID || v.log.key != v.selKey {
		return v
	}
	switch {
	case errors.Is(msg.err, ctl.ErrNoLog):
		v.log.lines, v.log.none = nil, true
	case msg.err != nil:
		v.log.lines = []string{"cannot read the saved log: " + msg.err.Error()}
	default:
		v.log.lines = msg.lines
	}
	v = v.Refresh()
	v.vp.GotoTop()
	return v
}

func (v detailView) key(msg tea.KeyMsg) (detailView, tea.Cmd) {
	k := v.keys
	switch {
	case key.Matches(msg, k.Back):
		return v, send(closeDetailMsg{})
	case key.Matches(msg, k.Up):
		return v.pick(v.sel - 1)
	case key.Matches(msg, k.Down):
		return v.pick(v.sel + 1)
	case key.Matches(msg, k.ScrollUp):
		v.vp.PageUp()
	case key.Matches(msg, k.ScrollDown):
		v.vp.PageDown()
	case key.Matches(msg, k.Top):
		v.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		v.vp.GotoBottom()
	case key.Matches(msg, k.Run):
		return v, send(requestMsg{verb: "run", job: v.job})
	case key.Matches(msg, k.Pause):
		verb := "pause"
		if j, _ := v.c.data.job(v.job); j.Paused {
			verb = "resume"
		}
		return v, send(requestMsg{verb: verb, job: v.job})
	case key.Matches(msg, k.Kill) && k.Kill.Enabled():
		return v, send(requestMsg{verb: "kill", job: v.job})
	}
	return v, nil
}

// pick selects entry i of the runs list and loads what it shows. The log
// is asked of the source for every run, whether or not its record names a
// log file: the daemon knows where its logs are. Only a skip has none.
func (v detailView) pick(i int) (detailView, tea.Cmd) {
	i = clamp(i, len(v.recs)+1)
	if i == v.sel {
		return v, nil
	}
	v.sel, v.selKey, v.log = i, "", savedLog{}
	r, ok := v.selected()
	if !ok {
		return v.Refresh().follow(), nil
	}
	v.selKey = recKey(r)
	v.log.key = v.selKey
	if r.Outcome == run.Skipped {
		v.log.none = true
		return v.Refresh(), nil
	}
	v.log.lines = []string{"loading the log of run " + r.RunID + " …"}
	return v.Refresh(), v.c.readLog(v.job, r.RunID)
}

// follow scrolls the live output to its end.
func (v detailView) follow() detailView {
	v.vp.GotoBottom()
	return v
}

// Refresh re-reads the store: the job's state, the live tail, and the
// action keys that apply. The root model calls it after every change.
func (v detailView) Refresh() detailView {
	j, ok := v.c.data.job(v.job)
	var ref *jobRef
	if ok {
		ref = &jobRef{name: j.Name, running: j.State == ctl.StateRunning, paused: j.Paused}
	}
	v.keys.actionKeys.fit(ref, v.c.readOnly)
	v.vp.Width, v.vp.Height = v.width, v.outputHeight()
	v.off = window(v.off, v.sel, v.runsHeight(), len(v.recs)+1)
	atEnd := v.vp.AtBottom()
	v.vp.SetContent(strings.Join(v.output(), "\n"))
	if v.sel == 0 && atEnd {
		v.vp.GotoBottom()
	}
	return v
}

// output is what the output pane shows, styled: a past run's cost, then
// its saved log.
func (v detailView) output() []string {
	st := v.c.st
	r, picked := v.selected()
	var out []string
	if cost := costLine(st, r); picked && cost != "" {
		out = append(out, cost)
	}
	if picked && v.log.none {
		return append(out, noLog(st, v.c.now(), r)...)
	}
	lines := v.log.lines
	if !picked {
		lines = v.c.data.tail(v.job)
		if len(lines) == 0 {
			return []string{st.muted.Render("no output seen yet; the output of the next run of " + v.job + " appears here live")}
		}
	}
	for _, l := range lines {
		out = append(out, styleLogLine(st, l))
	}
	return out
}

// styleLogLine drops the stream tag of a log line ("stdout | text"), and
// marks stderr so that it stands out also without colour.
func styleLogLine(st styles, l string) string {
	switch {
	case strings.HasPrefix(l, "stdout | "):
		return "  " + l[len("stdout | "):]
	case strings.HasPrefix(l, "stderr | "):
		return st.warn.Render("! " + l[len("stderr | "):])
	case strings.HasPrefix(l, "── "), strings.HasPrefix(l, "… ["):
		return st.muted.Render(l)
	}
	return "  " + l
}

// noLog explains an entry without a saved log: for a skip, who held the
// lock and since when, which is the whole story of a skip.
func noLog(st styles, now time.Time, r run.Record) []string {
	lines := []string{st.muted.Render("  no saved log for run " + r.RunID)}
	switch r.Outcome {
	case run.Skipped:
		lines = []string{"  skipped the fire of " + clock(now, r.ScheduledAt) + ", so there is no output"}
		if h := r.Holder; h != nil && !h.Since.IsZero() {
			lines = append(lines, "  the lock was held by pid "+pidHost(h.PID, h.Host)+" since "+
				clock(now, h.Since)+", for "+heldFor(r))
		}
	}
	if r.Reason != "" {
		lines = append(lines, st.muted.Render("  reason: "+localTimes(now, r.Reason)))
	}
	return lines
}
