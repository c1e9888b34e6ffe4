package e2e

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EDeliveryErrorsKeepSecrets: a daemon whose notifications go to a
// refusing target, a hanging one and a Slack webhook behind a refusing
// proxy, and whose pings go to a healthchecks-style UUID URL that
// refuses, logs every failure naming the target without any of its
// secrets, and each target's repeated failures once, then with a count.
func TestE2EDeliveryErrorsKeepSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	const uuid = "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	secrets := []string{"SECRETrefused", "SECREThang", "SECRETslack", uuid}
	refused := closedPort(t)
	hang := silent(t)
	s := newSandbox(t, fmt.Sprintf(`jobs:
  - name: failing
    schedule: "* * * * * *"
    command: "exit 1"
    timeout: 5s
    ping: http://%[1]s/%[4]s
    notify:
      - {on: [failure], url: "http://%[1]s/hook?token=%[5]s"}
      - {on: [failure], url: "%[2]s/hang?token=%[6]s"}
      - {on: [failure], url: "http://hooks.slack.com/services/T0000/B0000/%[7]s"}
`, refused, hang, "", uuid, secrets[0], secrets[1], secrets[2]))
	// No network here: the Slack URL goes to a proxy that refuses, which
	// is as failed a delivery as any (loopback targets are not proxied).
	d := s.startEnv([]string{"HTTP_PROXY=http://" + closedPort(t), "NO_PROXY="}, cvBin, "--config", s.config, "daemon", "--log-format", "json")
	waitFor(t, 30*time.Second, "failed deliveries to every target", func() bool {
		log := d.stderr()
		return strings.Contains(log, `"target":"http://`+refused+`/hook?token=***"`) &&
			strings.Contains(log, `"target":"http://hooks.slack.com/services/***/***/***"`) &&
			strings.Contains(log, `"target":"http://`+refused+`/***`)
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM) // the hanging target's delivery is cut: dropped
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
	perTarget := map[string]int{}
	for i, l := range lines(d.stderr()) {
		for _, secret := range secrets {
			if strings.Contains(l, secret) {
				t.Errorf("log line %d holds the secret %q: %s", i+1, secret, l)
			}
		}
	}
	said := false // what failed, with the target rebuilt
	pings := 0
	for _, r := range daemonLog(t, d) {
		if r["msg"] != "notification not delivered" {
			continue
		}
		if r["kind"] == "ping" {
			pings++
			continue
		}
		perTarget[fmt.Sprint(r["target"])]++
		err, _ := r["err"].(string)
		said = said || strings.Contains(err, `Post http://`+refused+`/hook?token=***: dial tcp `+refused+`: connect: connection refused`)
	}
	t.Logf("records per webhook: %v; ping records %d", perTarget, pings)
	if !said {
		t.Error("no delivery error says what failed (Post URL: dial tcp …: connection refused)")
	}
	for _, target := range []string{"http://" + refused + "/hook?token=***", hang + "/hang?token=***", "http://hooks.slack.com/services/***/***/***"} {
		if n := perTarget[target]; n < 1 || n > 2 {
			t.Errorf("%d records for %s in one minute, want the first and at most one with the count", n, target)
		}
	}
	if pings < 1 || pings > 2 {
		t.Errorf("%d records of the job's failed pings in one minute, want the first and at most one with the count", pings)
	}
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestE2EValidateWarnsOfMetricsOnEveryInterface: metrics.listen without a
// host serves /metrics to every interface; validate says so, at the
// value, and how to write either choice; with a host, nothing.
func TestE2EValidateWarnsOfMetricsOnEveryInterface(t *testing.T) {
	t.Parallel()
	jobs := "jobs:\n  - {name: a, schedule: \"@hourly\", command: \"true\", timeout: 5s}\n"
	for _, tc := range []struct{ listen, want string }{
		{":19751", `:4:19: warning: metrics.listen: ":19751" has no host, so it listens on every interface, unauthenticated; ` +
			`write 127.0.0.1:19751 to serve this host only, or 0.0.0.0:19751 to serve every interface deliberately`},
		{"127.0.0.1:19751", ""},
		{"0.0.0.0:19751", ""},
	} {
		s := newSandbox(t, jobs+"metrics: {listen: \""+tc.listen+"\"}\n")
		code, stdout, stderr := s.runCV(20*time.Second, "validate")
		out := stdout + stderr
		switch {
		case code != 0:
			t.Errorf("listen %q: validate exit %d, want 0 (a warning); output %q", tc.listen, code, out)
		case tc.want == "" && strings.Contains(out, "warning"):
			t.Errorf("listen %q: validate warned: %q", tc.listen, out)
		case tc.want != "" && !strings.Contains(out, s.config+tc.want):
			t.Errorf("listen %q: validate printed %q, want %q", tc.listen, out, s.config+tc.want)
		}
	}
}
