package e2e

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is a real terminal for the console: a detached tmux session on a
// private server, read with capture-pane and driven with send-keys.
type tmuxTerm struct {
	t      *testing.T
	socket string
	env    []string
}

// startTmux runs argv in a w×h tmux session in the sandbox's dir, with the
// sandbox's marker in its environment so that the survivor check covers
// everything it starts. The pane stays after argv exits, so that its end
// can be seen; a cleanup kills the server.
func startTmux(t *testing.T, s *sandbox, w, h int, argv ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the console test needs tmux (./test.sh installs it):", err)
	}
	conf := filepath.Join(s.dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The console keeps its columns and sort in the user's config dir:
	// each test has its own, so that no choice leaks into another test.
	tm := &tmuxTerm{t: t, socket: "cv-e2e-" + randHex(6), env: s.env("XDG_CONFIG_HOME=" + filepath.Join(s.dir, "config"))}
	t.Cleanup(func() { _, _ = tm.run("kill-server") })
	args := append([]string{"-f", conf, "new-session", "-d", "-s", "cv", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"-c", s.dir, "--"}, argv...)
	if out, err := tm.run(args...); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	return tm
}

// run is one tmux command on the test's server, bounded in time.
func (tm *tmuxTerm) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen is the pane's text now.
func (tm *tmuxTerm) screen() string {
	tm.t.Helper()
	out, err := tm.run("capture-pane", "-p", "-t", "cv")
	if err != nil {
		tm.t.Fatalf("tmux capture-pane: %v: %s", err, out)
	}
	return out
}

// keys types keys, one send-keys each: tmux would otherwise send "Escape"
// and the next key together, which a terminal reads as alt+key.
func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if out, err := tm.run("send-keys", "-t", "cv", k); err != nil {
			tm.t.Fatalf("tmux send-keys %s: %v: %s", k, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dead reports whether the pane's program has exited.
func (tm *tmuxTerm) dead() bool {
	out, err := tm.run("display-message", "-p", "-t", "cv", "#{pane_dead}")
	return err == nil && strings.TrimSpace(out) == "1"
}

// await polls the screen until cond holds, failing after timeout with the
// last screen.
func (tm *tmuxTerm) await(timeout time.Duration, what string, cond func(screen string) bool) string {
	tm.t.Helper()
	var screen string
	for deadline := time.Now().Add(timeout); ; {
		if screen = tm.screen(); cond(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", timeout, what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func firstInt(re *regexp.Regexp, s string) int {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func lineWith(screen, sub string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// runningPIDRE finds the pid of a running run on the console's screen.
var runningPIDRE = regexp.MustCompile(`running pid (\d+)`)

var updateGolden = flag.Bool("update", false, "rewrite the console's golden screens under testdata")

// ageRE is an age or a countdown in the table, which ticks (a word of
// its own such as 1m, 1m05s, 27d20h), with the spaces after it.
var ageRE = regexp.MustCompile(`(^|\s)\d+[dhms](\d\d[hms])?(\s+|$)`)

// maskAge is an age as "AGE", padded to the width the age and its spaces
// had, so that the columns after it stay where they are.
func maskAge(m string) string {
	lead := ""
	if m[0] == ' ' {
		lead, m = " ", m[1:]
	}
	return lead + "AGE" + strings.Repeat(" ", max(1, len(m)-3))
}

// whenRE is a time of the NEXT column (15:04:05, Fri 00:00, Jan  1),
// which moves with the day the test runs, with the spaces after it.
var whenRE = regexp.MustCompile(`(^|\s)(\d\d:\d\d:\d\d|[A-Z][a-z]{2} \d\d:\d\d|[A-Z][a-z]{2} [ \d]\d)(\s+|$)`)

// maskWhen is a time as "WHEN", padded as maskAge pads.
func maskWhen(m string) string {
	lead := ""
	if m[0] == ' ' {
		lead, m = " ", m[1:]
	}
	return lead + "WHEN" + strings.Repeat(" ", max(1, len(m)-4))
}

// tableOf is the jobs table of a screen, its title row to its last row,
// with ages, countdowns and next fires masked; without the preview
// beside it on a wide screen.
func tableOf(screen string) string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		l, _, _ = strings.Cut(l, "│")
		l = strings.TrimRight(l, " ")
		if strings.Contains(l, "JOB ▾") || len(out) > 0 && l != "" {
			for whenRE.MatchString(l) {
				l = whenRE.ReplaceAllStringFunc(l, maskWhen)
			}
			for ageRE.MatchString(l) {
				l = ageRE.ReplaceAllStringFunc(l, maskAge)
			}
			l = strings.TrimRight(l, " ")
			out = append(out, l)
		} else if len(out) > 0 {
			break
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// readGolden is testdata/NAME.golden; "" with -update, which writes it.
func readGolden(t *testing.T, name string) string {
	t.Helper()
	if *updateGolden {
		return ""
	}
	want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no golden testdata/%s.golden; run go test ./e2e -run %s -update", name, t.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

// compareScreen holds got to testdata/NAME.golden; -update rewrites it.
func compareScreen(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t, name)
	if got != want {
		t.Errorf("screen %s differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}
