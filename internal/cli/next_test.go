package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

// nextFile is a jobs.yaml with a drawn schedule, a jitter, both and neither.
const nextFile = `jobs:
  - {name: drawn, schedule: "H H * * *", timezone: UTC, command: [/bin/true], timeout: 1m}
  - {name: jittered, schedule: "0 * * * *", timezone: UTC, command: [/bin/true], timeout: 1m, jitter: 10m}
  - {name: both, schedule: "H(0-29) * * * *", timezone: UTC, command: [/bin/true], timeout: 1m, jitter: 90s}
  - {name: plain, schedule: "0 3 * * *", timezone: UTC, command: [/bin/true], timeout: 1m}
`

func runNext(t *testing.T, path string, args ...string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--config", path, "next"}, append(args, "--from", "2026-01-01T00:00:00Z", "--tz", "UTC", "-n", "3")...)
	if code := Execute(args, &out, &errb); code != 0 {
		t.Fatalf("next %v: exit %d: %s", args, code, errb.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestNextShowsDrawnTimes checks that next JOB prints what the daemon would
// fire: H drawn for the job's name, the jitter's delay drawn for each slot,
// and, with -v, the slot beside the fire; a job without jitter prints as
// before.
func TestNextShowsDrawnTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte(nextFile), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, problems := config.Parse(path, []byte(nextFile))
	if cfg == nil || len(config.Errors(problems)) != 0 {
		t.Fatal(problems)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, j := range cfg.Jobs {
		t.Run(j.Name, func(t *testing.T) {
			var want, wantV []string
			for _, slot := range []time.Time{j.Sched.Next(from)} {
				for range 3 {
					fire := slot.Add(j.Delay(slot))
					want = append(want, fire.Format(time.RFC3339))
					v := fire.Format(time.RFC3339) + "  " + fire.Format("Mon")
					if j.Jitter > 0 {
						v += "  slot " + slot.Format(time.RFC3339) + " +" + j.Delay(slot).String()
					}
					wantV = append(wantV, v)
					slot = j.Sched.Next(slot)
				}
			}
			if got := runNext(t, path, j.Name); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("next %s:\n%s\nwant\n%s", j.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := runNext(t, path, j.Name, "-v"); strings.Join(got, "\n") != strings.Join(wantV, "\n") {
				t.Errorf("next %s -v:\n%s\nwant\n%s", j.Name, strings.Join(got, "\n"), strings.Join(wantV, "\n"))
			}
		})
	}
	if got := runNext(t, path, "plain"); strings.Join(got, " ") != "2026-01-01T03:00:00Z 2026-01-02T03:00:00Z 2026-01-03T03:00:00Z" {
		t.Errorf("next plain: %v", got)
	}
	if got := runNext(t, path, "plain", "-v"); got[0] != "2026-01-01T03:00:00Z  Thu" {
		t.Errorf("next plain -v: %v", got)
	}
	jittered := runNext(t, path, "jittered", "-v")
	for i, line := range jittered {
		if !strings.Contains(line, "  slot 2026-01-01T0"+string(rune('1'+i))+":00:00Z +") {
			t.Errorf("next jittered -v line %d: %q, want its slot", i, line)
		}
	}
}

// TestNextDrawsAnExpressionForTheEmptyName checks the documented seed of
// an expression given alone.
func TestNextDrawsAnExpressionForTheEmptyName(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"next", "H H * * *", "--from", "2026-01-01T00:00:00Z", "--tz", "UTC", "-n", "1"}
	if code := Execute(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s, err := schedule.ParseFor("H H * * *", time.UTC, "")
	if err != nil {
		t.Fatal(err)
	}
	want := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Format(time.RFC3339)
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("next 'H H * * *' = %q, want %q", got, want)
	}
}

// TestNextPrintsCalendarRules: next prints the fires of L, LW, 15W, 5L
// and 5#3 (dates checked by hand; the schedule's tests hold 1970-2100).
func TestNextPrintsCalendarRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte(nextFile), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"0 0 L * *":   "2026-01-31T00:00:00Z 2026-02-28T00:00:00Z 2026-03-31T00:00:00Z",
		"0 0 LW * *":  "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z 2026-03-31T00:00:00Z",
		"0 0 15W * *": "2026-01-15T00:00:00Z 2026-02-16T00:00:00Z 2026-03-16T00:00:00Z",
		"0 0 * * 5L":  "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z 2026-03-27T00:00:00Z",
		"0 0 * * 5#3": "2026-01-16T00:00:00Z 2026-02-20T00:00:00Z 2026-03-20T00:00:00Z",
	}
	for expr, want := range cases {
		if got := strings.Join(runNext(t, path, expr), " "); got != want {
			t.Errorf("next %q = %s, want %s", expr, got, want)
		}
	}
}
