package ui

import (
	"errors"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// detailKeys are the job detail's bindings: up/down pick a run, the log
// keys (logview_keys.go) act on its output.
type detailKeys struct {
	Up, Down key.Binding
	Pick     key.Binding // Up and Down in the short help
	Back     key.Binding
	actionKeys
	log logKeys
}

func newDetailKeys() detailKeys {
	return detailKeys{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "newer run")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "older run")),
		Pick:       key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "runs")),
		Back:       key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		actionKeys: newActionKeys(),
		log:        newLogKeys(),
	}
}

// ShortHelp implements help.KeyMap.
func (k detailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Back, k.Pick, k.log.Search, k.Run, k.Pause, k.Kill}
}

// FullHelp implements help.KeyMap.
func (k detailKeys) FullHelp() [][]key.Binding {
	// One column for the runs and actions, so that at 80 columns the
	// log's keys fit beside it.
	return append([][]key.Binding{{k.Up, k.Down, k.Back, k.Run, k.Pause, k.Kill}}, k.log.column()...)
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
	lv     logView      // the output pane
	log    savedLog     // the saved log on display while a record is selected
	// adopted is the saved log of the live run while its keeper runs it
	// (it sends no output events), read again every adoptedPoll.
	adopted savedLog
	polled  time.Time
	onLog   string // what lv shows, to tell a new log from more of it
	width   int
	height  int
}

// savedLog is the saved output of the record whose recKey is key.
type savedLog struct {
	key   string
	lines []string
	none  bool // no saved log: a skip, or none was written; the record explains itself
	gen   int  // counts the changes of lines
}

func newDetailView(c *common) detailView {
	return detailView{c: c, keys: newDetailKeys(), lv: newLogView(c)}
}

// open shows job, following its live output.
func (v detailView) open(job string) detailView {
	v.job, v.recs, v.sel, v.selKey, v.off, v.log, v.adopted, v.onLog = job, nil, 0, "", 0, savedLog{}, savedLog{}, ""
	v.lv.full, v.lv.find = false, search{} // another job's search would find nothing here
	return v.Refresh()
}

// SetSize sets the area the view draws in.
func (v detailView) SetSize(w, h int) detailView {
	v.width, v.height = w, h
	return v.Refresh()
}

// KeyMap is the detail's keys; in the log's full screen or its search
// input, the log's.
func (v detailView) KeyMap() help.KeyMap {
	switch {
	case v.lv.inputFor != 0:
		return inputKeys{v.keys.log}
	case v.lv.full:
		return v.keys.log
	}
	return v.keys
}

// Editing reports whether the log's search input has the keys.
func (v detailView) Editing() bool { return v.lv.inputFor != 0 }

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
			v.lv = v.lv.scroll(-wheelStep)
		case tea.MouseButtonWheelDown:
			v.lv = v.lv.scroll(wheelStep)
		}
		return v, nil
	case logMsg:
		return v.gotLog(msg), nil
	case tea.KeyMsg:
		return v.key(msg)
	}
	return v, nil
}

// gotLog shows a saved log read for the selected record, or for the live
// run its keeper runs; a log of a record no longer selected is dropped.
func (v detailView) gotLog(msg logMsg) detailView {
	r, ok := v.selected()
	if !ok && msg.job == v.job {
		if j, _ := v.c.data.job(v.job); j.Adopted && msg.run == j.RunID && msg.err == nil {
			v.adopted = savedLog{key: msg.run, lines: msg.lines, gen: v.adopted.gen + 1}
			return v.Refresh()
		}
	}
	if !ok || msg.job != v.job || msg.run != r.RunID || v.log.key != v.selKey {
		return v
	}
	v.log.gen++
	switch {
	case errors.Is(msg.err, ctl.ErrNoLog):
		v.log.lines, v.log.none = nil, true
	case msg.err != nil:
		v.log.lines = []string{"cannot read the saved log: " + msg.err.Error()}
	default:
		v.log.lines = msg.lines
	}
	return v.Refresh()
}

// adoptedPoll is how often the saved log of an adopted run on screen is
// read again: its keeper appends to the file and no event tells of it.
const adoptedPoll = time.Second

// poll asks for the saved log of the live run when its keeper runs it.
func (v detailView) poll(now time.Time) (detailView, tea.Cmd) {
	j, ok := v.c.data.job(v.job)
	if v.sel != 0 || !ok || !j.Adopted || j.State != ctl.StateRunning || now.Sub(v.polled) < adoptedPoll {
		return v, nil
	}
	v.polled = now
	return v, v.c.readLog(v.job, j.RunID)
}

func (v detailView) key(msg tea.KeyMsg) (detailView, tea.Cmd) {
	if lv, cmd, ok := v.lv.key(msg); ok {
		v.lv = lv
		return v.Refresh(), cmd
	}
	k := v.keys
	switch {
	case key.Matches(msg, k.Back):
		return v, send(closeDetailMsg{})
	case key.Matches(msg, k.Up):
		return v.pick(v.sel - 1)
	case key.Matches(msg, k.Down):
		return v.pick(v.sel + 1)
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
	v.sel, v.selKey, v.log = i, "", savedLog{gen: v.log.gen + 1}
	r, ok := v.selected()
	if !ok {
		return v.Refresh(), nil
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

// Refresh re-reads the store: the job's state, the live tail, and the
// action keys that apply. The root model calls it after every change.
func (v detailView) Refresh() detailView {
	j, ok := v.c.data.job(v.job)
	var ref *jobRef
	if ok {
		ref = &jobRef{name: j.Name, running: j.State == ctl.StateRunning, paused: j.Paused}
	}
	v.keys.actionKeys.fit(ref, v.c.readOnly)
	v.off = window(v.off, v.sel, v.runsHeight(), len(v.recs)+1)
	h := v.outputHeight()
	if v.lv.full {
		h = v.height - 1
	}
	v.lv = v.lv.setSize(v.width, h)
	return v.feedLog(j)
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
