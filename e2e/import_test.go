package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EImportCrontab runs `cronvisor import crontab` as a user would:
// stdout validates, untranslated lines are reported as LINE: why with exit
// 3, a clean crontab exits 0, --write merges into --config and the result
// validates, and a usage error exits 2.
func TestE2EImportCrontab(t *testing.T) {
	s := newSandbox(t, `jobs:
  - name: existing
    schedule: "@hourly"
    timeout: 1m
    command: echo existing
`)
	write := func(name, text string) string {
		p := filepath.Join(s.dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	messy := write("messy.crontab", "MAILTO=ops@example.com\n*/5 * * * * flock -n /tmp/x.lock echo hi >/dev/null 2>&1\n@reboot echo boot\n")
	clean := write("clean.crontab", "CRON_TZ=Europe/Paris\n30 2 * * 1-5 timeout 5m /usr/local/bin/existing\n")

	code, stdout, stderr := s.runCV(10*time.Second, "import", "crontab", messy)
	if code != 3 {
		t.Errorf("import of a crontab with @reboot and MAILTO: exit %d, want 3; stderr %s", code, stderr)
	}
	for _, w := range []string{"1: MAILTO=ops@example.com: cronvisor sends no mail", "3: @reboot: "} {
		if !strings.Contains(stderr, w) {
			t.Errorf("the report %q lacks %q", stderr, w)
		}
	}
	out := write("imported.yaml", stdout)
	if code, vout, verr := s.runCV(10*time.Second, "validate", "--config", out); code != 0 {
		t.Errorf("the imported file does not validate (exit %d): %s%s\n%s", code, vout, verr, stdout)
	}

	code, _, stderr = s.runCV(10*time.Second, "import", "crontab", clean, "--write")
	if code != 0 || stderr != s.config+": 1 job(s) added\n" {
		t.Errorf("import --write of a clean crontab: exit %d, stderr %q; want 0 and one job added", code, stderr)
	}
	merged := readFile(t, s.config)
	for _, w := range []string{"name: existing\n", "name: existing_2\n", "timezone: Europe/Paris", "timeout: 5m", "command: /usr/local/bin/existing"} {
		if !strings.Contains(merged, w) {
			t.Errorf("the merged file lacks %q:\n%s", w, merged)
		}
	}
	if code, vout, verr := s.runCV(10*time.Second, "validate"); code != 0 {
		t.Errorf("the merged file does not validate (exit %d): %s%s", code, vout, verr)
	}

	for _, args := range [][]string{{"import", "crontab", messy, clean}, {"import", "anacrontab"}, {"import"}} {
		if code, _, stderr := s.runCV(10*time.Second, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
	if code, _, stderr := s.runCV(10*time.Second, "import", "crontab", filepath.Join(s.dir, "absent")); code != 1 || !strings.Contains(stderr, "absent") {
		t.Errorf("a missing file: exit %d (%s), want 1 naming it", code, stderr)
	}
}
