package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeCrontab writes a crontab into the sandbox and returns its path.
func (s *sandbox) writeCrontab(name, text string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// TestImportMailtoSaysWhatToWrite (issue 25, point 6): MAILTO is reported
// with what to write instead, not as something not built.
func TestImportMailtoSaysWhatToWrite(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "")
	tab := s.writeCrontab("mail.crontab", "MAILTO=ops@example.com\n0 1 * * * /usr/local/bin/backup.sh\n")
	code, _, stderr := s.runCV(10*time.Second, "import", "crontab", tab)
	want := `1: MAILTO=ops@example.com: cronvisor sends no mail itself; each run's output is kept in its log (cronvisor logs, history, the console). ` +
		`For mail on failure add to defaults: notify: [{on: [failure, timeout], command: 'mail -s "cronvisor: $CRONVISOR_JOB $CRONVISOR_EVENT" ops@example.com'}]`
	if code != 3 || !strings.Contains(stderr, want) || strings.Contains(stderr, "not built") {
		t.Errorf("import: exit %d, stderr %q; want 3 and %q", code, stderr, want)
	}
}

// TestImportCrontabMisleadsNoMore (issue 25, point 8): a % that leaves a
// quote open is reported with the \% fix and no job; a healthchecks ping
// becomes ping:; tools are named after their target, scripts after the
// script; a user crontab's jobs get no dir: of the importer's home; a
// system crontab without --system is read as one, and said so.
func TestImportCrontabMisleadsNoMore(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "")
	const uuid = "0c4d2a1e-6f0b-4a35-9d7e-0c1a2b3c4d5e"
	user := s.writeCrontab("user.crontab", `0 7 * * * mail -s "report $(date +%B)" ops@example.com < /tmp/r.txt
0 8 * * * /usr/local/bin/backup.sh && curl -fsS -m 10 --retry 5 -o /dev/null https://hc-ping.com/`+uuid+`
0 4 * * * find /var/log/app -mtime +30 -delete
30 4 * * * tar czf /backup/home.tgz /home
`)
	code, stdout, stderr := s.runCV(10*time.Second, "import", "crontab", user)
	if code != 3 || !strings.Contains(stderr, `1: cron ends the command at its first %, which leaves a quote open in "mail -s \"report $(date +": write \% for a literal %`) {
		t.Errorf("import: exit %d, stderr %q; want 3 and the %% line reported", code, stderr)
	}
	for _, want := range []string{"name: backup\n", "command: /usr/local/bin/backup.sh\n", "ping: https://hc-ping.com/" + uuid + "\n",
		"name: find_app\n", "name: tar_home\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the jobs.yaml lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "mail -s") || regexp.MustCompile(`(?m)^ *dir:`).MatchString(stdout) || strings.Contains(stdout, "name: curl") {
		t.Errorf("the jobs.yaml has a broken mail job, a dir: or a job named after curl:\n%s", stdout)
	}
	out := filepath.Join(s.dir, "imported.yaml")
	if err := os.WriteFile(out, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, vout, _ := s.runCV(10*time.Second, "--config", out, "validate"); code != 0 {
		t.Errorf("the imported file does not validate: %s", vout)
	}

	system := s.writeCrontab("etc-crontab", "SHELL=/bin/sh\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n")
	code, stdout, stderr = s.runCV(10*time.Second, "import", "crontab", system)
	if code != 0 || !strings.Contains(stderr, "reads as a system crontab (a user field after the schedule: root); imported as with --system") ||
		!strings.Contains(stdout, "user: root") || strings.Contains(stdout, "command: root cd") {
		t.Errorf("import of a system crontab without --system: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if _, stdout, _ := s.runCV(10*time.Second, "import", "crontab", "--system=false", system); !strings.Contains(stdout, "command: root cd / && run-parts") {
		t.Errorf("--system=false did not read it as a user crontab:\n%s", stdout)
	}
}
