package runner

import (
	"context"
	"strings"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock/backends"
)

// The file below names a redis lock_backend, which config checks through
// the registered backends, as the program registers them (daemon).
func init() {
	for _, b := range backends.All {
		config.RegisterLockBackends(b)
	}
}

// TestFireKeepsSecretEnvOut: the variables the lock backend's URL expanded
// stay out of a job's environment unless its own env sets them; the rest
// of the supervisor's environment passes through.
func TestFireKeepsSecretEnvOut(t *testing.T) {
	t.Setenv("CV_TEST_REDIS_PASSWORD", "hunter2")
	t.Setenv("CV_TEST_REDIS_HOST", "10.0.0.7")
	t.Setenv("CV_TEST_PLAIN", "plain")
	cfg, ps := config.Parse("/srv/cron/jobs.yaml", []byte(`lock_backend:
  type: redis
  url: redis://:${CV_TEST_REDIS_PASSWORD}@${CV_TEST_REDIS_HOST}:6379/0
jobs:
  - name: a
    schedule: "@hourly"
    command: [/bin/true]
    timeout: 1m
`))
	if cfg == nil {
		t.Fatalf("parse: %v", ps)
	}
	s, ev := newTestSupervisor(t, t.TempDir(), WithSecretEnv(cfg.SecretEnv...))
	j := shJob("secrets", `echo "${CV_TEST_REDIS_PASSWORD-unset}|${CV_TEST_REDIS_HOST-unset}|${CV_TEST_PLAIN-unset}"`)
	j.Env = map[string]string{"CV_TEST_REDIS_HOST": "named by the job"}
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != run.OK {
		t.Fatalf("outcome %s (%s)", f.Outcome, f.Reason)
	}
	want := "unset|named by the job|plain"
	if out := ev.output(f.RunID); len(out) != 1 || out[0] != want {
		t.Errorf("the job saw %q, want %q", out, want)
	}
}

// TestFireEnvironmentOverTheLimitExits126: an environment execve refuses
// (E2BIG) is a start failure with 126, as docs/commands.md documents for a
// command that could not be started, not 127 (not found).
func TestFireEnvironmentOverTheLimitExits126(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	j := shJob("big", "true")
	j.Env = map[string]string{"BIG": strings.Repeat("x", 3<<20)}
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != run.Error || f.ExitCode == nil || *f.ExitCode != 126 {
		t.Fatalf("outcome %s, exit %v (%s), want error with 126", f.Outcome, f.ExitCode, f.Reason)
	}
	if !strings.Contains(f.Reason, "argument list too long") {
		t.Errorf("reason %q, want it to name E2BIG", f.Reason)
	}
}
