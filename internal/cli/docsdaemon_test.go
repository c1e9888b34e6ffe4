package cli

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
)

// countingDaemon is a ctl.Backend that answers as an idle daemon with
// one job, j, and counts the requests it gets: what a command asked the
// daemon is what reached this socket.
type countingDaemon struct{ asked atomic.Int64 }

func (d *countingDaemon) Jobs(context.Context) ([]ctl.JobStatus, error) {
	d.asked.Add(1)
	return []ctl.JobStatus{{Name: "j", Schedule: "@hourly", State: ctl.StateIdle, Enabled: true}}, nil
}

func (d *countingDaemon) JobsNamed(ctx context.Context, _ []string) ([]ctl.JobStatus, error) {
	return d.Jobs(ctx)
}

func (d *countingDaemon) Locks(context.Context) ([]ctl.LockStatus, error) {
	d.asked.Add(1)
	return nil, nil
}

func (d *countingDaemon) Resources(context.Context) ([]ctl.ResourceStatus, error) {
	d.asked.Add(1)
	return nil, nil
}

func (d *countingDaemon) History(context.Context, ctl.HistoryQuery) ([]run.Record, error) {
	d.asked.Add(1)
	return nil, nil
}

func (d *countingDaemon) Log(context.Context, string, string) (ctl.RunLog, error) {
	d.asked.Add(1)
	return ctl.RunLog{}, ctl.ErrNoLog
}

func (d *countingDaemon) RunNow(context.Context, string, ctl.FireOptions) (ctl.RunResult, error) {
	d.asked.Add(1)
	return ctl.RunResult{Outcome: run.Skipped, Reason: "a test daemon runs nothing"}, nil
}

func (d *countingDaemon) Trigger(ctx context.Context, job string, o ctl.FireOptions) (ctl.RunResult, error) {
	return d.RunNow(ctx, job, o)
}

func (d *countingDaemon) Pause(context.Context, string) error  { d.asked.Add(1); return nil }
func (d *countingDaemon) Resume(context.Context, string) error { d.asked.Add(1); return nil }
func (d *countingDaemon) Reload(context.Context) error         { d.asked.Add(1); return nil }

func (d *countingDaemon) Kill(context.Context, string, ctl.KillOptions) (ctl.KillResult, error) {
	d.asked.Add(1)
	return ctl.KillResult{}, nil
}

func (d *countingDaemon) Daemon(context.Context) (ctl.DaemonStatus, error) {
	d.asked.Add(1)
	return ctl.DaemonStatus{}, nil
}

func (d *countingDaemon) Hosts(context.Context) (ctl.Hosts, error) {
	d.asked.Add(1)
	return ctl.Hosts{}, nil
}

// Subscribe ends the stream at once: nothing runs here.
func (d *countingDaemon) Subscribe(context.Context) (<-chan ctl.WireEvent, func()) {
	d.asked.Add(1)
	ch := make(chan ctl.WireEvent)
	close(ch)
	return ch, func() {}
}

// daemonRow is one row of docs/commands.md's "Daemon or state dir"
// table: the commands it names, and what they do with a daemon serving
// the state dir and without one.
type daemonRow struct {
	names         []string
	with, without string
}

func (r daemonRow) asks() bool { return strings.HasPrefix(r.with, "asks the daemon") }

// daemonTable reads the table. A command is named without its
// placeholders (`logs -f JOB` is "logs -f").
func daemonTable(t *testing.T, text string) []daemonRow {
	t.Helper()
	_, table, ok := strings.Cut(text, "\n## Daemon or state dir\n")
	if !ok {
		t.Fatal(`docs/commands.md has no "## Daemon or state dir"`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	placeholder := regexp.MustCompile(`\b[A-Z][A-Z_]*\b`)
	var rows []daemonRow
	for _, ln := range strings.Split(table, "\n") {
		if !strings.HasPrefix(ln, "| `") {
			continue
		}
		c := tableCells(ln)
		r := daemonRow{with: c[1], without: c[2]}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(c[0], -1) {
			r.names = append(r.names, strings.Join(strings.Fields(placeholder.ReplaceAllString(m[1], "")), " "))
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("docs/commands.md's Daemon or state dir table has no rows")
	}
	return rows
}

// opsClasses are the lists of operations.md's "Who asks the daemon"
// summary, each with the rows of the table that belong in it.
var opsClasses = map[string]func(daemonRow) bool{
	"Ask the daemon when one runs, else read the state dir:": func(r daemonRow) bool {
		return r.asks() && strings.HasPrefix(r.without, "reads")
	},
	"Need the daemon, exit 1 without one:": func(r daemonRow) bool {
		return r.asks() && strings.HasPrefix(r.without, "exit 1")
	},
	"Never ask the daemon, reading the state dir themselves:": func(r daemonRow) bool {
		return strings.HasPrefix(r.with, "reads the state dir") || strings.HasPrefix(r.with, "writes the state dir")
	},
}

// opsDisagree lists where operations.md's summary names other commands
// than the table puts in that class.
func opsDisagree(rows []daemonRow, ops string) []string {
	var diffs []string
	for label, in := range opsClasses {
		_, list, ok := strings.Cut(ops, "**"+label+"**")
		if !ok {
			diffs = append(diffs, "operations.md has no list "+label)
			continue
		}
		list, _, _ = strings.Cut(list, "\n  - ")
		list, _, _ = strings.Cut(list, "\n- ")
		list = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(list, "")
		var said, want []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
			said = append(said, m[1])
		}
		for _, r := range rows {
			if in(r) {
				want = append(want, r.names...)
			}
		}
		slices.Sort(said)
		slices.Sort(want)
		if !slices.Equal(said, want) {
			diffs = append(diffs, label+" operations.md says "+strings.Join(said, ", ")+"; commands.md's table "+strings.Join(want, ", "))
		}
	}
	slices.Sort(diffs)
	return diffs
}

// commandPaths lists the visible commands' paths ("import crontab"),
// the root as "cronvisor".
func commandPaths(c *cobra.Command, into map[string]bool) {
	path := strings.TrimPrefix(c.CommandPath(), "cronvisor ")
	if c.Runnable() || !c.HasParent() {
		into[path] = true
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			commandPaths(sub, into)
		}
	}
}

// docRuns are the arguments each command of the table runs with here;
// notRunHere says for the others why not, and which test runs them.
var (
	docRuns = map[string][]string{
		"status": {"status"}, "locks": {"locks"}, "logs": {"logs", "j"},
		"history": {"history"}, "audit": {"audit"}, "logs -f": {"logs", "-f", "j"},
		"ui": {"ui"}, "pause": {"pause", "j"}, "resume": {"resume", "j"},
		"trigger": {"trigger", "j"}, "kill": {"kill", "j"}, "reload": {"reload"},
		"next": {"next", "j"}, "validate": {"validate"}, "help": {"help", "jobs.yaml"},
		"completion": {"completion", "bash"}, "import crontab": {"import", "crontab", "CRONTAB"},
		"plan": {"plan"},
	}
	notRunHere = map[string]string{
		"run":             "runs a job beside its keeper (e2e: run beside a daemon)",
		"cronvisor":       "needs a terminal (e2e: the console in tmux)",
		"daemon":          "a daemon's life (e2e: a second daemon refused)",
		"status --fleet":  "needs PostgreSQL (e2e: the fleet tests)",
		"suggest timeout": "needs recorded runs (TestSuggestTimeoutFromHistory, beside a daemon's socket)",
		"heartbeat":       "writes a beat to a run's pipe, asks no daemon (e2e: heartbeats)",
		"diff":            "compares two files (TestDiffOfAStepAndACatchUp)",
	}
	noTerminal = map[string]bool{"ui": true} // with a daemon it opens the console
)

// serveCounting serves a countingDaemon on the state dir's socket until
// the test ends.
func serveCounting(t *testing.T, stateDir string) *countingDaemon {
	t.Helper()
	ln, err := ctl.Listen(statedir.Dir(stateDir).Socket())
	if err != nil {
		t.Fatal(err)
	}
	d := &countingDaemon{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Serve(ctx, ln, d, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving the test socket: %v", err)
		}
	})
	return d
}

// layout writes a jobs.yaml of one job, j, a crontab, and a saved log of
// one run of j; it returns jobs.yaml's path and the state dir.
func layout(t *testing.T) (config, stateDir, crontab string) {
	t.Helper()
	dir := t.TempDir()
	config, stateDir, crontab = filepath.Join(dir, "jobs.yaml"), filepath.Join(dir, ".cronvisor"), filepath.Join(dir, "crontab")
	files := map[string]string{
		config:  "jobs:\n  - name: j\n    schedule: \"@hourly\"\n    command: \"true\"\n    timeout: 1m\n",
		crontab: "0 * * * * true\n",
		statedir.Dir(stateDir).RunLog("j", run.NewID(time.Now())): "stdout | saved\n",
	}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return config, stateDir, crontab
}

// execute runs one command in this process, bounded in time.
func execute(t *testing.T, args []string) (code int, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Execute(args, &out, &errb) }()
	select {
	case code = <-done:
		return code, errb.String()
	case <-time.After(20 * time.Second):
		t.Fatalf("%q did not end within 20s", args)
		return 0, ""
	}
}

// TestDocsDaemonOrStateDir holds docs/commands.md's "Daemon or state dir"
// table to the commands: every command has its row; each command it
// names asks a daemon serving the state dir exactly when the table says
// so, and without one exits 1 or answers from the state dir as the table
// says. operations.md's summary names the same commands in each class.
func TestDocsDaemonOrStateDir(t *testing.T) {
	text, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := daemonTable(t, string(text))
	have := map[string]bool{}
	commandPaths(newRoot(&globals{}), have)
	documented := map[string]bool{}
	for _, r := range rows {
		for _, n := range r.names {
			documented[n] = true
		}
	}
	for c := range have {
		sub := func(n string) bool { return strings.HasPrefix(n, c+" ") } // import: import crontab
		if !documented[c] && !slices.ContainsFunc(slices.Collect(maps.Keys(documented)), sub) {
			t.Errorf("%s: a command with no row in docs/commands.md's Daemon or state dir table", c)
		}
	}
	ops, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range opsDisagree(rows, string(ops)) {
		t.Error(d)
	}
	// The check must be able to fail: history asking the daemon would
	// move it out of "never ask".
	moved := slices.Clone(rows)
	for i, r := range moved {
		if slices.Contains(r.names, "history") {
			moved[i].with = "asks the daemon"
		}
	}
	if len(opsDisagree(moved, string(ops))) == 0 {
		t.Error("a table where history asks the daemon agrees with operations.md: the summary check cannot fail")
	}
	for _, r := range rows {
		for _, name := range r.names {
			if _, ok := docRuns[name]; !ok && notRunHere[name] == "" {
				t.Errorf("%s: in the table, but neither run by this test nor said to be run elsewhere", name)
			}
		}
	}
	t.Run("with a daemon", func(t *testing.T) { checkWithDaemon(t, rows) })
	t.Run("without one", func(t *testing.T) { checkWithoutDaemon(t, rows) })
}

// argsFor is name's command line against config (and crontab).
func argsFor(name, config, crontab string) []string {
	args := []string{"--config", config}
	for _, a := range docRuns[name] {
		if a == "CRONTAB" {
			a = crontab
		}
		args = append(args, a)
	}
	return args
}

func checkWithDaemon(t *testing.T, rows []daemonRow) {
	config, stateDir, crontab := layout(t)
	d := serveCounting(t, stateDir)
	for _, r := range rows {
		for _, name := range r.names {
			if docRuns[name] == nil || noTerminal[name] {
				continue
			}
			before := d.asked.Load()
			code, stderr := execute(t, argsFor(name, config, crontab))
			if asked := d.asked.Load() > before; asked != r.asks() {
				t.Errorf("%s beside a daemon: asked it %v, the table says %q (exit %d: %s)", name, asked, r.with, code, stderr)
			}
		}
	}
}

func checkWithoutDaemon(t *testing.T, rows []daemonRow) {
	config, _, crontab := layout(t)
	for _, r := range rows {
		for _, name := range r.names {
			if docRuns[name] == nil {
				continue
			}
			code, stderr := execute(t, argsFor(name, config, crontab))
			switch {
			case strings.HasPrefix(r.without, "exit 1"):
				if code != 1 || !strings.Contains(stderr, "daemon") {
					t.Errorf("%s without a daemon: exit %d (%s); the table says %q", name, code, stderr, r.without)
				}
			case strings.HasPrefix(r.without, "reads"):
				if code != 0 {
					t.Errorf("%s without a daemon: exit %d (%s); the table says %q", name, code, stderr, r.without)
				}
			default:
				t.Errorf("%s: the table's %q is neither `exit 1` nor `reads`, which this test checks", name, r.without)
			}
		}
	}
}
