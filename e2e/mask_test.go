package e2e

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maskSecrets are what no output may show of the test's URLs.
var maskSecrets = []string{"pw", "SECRET"}

// checkMasked fails the test when out (what the command named what
// printed) holds a secret of the test's URLs.
func checkMasked(t *testing.T, what, out string) {
	t.Helper()
	for _, secret := range maskSecrets {
		if strings.Contains(out, secret) {
			t.Errorf("%s shows %q:\n%s", what, secret, out)
		}
	}
}

// TestE2EMalformedURLIsMasked: a webhook and a ping URL that do not
// parse, with a password and a token in them, are named by validate, the
// daemon that refuses to start, status and history, each time masked:
// user info and query values as ***.
func TestE2EMalformedURLIsMasked(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: a
    schedule: "@hourly"
    command: "true"
    timeout: 5s
    ping: "http://user:pw@[bad/ping?token=SECRET"
    notify:
      - {on: [failure], url: "http://user:pw@[bad/hook?token=SECRET"}
`)
	const want = `notify.url: "http://***@[bad/hook?token=***" is not an http:// or https:// URL`
	code, stdout, stderr := s.runCV(20*time.Second, "validate")
	if code != 1 || !strings.Contains(stdout+stderr, want) {
		t.Errorf("validate: exit %d, want 1 and %s:\n%s%s", code, want, stdout, stderr)
	}
	checkMasked(t, "validate", stdout+stderr)
	d := s.cv("daemon", "--log-format", "json")
	if code := d.wait(20 * time.Second); code == 0 {
		t.Errorf("the daemon started on a refused file:\n%s", d.stderr())
	}
	if !strings.Contains(d.stderr(), `http://***@[bad/hook?token=***`) {
		t.Errorf("the daemon's log does not name the URL masked:\n%s", d.stderr())
	}
	checkMasked(t, "the daemon's log", d.stdout()+d.stderr())
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"status", "a"}, {"history"}, {"history", "--json"}} {
		_, stdout, stderr := s.runCV(20*time.Second, args...)
		if !strings.Contains(stderr, `http://***@[bad/`) {
			t.Errorf("%s does not name the refused URL masked:\n%s%s", strings.Join(args, " "), stdout, stderr)
		}
		checkMasked(t, strings.Join(args, " "), stdout+stderr)
	}
}

// TestE2EFailedDeliveryIsMasked: a daemon whose webhook and ping, with a
// password and a token, go to a server that answers 500 reports the
// failures in its log and in status, naming the targets masked; a reload
// with a URL that does not parse is refused, masked too; and history
// shows neither secret.
func TestE2EFailedDeliveryIsMasked(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real retries; runs in the full suite")
	}
	t.Parallel()
	codes := make([]int, 64)
	for i := range codes {
		codes[i] = 500
	}
	rcv, base := newReceiver(t, codes...)
	hook := strings.Replace(base, "http://", "http://user:pw@", 1)
	job := `jobs:
  - name: a
    schedule: "@hourly"
    command: echo boom; exit 3
    timeout: 5s
    ping: "%s/ping?token=SECRET"
    notify:
      - {on: [failure], url: "%s/hook?token=SECRET"}
`
	s := newSandbox(t, fmt.Sprintf(job, hook, hook))
	d := s.startDaemon()
	if code, out, errs := s.runCV(20*time.Second, "trigger", "a"); code != 0 {
		t.Fatalf("trigger: exit %d:\n%s%s", code, out, errs)
	}
	// Four tries of each, 1 s doubling between them: 7 s.
	waitFor(t, 30*time.Second, "the failed deliveries in status", func() bool {
		_, out, _ := s.runCV(10*time.Second, "status", "--json")
		return strings.Contains(out, `"last_notification":"failure: failed at `) && strings.Contains(out, `"failed_ping":`)
	})
	if n := len(rcv.under("/hook")); n != 4 {
		t.Errorf("the webhook got %d requests, want 4 tries", n)
	}
	masked := strings.TrimPrefix(base, "http://")
	_, status, _ := s.runCV(10*time.Second, "status", "--json")
	if want := "http://***@" + masked + "/hook?token=***: 500 Internal Server Error"; !strings.Contains(status, want) {
		t.Errorf("status --json does not name the target masked (%s):\n%s", want, status)
	}
	s.reloadMalformed(d, fmt.Sprintf(job, "http://user:pw@[bad", "http://user:pw@[bad"))
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"status", "a"}, {"history"}, {"history", "--json"}} {
		code, stdout, stderr := s.runCV(20*time.Second, args...)
		if code != 0 || !strings.Contains(stdout, "a") {
			t.Errorf("%s: exit %d:\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		checkMasked(t, strings.Join(args, " "), stdout+stderr)
	}
	stopDaemons(t, d)
	log := d.stderr()
	for _, want := range []string{`"target":"http://***@` + masked + `/hook?token=***"`, `"target":"http://***@` + masked + `/ping?token=***"`,
		`http://***@[bad/hook?token=***`} {
		if !strings.Contains(log, want) {
			t.Errorf("the daemon's log lacks %s:\n%s", want, log)
		}
	}
	checkMasked(t, "the daemon's log", d.stdout()+log)
}

// reloadMalformed rewrites jobs.yaml as body and reloads the daemon d,
// which refuses it.
func (s *sandbox) reloadMalformed(d *proc, body string) {
	s.t.Helper()
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+body), 0o644); err != nil {
		s.t.Fatal(err)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	waitFor(s.t, 10*time.Second, "the refused reload in the log", func() bool {
		return strings.Contains(d.stderr(), "[bad/hook")
	})
}
