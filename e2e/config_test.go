package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
)

// TestE2EValidateRejectsWhatCannotRun: a file whose runs could never
// start fails validate, with the problem at its line:col.
func TestE2EValidateRejectsWhatCannotRun(t *testing.T) {
	t.Parallel()
	job := "jobs:\n  - name: a\n    schedule: '@hourly'\n    command: [/bin/true]\n    timeout: 1m\n"
	tests := []struct {
		name, body, want string
	}{
		{"NUL byte in an env value", job + `    env: {A: "x\0y"}` + "\n", ":7:14: env A: the value contains a NUL byte"},
		{"3 MB env value", job + "    env: {BIG: " + strings.Repeat("x", 3<<20) + "}\n", ":7:16: env BIG: the variable is 3073 KiB, over the kernel's limit of 128 KiB"},
		{"state_dir is a file", "state_dir: jobs.yaml\n" + job, ":1:12: state_dir: "},
		{"timeout beyond 292 years", strings.Replace(job, "timeout: 1m", "timeout: 9999999h", 1), ":6:14: timeout: 9999999h is beyond the longest supported duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, tc.body)
			if strings.HasPrefix(tc.body, "state_dir:") {
				writeConfig(t, s, tc.body)
			}
			code, stdout, stderr := s.runCV(20*time.Second, "validate")
			if code != 1 {
				t.Fatalf("validate: exit %d, want 1; stdout %q stderr %q", code, stdout, stderr)
			}
			if got := lines(stdout); len(got) != 1 || !strings.HasPrefix(got[0], s.config+tc.want) {
				t.Errorf("validate printed %q, want one line %q...", clipped(stdout), s.config+tc.want)
			}
		})
	}
}

// writeConfig replaces the sandbox's jobs.yaml, state_dir line and all.
func writeConfig(t *testing.T, s *sandbox, body string) {
	t.Helper()
	if err := os.WriteFile(s.config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestE2ERunStartFailureExits126: a command that exists as far as the
// PATH goes but cannot be exec'd (a path through a file: ENOTDIR) makes
// `cronvisor run` exit 126; a command that is not there, 127.
func TestE2ERunStartFailureExits126(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: through_a_file
    schedule: "@hourly"
    command: [./jobs.yaml/x]
    timeout: 5s
  - name: missing
    schedule: "@hourly"
    command: [/nonexistent/cmd]
    timeout: 5s
`)
	for job, want := range map[string]int{"through_a_file": 126, "missing": 127} {
		if code, _, stderr := s.runCV(10*time.Second, "run", job); code != want {
			t.Errorf("run %s: exit %d, want %d; stderr %q", job, code, want, stderr)
		}
	}
}

// TestE2ERedisSecretsStayOutOfJobs: the variables a Redis lock_backend's
// url expands are the supervisor's; a job gets them only when its env
// names them. (The test's Redis has no password, so the expanded
// variables are its address and database.)
func TestE2ERedisSecretsStayOutOfJobs(t *testing.T) {
	t.Parallel()
	srv := redistest.New(t)
	s := newSandbox(t, `lock_backend: {type: redis, url: "redis://${E2E_REDIS_ADDR}/${E2E_REDIS_DB}", ttl: 2s}
jobs:
  - name: plain
    schedule: "@hourly"
    timeout: 5s
    command: echo "${E2E_REDIS_ADDR-unset}|${E2E_REDIS_DB-unset}|${E2E_OTHER-unset}"
  - name: names_one
    schedule: "@hourly"
    timeout: 5s
    env: {E2E_REDIS_DB: "mine"}
    command: echo "${E2E_REDIS_ADDR-unset}|${E2E_REDIS_DB-unset}|${E2E_OTHER-unset}"
`)
	env := []string{"E2E_REDIS_ADDR=" + srv.Addr(), "E2E_REDIS_DB=0", "E2E_OTHER=other"}
	for job, want := range map[string]string{"plain": "unset|unset|other", "names_one": "unset|mine|other"} {
		p := s.startEnv(env, cvBin, "--config", s.config, "run", job)
		if code := p.wait(15 * time.Second); code != 0 {
			t.Fatalf("run %s: exit %d; stderr %q", job, code, p.stderr())
		}
		if got := strings.TrimSpace(p.stdout()); got != want {
			t.Errorf("job %s saw %q, want %q", job, got, want)
		}
	}
}
