package e2e

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestConsoleStripShowsTheCommand is issue 43's command strip: `p` on
// the bundled heartbeat job shows `cronvisor pause heartbeat` above the
// status line, and that line, run through the binary, does what the key
// did: the console (which resumed the job meanwhile) shows it paused
// again. The command log (@) lists both commands.
func TestConsoleStripShowsTheCommand(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, "jobs:\n"+ // as the bundled jobs.yaml has it
		`  - {name: heartbeat, schedule: "@every 5s", command: ["sh", "-c", "echo alive at $(date +%T)"], timeout: 4s}`+"\n")
	d := s.startDaemon()
	defer stopDaemons(t, d)
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(lineWith(sc, " heartbeat "), "idle") })
	tm.keys("p")
	sc := tm.await(5*time.Second, "the strip's pause command", func(sc string) bool {
		return strings.Contains(sc, "$ cronvisor pause heartbeat") && strings.Contains(lineWith(sc, " heartbeat "), "paused")
	})
	line := strings.TrimSpace(lineWith(sc, "$ cronvisor"))
	args := strings.Fields(strings.TrimPrefix(line[:strings.Index(line, "   ")], "$ "))
	tm.keys("p")
	tm.await(5*time.Second, "the strip's resume command", func(sc string) bool {
		return strings.Contains(sc, "$ cronvisor resume heartbeat") && strings.Contains(lineWith(sc, " heartbeat "), "idle")
	})
	if args[0] != "cronvisor" {
		t.Fatalf("the strip reads %q", line)
	}
	if code, out, errOut := s.runCV(10*time.Second, args[1:]...); code != 0 {
		t.Fatalf("%s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	tm.await(10*time.Second, "the job paused by the strip's command", func(sc string) bool {
		return strings.Contains(lineWith(sc, " heartbeat "), "paused")
	})
	tm.keys("@")
	tm.await(5*time.Second, "the command log", func(sc string) bool {
		return strings.Contains(sc, "Command log") && strings.Contains(sc, "cronvisor pause heartbeat   → paused heartbeat") &&
			strings.Contains(sc, "cronvisor resume heartbeat   → resumed heartbeat")
	})
	tm.keys("Escape", "q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}

// rowsOf is the names of jobs on screen, in screen order.
func rowsOf(screen string, names []string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if len(out) > 0 && strings.TrimSpace(l) == "" {
			break // the table ends here; the preview under it names the job too
		}
		for _, n := range names {
			if strings.Contains(l, "  "+n+" ") {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestConsoleSortsByNext: N sorts the jobs table by next fire, soonest
// first, and N again reverses it, the header saying which.
func TestConsoleSortsByNext(t *testing.T) {
	fullSuiteOnly(t)
	// Daily at a minute from now: next fires in 50, 10, 30 and 20 minutes.
	daily := func(in time.Duration) string {
		at := time.Now().Add(in)
		return strconv.Itoa(at.Minute()) + " " + strconv.Itoa(at.Hour()) + " * * *"
	}
	var cfg strings.Builder
	cfg.WriteString("jobs:\n")
	for _, j := range []struct {
		name string
		in   time.Duration
	}{{"alpha", 50 * time.Minute}, {"bravo", 10 * time.Minute}, {"charlie", 30 * time.Minute}, {"delta", 20 * time.Minute}} {
		cfg.WriteString("  - {name: " + j.name + `, schedule: "` + daily(j.in) + `", command: "true", timeout: 10s}` + "\n")
	}
	s := newSandbox(t, cfg.String())
	d := s.startDaemon()
	defer stopDaemons(t, d)
	names := []string{"alpha", "bravo", "charlie", "delta"}
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs by name", func(sc string) bool {
		return strings.Contains(sc, "JOB ▾") && slices.Equal(rowsOf(sc, names), names)
	})
	tm.keys("N")
	byNext := []string{"bravo", "delta", "charlie", "alpha"}
	tm.await(5*time.Second, "the jobs by next fire", func(sc string) bool {
		return strings.Contains(sc, "NEXT ▾") && slices.Equal(rowsOf(sc, names), byNext)
	})
	tm.keys("N")
	tm.await(5*time.Second, "the jobs by next fire, latest first", func(sc string) bool {
		return strings.Contains(sc, "NEXT ▴") && slices.Equal(rowsOf(sc, names), []string{"alpha", "charlie", "delta", "bravo"})
	})
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	// The choice is kept: the next console opens sorted the same way.
	tm = startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the kept sort", func(sc string) bool {
		return strings.Contains(sc, "NEXT ▴") && slices.Equal(rowsOf(sc, names), []string{"alpha", "charlie", "delta", "bravo"})
	})
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}

// seedOutcomes records one run of each job, its outcome and its end the
// given age ago.
func seedOutcomes(t *testing.T, state string, runs map[string]struct {
	o   run.Outcome
	ago time.Duration
}) {
	t.Helper()
	now := time.Now()
	var recs []run.Record
	for job, r := range runs {
		ended := now.Add(-r.ago)
		code := 0
		if r.o != run.OK {
			code = 1
		}
		recs = append(recs, run.Record{Job: job, RunID: run.NewID(ended), Outcome: r.o, ScheduledAt: ended.Add(-2 * time.Second),
			StartedAt: ended.Add(-2 * time.Second), EndedAt: ended, ExitCode: &code, Attempt: 1})
	}
	seedRecords(t, state, recs...)
}

// elapsedOfMinuteRE is the STATE cell of a run of a job whose timeout
// is 1m: elapsed/timeout.
var elapsedOfMinuteRE = regexp.MustCompile(`▶ \d+s/1m\s`)

// cellRE finds the LAST and PASSED cells of a row: an outcome's glyph
// and word, then an age.
var cellRE = regexp.MustCompile(`([●✗]) (ok|failed)\s+(\d+m\d\ds)\s`)

// TestConsoleAt80KeepsAgesAndOutcomes is issue 43's 80 columns: jobs
// with long names, failed and ok outcomes minutes old; no row's outcome
// or age is cut, the names are.
func TestConsoleAt80KeepsAgesAndOutcomes(t *testing.T) {
	fullSuiteOnly(t)
	runs := map[string]struct {
		o   run.Outcome
		ago time.Duration
	}{
		"export_full_warehouse_nightly":     {run.Failed, 3*time.Minute + 4*time.Second},
		"delta_export_warehouse_nightly":    {run.OK, 12*time.Minute + 30*time.Second},
		"refresh_materialized_views_orders": {run.Failed, 47*time.Minute + 9*time.Second},
		"rotate_application_logs_weekly":    {run.OK, 5*time.Minute + 1*time.Second},
	}
	var cfg strings.Builder
	cfg.WriteString("jobs:\n")
	for name := range runs {
		cfg.WriteString("  - {name: " + name + `, schedule: "@yearly", command: "true", timeout: 10s}` + "\n")
	}
	s := newSandbox(t, cfg.String())
	seedOutcomes(t, s.state, runs)
	d := s.startDaemon()
	defer stopDaemons(t, d)
	tm := startTmux(t, s, 80, 24, cvBin, "--config", s.config, "ui")
	sc := tm.await(10*time.Second, "four rows with their outcomes and ages", func(sc string) bool {
		for name := range runs {
			if !cellRE.MatchString(lineWith(sc, "  "+name[:10])) {
				return false
			}
		}
		return true
	})
	for name, r := range runs {
		row := lineWith(sc, "  "+name[:10])
		m := cellRE.FindStringSubmatch(row)
		if m == nil || m[2] != string(r.o) {
			t.Errorf("%s: the row %q has no whole outcome %s and age", name, row, r.o)
			continue
		}
		if age, err := time.ParseDuration(m[3]); err != nil || age < r.ago || age > r.ago+time.Minute {
			t.Errorf("%s: age %s, want about %v", name, m[3], r.ago)
		}
		if strings.Contains(row, name) || !strings.Contains(row, "…") {
			t.Errorf("%s: the row %q shows the long name whole at 80 columns: something else was cut", name, row)
		}
	}
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}
