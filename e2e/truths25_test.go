package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestValidateReportsOnOneStream (issue 25, point 6): validate's report,
// its warnings and its verdict, is one stream, stdout, in that order.
func TestValidateReportsOnOneStream(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: never
    schedule: "0 0 31 2 *"
    command: "true"
    timeout: 1d
`)
	code, stdout, stderr := s.runCV(10*time.Second, "validate")
	got := lines(stdout)
	if code != 0 || len(got) != 2 || !strings.HasPrefix(got[0], s.config+":4:15: warning: ") ||
		got[1] != s.config+": valid, 1 job(s)" || stderr != "" {
		t.Errorf("validate: exit %d, stdout %q, stderr %q; want the warning, then the verdict, on stdout", code, stdout, stderr)
	}
}

// TestValidateHintsAtIndentation (issue 25, point 6): a line indented
// wrongly gets more than yaml's "mapping values are not allowed in this
// context": the line to check, with its depth and the one above.
func TestValidateHintsAtIndentation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"deeper under a value", "defaults:\n  timeout: 1m\n   overlap: skip\njobs: []\n",
			":4:4: invalid YAML: mapping values are not allowed in this context; check the indentation of line 4: 3 spaces, where line 3 above has 2"},
		{"shallower in a job", "jobs:\n  - name: a\n    schedule: \"@hourly\"\n   command: x\n    timeout: 1m\n",
			":5:4: invalid YAML: did not find expected '-' indicator; check the indentation of line 5: 3 spaces, where line 4 above has 4"},
		{"colon in a value", "jobs:\n  - name: a\n    schedule: \"@hourly\"\n    command: echo a: b\n    timeout: 1m\n",
			`:5:20: invalid YAML: mapping values are not allowed in this context; a value with ": " in it needs quotes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, tc.body)
			code, stdout, _ := s.runCV(10*time.Second, "validate")
			if code != 1 || strings.TrimSpace(stdout) != s.config+tc.want {
				t.Errorf("validate: exit %d, %q; want 1 and %q", code, stdout, s.config+tc.want)
			}
		})
	}
}

// TestVersionMatchesReadmeInstall (issue 25, point 6): the --version line
// of a build from a clone with a change has the shape of the README's
// example in Install: the same words, a revision, a time, a Go version.
func TestVersionMatchesReadmeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds cronvisor from a clone; runs in the full suite")
	}
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	install := string(readme)[strings.Index(string(readme), "## Install"):]
	m := regexp.MustCompile("(?m)^cronvisor --version +# (.+)$").FindStringSubmatch(install)
	if m == nil {
		t.Fatal("README's Install section shows no `cronvisor --version  # LINE`")
	}
	shape := "^"
	for i, w := range strings.Fields(m[1]) {
		if i > 0 {
			shape += " "
		}
		switch {
		case regexp.MustCompile(`^[0-9a-f]{7}$`).MatchString(w):
			shape += `[0-9a-f]{7}`
		case regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(w):
			shape += `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
		case strings.HasPrefix(w, "go1."):
			shape += `go1\.\d+(\.\d+)?`
		default:
			shape += regexp.QuoteMeta(w)
		}
	}
	re := regexp.MustCompile(shape + "$")
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("not in a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+strings.TrimSpace(string(root)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "cronvisor")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, ".") // over a GOFLAGS (go env -w) of -buildvcs=false
	build.Dir, build.Env = clone, append(os.Environ(), "GOFLAGS=", "TZ=UTC")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if got := strings.TrimSpace(string(out)); err != nil || !re.MatchString(got) {
		t.Errorf("--version of a modified clone: %q (%v); want the README's shape %q (%s)", got, err, m[1], re)
	}
}

// TestDemoJobIsSlowOnlySometimes (issue 25, point 6): the bundled
// sync_orders "usually takes 2 s" and is sometimes slow. Its command runs
// for each fire of half an hour that its lock lets through, with date and
// sleep faked (date says the fire's time, sleep only notes how long): a
// slow run must be followed by a quick one, and most runs must be quick.
// The old demo chose by the epoch second modulo 3, which the first fire
// after a slow run always shared with it.
func TestDemoJobIsSlowOnlySometimes(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	cfg, problems := config.Load("../jobs.yaml")
	if cfg == nil {
		t.Fatalf("the bundled jobs.yaml: %v", problems)
	}
	var job config.Job
	for _, j := range cfg.Jobs {
		if j.Name == "sync_orders" {
			job = j
		}
	}
	fake := t.TempDir()
	for name, body := range map[string]string{"date": `echo "$FAKE_NOW"`, "sleep": `echo "$1" >> "$SLEEP_LOG"`} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleepLog := filepath.Join(fake, "sleeps")
	var runs []time.Duration
	busyUntil := time.Time{}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for fire := job.Sched.Next(start); fire.Before(start.Add(30 * time.Minute)); fire = job.Sched.Next(fire) {
		if fire.Before(busyUntil) {
			continue // skipped: the lock is held
		}
		_ = os.Remove(sleepLog)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, job.Command[0], job.Command[1:]...)
		cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "SLEEP_LOG="+sleepLog,
			"FAKE_NOW="+strconv.FormatInt(fire.Unix(), 10), "CRONVISOR_SCHEDULED_AT="+fire.Format(time.RFC3339Nano))
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("sync_orders at %v: %v\n%s", fire, err, out)
		}
		secs, err := strconv.Atoi(strings.TrimSpace(readFile(t, sleepLog)))
		if err != nil {
			t.Fatalf("sync_orders at %v slept %q", fire, readFile(t, sleepLog))
		}
		d := time.Duration(secs) * time.Second
		if n := len(runs); n > 0 && d > 10*time.Second && runs[n-1] > 10*time.Second {
			t.Fatalf("two slow runs in a row, the second at %v: every later run would be slow too", fire)
		}
		runs = append(runs, d)
		busyUntil = fire.Add(d)
	}
	slow := 0
	for _, d := range runs {
		if d > 10*time.Second {
			slow++
		}
	}
	if slow == 0 || slow*4 > len(runs) {
		t.Errorf("%d of %d runs slow; want some, and most quick", slow, len(runs))
	}
}
