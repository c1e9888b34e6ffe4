// Package ui is cronvisor's live console: a Bubble Tea program that shows
// which jobs run, which were skipped and why, and who holds each lock.
//
// The console reads everything through a Source: the control socket's
// *ctl.Client when attached to a daemon, or an adapter over the in-process
// scheduler when embedded. Both behave the same to the model, which never
// blocks the scheduler: events arrive on a channel that a tea.Cmd reads one
// batch at a time, and every call to the Source happens inside a tea.Cmd.
package ui

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// Source is where the console gets its data and sends its actions. It is
// the method set of *ctl.Client, so a client satisfies it as is.
type Source interface {
	Jobs(ctx context.Context) ([]ctl.JobStatus, error)
	// JobsNamed reads the named jobs only; ctl.ErrUnsupported from a
	// daemon that cannot, which the console then reads whole.
	JobsNamed(ctx context.Context, names []string) ([]ctl.JobStatus, error)
	Locks(ctx context.Context) ([]ctl.LockStatus, error)
	History(ctx context.Context, q ctl.HistoryQuery) ([]run.Record, error)
	// Log is the end of a run's saved log, read by the daemon: the console
	// never opens the state dir's files itself.
	Log(ctx context.Context, job, runID string) (ctl.RunLog, error)
	// RunNow and Kill are the daemon's actions, the CLI's own: a paused
	// or disabled job's fire is refused unless forced (the console asks
	// first), and a kill says where each run stands.
	RunNow(ctx context.Context, job string, o ctl.FireOptions) (ctl.RunResult, error)
	Pause(ctx context.Context, job string) error
	Resume(ctx context.Context, job string) error
	Kill(ctx context.Context, job string, o ctl.KillOptions) (ctl.KillResult, error)
	Reload(ctx context.Context) error
	// Daemon says whether the daemon is shutting down and whether its
	// last reload was refused.
	Daemon(ctx context.Context) (ctl.DaemonStatus, error)
	// Hosts is the fleet's hosts when the daemon's history is shared;
	// ctl.ErrUnsupported from a daemon that predates them.
	Hosts(ctx context.Context) (ctl.Hosts, error)
	// Events streams live events until ctx ends; a closed channel means
	// the source went away, and the console reconnects.
	Events(ctx context.Context) (<-chan ctl.WireEvent, error)
}

// StateDir reads what the state dir says without a daemon: the jobs of
// jobs.yaml with their lock files' holders, the locks, the history and the
// saved logs. An attached console shows it, greyed, while its daemon is
// away.
type StateDir interface {
	Jobs(ctx context.Context) ([]ctl.JobStatus, error)
	Locks(ctx context.Context) ([]ctl.LockStatus, error)
	History(ctx context.Context, q ctl.HistoryQuery) ([]run.Record, error)
	Log(ctx context.Context, job, runID string) (ctl.RunLog, error)
}

// Options configure the console.
type Options struct {
	// Title says what the console is attached to: the socket path, or
	// "embedded". It is shown in the header and in the lost-daemon banner.
	Title string
	// Embedded means the scheduler runs in this process: quitting while
	// jobs run asks first, since the caller will end them.
	Embedded bool
	// Offline is read while the source is lost; nil keeps the last
	// snapshot on screen, frozen at the moment it was lost.
	Offline StateDir
	// Clock is the time source for ages and countdowns; nil means
	// time.Now. Tests pin it.
	Clock func() time.Time
	// ReadOnly turns off and refuses every key and command that changes
	// anything (run, pause, resume, kill, reload): a console to look with.
	ReadOnly bool
	// Prefs is the file the jobs table's columns and sort are kept in
	// between sessions (PrefsPath); "" keeps them for this session only.
	Prefs string
	// Input and Output replace the terminal; nil means stdin and stdout.
	Input  io.Reader
	Output io.Writer
}

// rendererFPS is bubbletea's renderer's rate, the lowest it takes: the
// console draws its own frames (screen.go) and gives it nothing to draw.
const rendererFPS = 1

// Run shows the console on the terminal (alternate screen, mouse wheel)
// and returns when the user quits or ctx ends.
func Run(ctx context.Context, src Source, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the event subscription with the program

	var out io.Writer = os.Stdout
	if opts.Output != nil {
		out = opts.Output
	}
	// Ask the terminal for its colours before the program owns it: the
	// query reads from the terminal, which must not race with key input.
	r := lipgloss.NewRenderer(out)
	r.ColorProfile()
	r.HasDarkBackground()

	m := framed{m: newModel(ctx, src, opts, r), scr: &screen{out: out}, clock: time.Now}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen(),
		tea.WithMouseCellMotion(), tea.WithOutput(out), tea.WithFPS(rendererFPS)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the caller ended us; not an error of the console
	}
	return err
}

// New returns the console's model, for tests and for callers that run
// their own tea.Program. Its styles use lipgloss's default renderer.
func New(src Source, opts Options) Model {
	return newModel(context.Background(), src, opts, lipgloss.DefaultRenderer())
}
