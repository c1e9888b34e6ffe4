package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
)

// TestMain pins what a golden screen depends on besides the model: no
// colours (the goldens are plain text) and a dark background.
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

// ref is the pinned "now" of every test: a Saturday noon.
var ref = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// at is ref moved by d.
func at(d time.Duration) time.Time { return ref.Add(d) }

func fixedClock() time.Time { return ref }

const sockPath = "/srv/app/.cronvisor/cronvisor.sock"

// fakeSource is a Source with canned answers that records the actions
// asked of it.
type fakeSource struct {
	mu    sync.Mutex
	jobs  []ctl.JobStatus
	locks []ctl.LockStatus
	// resources are the declared resources; none unless a test sets them.
	resources []ctl.ResourceStatus
	records   []run.Record
	events    chan ctl.WireEvent
	err       error // returned by every call when set
	calls     []string
	// runResult is RunNow's answer; zero means a started run r-manual.
	runResult ctl.RunResult
	daemon    ctl.DaemonStatus
	hosts     ctl.Hosts // the fleet; none unless a test shares the history
	// logs are saved logs by run id that no record names, as the daemon
	// finds them in the state dir by their run id.
	logs map[string][]string
}

func newFake() *fakeSource {
	return &fakeSource{jobs: fixtureJobs(), locks: fixtureLocks(), records: fixtureRecords(),
		events: make(chan ctl.WireEvent, 1024)}
}

func (f *fakeSource) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakeSource) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Jobs returns a copy, as a real source does: a test that changes f.jobs
// changes what the next read brings, not what the console holds.
func (f *fakeSource) Jobs(context.Context) ([]ctl.JobStatus, error) {
	err := f.record("jobs")
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs), err
}

func (f *fakeSource) JobsNamed(_ context.Context, names []string) ([]ctl.JobStatus, error) {
	if err := f.record("jobs " + strings.Join(names, ",")); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ctl.JobStatus
	for _, j := range f.jobs {
		if slices.Contains(names, j.Name) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (f *fakeSource) Locks(context.Context) ([]ctl.LockStatus, error) {
	return f.locks, f.record("locks")
}

func (f *fakeSource) Resources(context.Context) ([]ctl.ResourceStatus, error) {
	return f.resources, f.record("resources")
}

func (f *fakeSource) History(_ context.Context, q ctl.HistoryQuery) ([]run.Record, error) {
	if err := f.record("history " + q.Job); err != nil {
		return nil, err
	}
	var out []run.Record
	for _, r := range f.records {
		if (q.Job == "" || r.Job == q.Job) && !sortTime(r).Before(q.Since) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Log reads the record's log file as the daemon would.
func (f *fakeSource) Log(_ context.Context, job, runID string) (ctl.RunLog, error) {
	if err := f.record("log " + job + " " + runID); err != nil {
		return ctl.RunLog{}, err
	}
	f.mu.Lock()
	lines, ok := f.logs[runID]
	f.mu.Unlock()
	if ok {
		return ctl.RunLog{Job: job, RunID: runID, Lines: lines}, nil
	}
	return recordLog(f.records, job, runID)
}

// recordLog is the end of the log of the record of job's run runID.
func recordLog(recs []run.Record, job, runID string) (ctl.RunLog, error) {
	for _, r := range recs {
		if r.Job == job && r.RunID == runID && r.LogPath != "" {
			lines, omitted, err := history.TailFile(r.LogPath, ctl.LogTail)
			return ctl.RunLog{Job: job, RunID: runID, Lines: lines, Omitted: omitted}, err
		}
	}
	return ctl.RunLog{}, fmt.Errorf("%w for run %s of %s", ctl.ErrNoLog, runID, job)
}

func (f *fakeSource) RunNow(_ context.Context, job string, o ctl.FireOptions) (ctl.RunResult, error) {
	f.mu.Lock()
	res := f.runResult
	f.mu.Unlock()
	verb := "run "
	if o.Force {
		verb = "run --force "
		res = ctl.RunResult{RunID: "r-forced", Started: true, Forced: true, Hold: res.Hold}
	}
	if res.RunID == "" && !res.Refused {
		res = ctl.RunResult{RunID: "r-manual", Started: true}
	}
	return res, f.record(verb + job)
}

func (f *fakeSource) Daemon(context.Context) (ctl.DaemonStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.daemon, f.err
}

// Hosts is not recorded: the console reads it in the background.
func (f *fakeSource) Hosts(context.Context) (ctl.Hosts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hosts, f.err
}

func (f *fakeSource) Pause(_ context.Context, job string) error  { return f.record("pause " + job) }
func (f *fakeSource) Resume(_ context.Context, job string) error { return f.record("resume " + job) }
func (f *fakeSource) Reload(context.Context) error               { return f.record("reload") }

func (f *fakeSource) Kill(_ context.Context, job string, _ ctl.KillOptions) (ctl.KillResult, error) {
	return ctl.KillResult{Killed: 1, Runs: []ctl.KilledRun{{RunID: "r-sync-7", Ended: true, Outcome: run.Interrupted}}}, f.record("kill " + job)
}

func (f *fakeSource) Events(context.Context) (<-chan ctl.WireEvent, error) {
	if err := f.record("events"); err != nil {
		return nil, err
	}
	return f.events, nil
}

// loaded is a console at w×h that has read the fake's snapshot and
// history, as it would right after starting.
func loaded(t *testing.T, f *fakeSource, opts Options, w, h int) Model {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = fixedClock
	}
	if opts.Title == "" {
		opts.Title = sockPath
	}
	m := New(f, opts)
	m, _ = m.update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, cmd := range m.startCmds() {
		m, _ = m.update(cmd())
	}
	return m
}

// press sends keys, one message each, and returns the model and the
// command of the last.
func press(m Model, keys ...string) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		m, cmd = m.update(keyMsg(k))
	}
	return m, cmd
}

// pressRead is press, and the reads a key starts are answered: showing
// the locks tab reads them.
func pressRead(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		var cmd tea.Cmd
		m, cmd = m.update(keyMsg(k))
		if cmd == nil {
			continue
		}
		if msg, ok := cmd().(rowsMsg); ok {
			m, _ = m.update(msg)
		}
	}
	return m
}

func keyMsg(k string) tea.KeyMsg {
	types := map[string]tea.KeyType{"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab,
		"shift+tab": tea.KeyShiftTab, "ctrl+c": tea.KeyCtrlC, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "backspace": tea.KeyBackspace,
		"left": tea.KeyLeft, "right": tea.KeyRight}
	if t, ok := types[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// follow runs cmd, which must not block, and feeds its message back, as
// the program would, and returns the command that answered it. A batch's
// commands are followed in order, and their answers dropped.
func follow(t *testing.T, m Model, cmd tea.Cmd) (Model, tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to follow")
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			if c != nil {
				m, _ = follow(t, m, c)
			}
		}
		return m, nil
	}
	return m.update(msg)
}

// writeLog writes a saved run log as history.Log does.
func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.log")
	var b []byte
	for _, l := range lines {
		b = fmt.Appendf(b, "%s\n", l)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
