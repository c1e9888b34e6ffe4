package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithout runs cronvisor like runCV, from a shell that lacks the
// variables unset (an operator's second shell).
func (s *sandbox) runWithout(unset []string, args ...string) (code int, stdout, stderr string) {
	s.t.Helper()
	var env []string
	for _, kv := range s.env() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(unset, name) {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cvBin, append([]string{"--config", s.config}, args...)...)
	var out, errb bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.dir, env, &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		s.t.Fatalf("%v did not exit within 20s", args)
	}
	if err != nil && cmd.ProcessState == nil {
		s.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

const readerJobs = `jobs:
  - name: beat
    schedule: "@every 1s"
    command: echo beat
    timeout: 5s
    notify:
      - on: [failure]
        url: http://127.0.0.1:9/hook
        headers: {Authorization: "Bearer ${CV25_HOOK_TOKEN}"}
`

// TestReadOnlyCommandsNeedNoSecretNorValidFile (issue 25, point 1): the
// daemon was started with the webhook's token; status, locks, history,
// logs, next and the attached console work from a shell without it, and
// go on working, showing the daemon's view and naming the file's problem
// in one line, while jobs.yaml holds a refused edit; without the daemon
// they show what the state dir says.
func TestReadOnlyCommandsNeedNoSecretNorValidFile(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, readerJobs)
	d := s.startEnv([]string{"CV25_HOOK_TOKEN=s3cret"}, cvBin, "--config", s.config, "daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	unset := []string{"CV25_HOOK_TOKEN"}
	waitFor(t, 15*time.Second, "a run of beat in the history", func() bool {
		_, out, _ := s.runWithout(unset, "history", "--job", "beat")
		return strings.Contains(out, " ok ")
	})
	readers := func(phase string, wantStderr *regexp.Regexp) {
		t.Helper()
		for _, args := range [][]string{{"status"}, {"status", "beat"}, {"locks"}, {"history"}, {"logs", "beat"}, {"next", "beat", "-n", "1"}} {
			code, out, errOut := s.runWithout(unset, args...)
			if code != 0 || !strings.Contains(out, "beat") && args[0] != "next" || out == "" {
				t.Errorf("%s: %v: exit %d, stdout %q, stderr %q; want 0 and beat's rows", phase, args, code, out, errOut)
			}
			if wantStderr != nil && !wantStderr.MatchString(errOut) {
				t.Errorf("%s: %v: stderr %q, want a line matching %s", phase, args, errOut, wantStderr)
			}
		}
		exitFile := filepath.Join(s.dir, "ui-exit")
		_ = os.Remove(exitFile)
		// The shell writes the console's exit status: tmux's own
		// pane_dead_status was found empty now and then on a dead pane.
		tm := startTmux(t, s, 120, 30, "sh", "-c", `"$0" --config "$1" ui; echo $? > "$2"`, cvBin, s.config, exitFile)
		tm.await(15*time.Second, phase+": the console's jobs", func(sc string) bool { return strings.Contains(sc, "beat") })
		tm.keys("q")
		waitFor(t, 10*time.Second, phase+": the console to exit", tm.dead)
		if got := strings.TrimSpace(readFile(t, exitFile)); got != "0" {
			t.Errorf("%s: ui exit status %q, want 0; the screen:\n%s", phase, got, tm.screen())
		}
	}
	readers("without the token", nil)

	refused := strings.Replace(readerJobs, `"@every 1s"`, `"61 * * * *"`, 1)
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+refused), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	waitFor(t, 10*time.Second, "the daemon to refuse the edit", func() bool { return strings.Contains(d.stderr(), "refused") })
	problem := regexp.MustCompile(`(?m)^cronvisor: ` + regexp.QuoteMeta(s.config) + `:4:15: .*61.*refused`)
	readers("with a refused edit", problem)
	if code, out, errOut := s.runWithout(unset, "status", "--json"); code != 0 || !strings.Contains(out, `"next_run"`) {
		t.Errorf("status --json with a refused edit: exit %d, %q %q; want the daemon's jobs, with their next runs", code, out, errOut)
	}

	stopDaemons(t, d)
	code, out, errOut := s.runWithout(unset, "status")
	if code != 0 || !strings.Contains(out, "beat") || !strings.Contains(errOut, "no daemon running") || !problem.MatchString(errOut) {
		t.Errorf("status without a daemon, refused edit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := s.runWithout(unset, "history", "--job", "beat"); code != 0 || !strings.Contains(out, " ok ") {
		t.Errorf("history without a daemon, refused edit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// What acts still needs every value.
	for _, args := range [][]string{{"run", "beat"}, {"validate"}} {
		if code, _, _ := s.runWithout(unset, args...); code != 1 {
			t.Errorf("%v with a refused edit: exit %d, want 1", args, code)
		}
	}
}

// TestReadOnlyCommandsWithoutDBPassword (issue 25, point 1): a PostgreSQL
// lock backend whose url takes ${CV_E2E_DB_PASSWORD}. From a shell without
// it, locks and status ask the daemon; without a daemon they say in one
// line that the backend was not asked and why, and exit 0.
func TestReadOnlyCommandsWithoutDBPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts the PostgreSQL test server; runs in the full suite")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	s := sqlSandbox(t, srv, db, `jobs:
  - name: pgbeat
    schedule: "@every 1s"
    command: echo beat
    timeout: 5s
`)
	d := s.startDaemon()
	unset := []string{"CV_E2E_DB_PASSWORD"}
	waitFor(t, 15*time.Second, "a run of pgbeat in the history", func() bool {
		_, out, _ := s.runWithout(unset, "history", "--job", "pgbeat")
		return strings.Contains(out, " ok ")
	})
	for _, args := range [][]string{{"status"}, {"locks"}} {
		code, out, errOut := s.runWithout(unset, args...)
		if code != 0 || !strings.Contains(out, "pgbeat") || strings.Contains(errOut, "not asked") {
			t.Errorf("%v with a daemon: exit %d, stdout %q, stderr %q; want the daemon's rows", args, code, out, errOut)
		}
	}
	stopDaemons(t, d)
	notAsked := "the postgres lock backend was not asked: lock_backend.url needs CV_E2E_DB_PASSWORD, which is not set in this shell"
	for _, args := range [][]string{{"status"}, {"locks"}, {"history"}} {
		code, out, errOut := s.runWithout(unset, args...)
		if code != 0 || !strings.Contains(out, "pgbeat") {
			t.Errorf("%v without a daemon: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if args[0] != "history" && strings.Count(errOut, notAsked) != 1 {
			t.Errorf("%v without a daemon: stderr %q, want once %q", args, errOut, notAsked)
		}
	}
	if _, out, _ := s.runWithout(unset, "locks"); !regexp.MustCompile(`(?m)^pgbeat +unknown `).MatchString(out) {
		t.Errorf("locks without a daemon or backend: %q, want pgbeat's lock as unknown", out)
	}
}
