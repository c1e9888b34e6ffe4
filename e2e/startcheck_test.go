package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestE2EValidateRefusesWhatTheDaemonRefuses: a PostgreSQL lock URL with
// sslmode=bogus and a webhook on port 99999 are refused by validate
// (exit 1, one line each at the value, the URL masked) and by the daemon,
// which exits 1 with the same lines.
func TestE2EValidateRefusesWhatTheDaemonRefuses(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `lock_backend:
  type: postgres
  url: "postgres://user:pw@127.0.0.1:5432/db?sslmode=bogus"
jobs:
  - name: a
    schedule: "@hourly"
    command: "true"
    timeout: 5s
    notify:
      - {on: [failure], url: "http://user:pw@127.0.0.1:99999/hook?token=SECRET"}
`)
	want := []string{
		s.config + `:4:8: lock_backend.url: "postgres://***@127.0.0.1:5432/db?sslmode=***" is not a postgres://USER:PASS@HOST:PORT/DB URL: failed to configure TLS (sslmode is invalid)`,
		s.config + `:11:30: notify.url: "http://***@127.0.0.1:99999/hook?token=***" is not an http:// or https:// URL: port 99999 is not 1-65535`,
	}
	code, stdout, stderr := s.runCV(20*time.Second, "validate")
	if code != 1 {
		t.Errorf("validate: exit %d, want 1:\n%s%s", code, stdout, stderr)
	}
	d := s.cv("daemon", "--log-format", "json")
	if code := d.wait(20 * time.Second); code != 1 {
		t.Errorf("daemon: exit %d, want 1:\n%s", code, d.stderr())
	}
	for _, w := range want {
		if !strings.Contains(stdout, w+"\n") {
			t.Errorf("validate does not say\n%s\nit says:\n%s%s", w, stdout, stderr)
		}
		if !strings.Contains(d.stderr(), w+"\n") {
			t.Errorf("the daemon does not say, as validate does,\n%s\nit says:\n%s", w, d.stderr())
		}
	}
	checkMasked(t, "validate", stdout+stderr)
	checkMasked(t, "the daemon", d.stdout()+d.stderr())
}
