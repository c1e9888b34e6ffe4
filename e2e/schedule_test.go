package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ENextFollowsCron runs `cronvisor next` on the cases of the schedule
// report: the day rule and the end of a leap year, with Go's embedded zone
// database as well as the host's.
func TestE2ENextFollowsCron(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "jobs: []\n")
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"day rule", nil, []string{"next", "0 0 */2 * MON", "--from", "2026-01-01T00:00:00Z", "--tz", "UTC", "-n", "5"},
			"2026-01-05T00:00:00Z\n2026-01-19T00:00:00Z\n2026-02-09T00:00:00Z\n2026-02-23T00:00:00Z\n2026-03-09T00:00:00Z\n"},
		{"leap year end, host zones", nil, []string{"next", "*/5 * * * *", "--from", "2028-12-30T23:58:00Z", "--tz", "Europe/Berlin"},
			"2028-12-31T01:00:00+01:00\n2028-12-31T01:05:00+01:00\n2028-12-31T01:10:00+01:00\n2028-12-31T01:15:00+01:00\n2028-12-31T01:20:00+01:00\n"},
		{"leap year end, Go's zones", []string{"ZONEINFO=" + goZoneinfo(t)}, []string{"next", "*/5 * * * *", "--from", "2028-12-30T23:58:00Z", "--tz", "Europe/Berlin"},
			"2028-12-31T01:00:00+01:00\n2028-12-31T01:05:00+01:00\n2028-12-31T01:10:00+01:00\n2028-12-31T01:15:00+01:00\n2028-12-31T01:20:00+01:00\n"},
		{"two fixed times in a spring gap", nil, []string{"next", "0,30 2 * * *", "--from", "2026-03-08T00:00:00Z", "--tz", "America/New_York", "-n", "3"},
			"2026-03-08T03:00:00-04:00\n2026-03-08T03:00:00-04:00\n2026-03-09T02:00:00-04:00\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := s.startEnv(tc.env, cvBin, append([]string{"--config", s.config}, tc.args...)...)
			if code := p.wait(10 * time.Second); code != 0 {
				t.Fatalf("exit %d: %s", code, p.stderr())
			}
			if got := p.stdout(); got != tc.want {
				t.Errorf("stdout\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	code, _, stderr := s.runCV(10*time.Second, "next", "@reboot")
	if code == 0 || !strings.Contains(stderr, "@reboot is not supported: cronvisor fires on schedules (run it from your service manager)") {
		t.Errorf("next @reboot: exit %d, stderr %q", code, stderr)
	}
}

func goZoneinfo(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)) + "/lib/time/zoneinfo.zip"
}

// TestE2EUnschedulableJobIsShown: a job whose schedule never fires is
// logged, listed as unschedulable by status, and the others run.
func TestE2EUnschedulableJobIsShown(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: never
    schedule: "0 0 31 2 *"
    command: "true"
    timeout: 5s
  - name: both_days
    schedule: "0 0 1,15 * MON"
    command: "true"
    timeout: 5s
`)
	code, out, stderr := s.runCV(10*time.Second, "validate")
	if code != 0 || !strings.Contains(out+stderr, `runs when EITHER the day of month OR the day of week matches`) {
		t.Errorf("validate: exit %d, output %q %q, want the day-rule warning", code, out, stderr)
	}
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "the stall logged", func() bool {
		return strings.Contains(d.stderr(), `"msg":"no next fire: the job is not scheduled until one is found"`) &&
			strings.Contains(d.stderr(), `"job":"never"`)
	})
	code, out, stderr = s.runCV(10*time.Second, "status", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	states := map[string]string{}
	for _, line := range lines(out) {
		var js struct{ Name, State, Problem string }
		if err := json.Unmarshal([]byte(line), &js); err != nil {
			t.Fatalf("status line %q: %v", line, err)
		}
		states[js.Name] = js.State
		if js.Name == "never" && !strings.Contains(js.Problem, "no next fire after") {
			t.Errorf("never: problem %q", js.Problem)
		}
	}
	if states["never"] != "unschedulable" || states["both_days"] != "idle" {
		t.Errorf("states %v, want never unschedulable and both_days idle", states)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(10 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
}

// TestE2EPlannedFeaturesSaySo: the contract's keys are all built (a file
// using retries validates), as are its commands (verbs_test.go).
func TestE2EPlannedFeaturesSaySo(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: a
    schedule: "@hourly"
    command: "true"
    timeout: 5s
    retries: 2
`)
	if code, out, stderr := s.runCV(10*time.Second, "validate"); code != 0 {
		t.Errorf("validate: exit %d, output %q %q", code, out, stderr)
	}
}
