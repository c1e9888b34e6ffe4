package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestE2ECommandLine(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "jobs: []\n")
	bundled, err := filepath.Abs("../jobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(s.dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte(`state_dir: state
jobs:
  - name: a
    schedule: "* * * * *"
    command: "true"
    timeout: 10x
    colour: red
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // exact lines; nil: not checked
		wantPrefix []string // each must start some stdout line
		wantStderr string   // substring
	}{
		{name: "validate bundled", args: []string{"--config", bundled, "validate"}}, // the report: TestValidateReportsOnOneStream
		{name: "validate broken", args: []string{"--config", broken, "validate"}, wantCode: 1,
			wantPrefix: []string{broken + ":6:14: ", broken + ":7:5: "}},
		{name: "next across spring forward",
			args:       []string{"next", "30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "2"},
			wantStdout: []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{name: "next across fall back",
			args:       []string{"next", "30 1 * * *", "--tz", "America/New_York", "--from", "2026-10-31T12:00:00-04:00", "-n", "2"},
			wantStdout: []string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{name: "unknown flag", args: []string{"--bogus"}, wantCode: 2, wantStderr: "--bogus"},
		{name: "unknown flag of run", args: []string{"run", "--bogus", "x"}, wantCode: 2, wantStderr: "--bogus"},
		{name: "run without a job", args: []string{"run"}, wantCode: 2},
		{name: "status without a daemon", args: []string{"status"}, wantCode: 0, wantStderr: "no daemon running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := s.startEnv(nil, cvBin, tc.args...)
			code := p.wait(10 * time.Second)
			stdout, stderr := p.stdout(), p.stderr()
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stdout %q, stderr %q", code, tc.wantCode, stdout, stderr)
			}
			if tc.wantStdout != nil && !slices.Equal(lines(stdout), tc.wantStdout) {
				t.Errorf("stdout %q, want lines %q", stdout, tc.wantStdout)
			}
			for _, pre := range tc.wantPrefix {
				if !slices.ContainsFunc(lines(stdout), func(l string) bool { return strings.HasPrefix(l, pre) }) {
					t.Errorf("stdout %q has no line starting %q", stdout, pre)
				}
			}
			if tc.wantPrefix != nil {
				posRE := regexp.MustCompile(`^` + regexp.QuoteMeta(broken) + `:\d+:\d+: \S`)
				for _, l := range lines(stdout) {
					if !posRE.MatchString(l) {
						t.Errorf("line %q is not PATH:LINE:COL: message", l)
					}
				}
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.wantStderr)
			}
		})
	}
}

func TestE2EJobEnvironment(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "")
	work := filepath.Join(s.dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`state_dir: state
jobs:
  - name: envjob
    schedule: "@hourly"
    dir: %s
    env: {E2E_VAR: "hello world", E2E_OVERRIDE: from_job}
    timeout: 7s
    command: |
      printf 'JOB=%%s\n' "$CRONVISOR_JOB"
      printf 'RUN_ID=%%s\n' "$CRONVISOR_RUN_ID"
      printf 'SCHEDULED_AT=%%s\n' "$CRONVISOR_SCHEDULED_AT"
      printf 'DEADLINE=%%s\n' "$CRONVISOR_DEADLINE"
      printf 'LAST_OK_SET=%%s\n' "${CRONVISOR_LAST_OK_SLOT+set}"
      printf 'VAR=%%s\n' "$E2E_VAR"
      printf 'OVERRIDE=%%s\n' "$E2E_OVERRIDE"
      printf 'INHERITED=%%s\n' "$E2E_INHERITED"
      printf 'PWD=%%s\n' "$(pwd -P)"
  - name: nodeadline
    schedule: "@hourly"
    timeout: none
    command: printf 'DEADLINE=%%s|%%s\n' "${CRONVISOR_DEADLINE+set}" "$CRONVISOR_DEADLINE"
  - name: argv
    schedule: "@hourly"
    timeout: 5s
    command: ["printf", "%%s|", "a b", "$HOME"]
`, work)
	if err := os.WriteFile(s.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(job string) string {
		t.Helper()
		p := s.startEnv([]string{"E2E_OVERRIDE=from_supervisor", "E2E_INHERITED=yes"}, cvBin, "--config", s.config, "run", job)
		if code := p.wait(10 * time.Second); code != 0 {
			t.Fatalf("run %s: exit %d; stderr %q", job, code, p.stderr())
		}
		return p.stdout()
	}

	t.Run("contract variables, env and dir", func(t *testing.T) {
		before := time.Now()
		out := run("envjob")
		after := time.Now()
		got := map[string]string{}
		for _, l := range lines(out) {
			k, v, _ := strings.Cut(l, "=")
			got[k] = v
		}
		want := map[string]string{"JOB": "envjob", "LAST_OK_SET": "set", "VAR": "hello world",
			"OVERRIDE": "from_job", "INHERITED": "yes", "PWD": work}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s=%q, want %q (output %q)", k, got[k], v, out)
			}
		}
		if got["RUN_ID"] == "" {
			t.Errorf("CRONVISOR_RUN_ID is empty")
		}
		slot, err := time.Parse(time.RFC3339Nano, got["SCHEDULED_AT"])
		if err != nil || slot.Before(before) || slot.After(after) {
			t.Errorf("CRONVISOR_SCHEDULED_AT=%q: want an RFC3339Nano time of the manual run (%v)", got["SCHEDULED_AT"], err)
		}
		deadline, err := time.Parse(time.RFC3339Nano, got["DEADLINE"])
		if d := deadline.Sub(slot); err != nil || d < 7*time.Second || d > 9*time.Second {
			t.Errorf("CRONVISOR_DEADLINE=%q: want the slot plus the 7s timeout (%v)", got["DEADLINE"], err)
		}
	})
	t.Run("timeout none: empty deadline", func(t *testing.T) {
		if out := run("nodeadline"); out != "DEADLINE=set|\n" {
			t.Errorf("output %q, want CRONVISOR_DEADLINE set and empty", out)
		}
	})
	t.Run("list command is exec'd without a shell", func(t *testing.T) {
		if out := run("argv"); strings.TrimRight(out, "\n") != "a b|$HOME|" {
			t.Errorf("output %q, want %q", out, "a b|$HOME|")
		}
	})
}
