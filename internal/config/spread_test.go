package config

import (
	"testing"
	"time"
)

// TestDrawnSchedulesFollowTheJobName checks that H and ~ are drawn for each
// job's own name: two jobs writing one expression get their own times, and
// a job gets the same times whichever file, position or neighbours it has.
func TestDrawnSchedulesFollowTheJobName(t *testing.T) {
	const file = `jobs:
  - {name: invoice, schedule: "H H * * *", command: [/bin/true], timeout: 1m}
  - {name: payroll, schedule: "H H * * *", command: [/bin/true], timeout: 1m}
  - {name: cronie, schedule: "0~30 2 * * *", command: [/bin/true], timeout: 1m}
  - {name: plain, schedule: "0 2 * * *", command: [/bin/true], timeout: 1m}
`
	cfg, problems := Parse("/srv/jobs.yaml", []byte(file))
	if cfg == nil || len(problems) != 0 {
		t.Fatalf("Parse: %v", problems)
	}
	alone, problems := Parse("/etc/other.yaml", []byte("jobs:\n  - {name: payroll, schedule: \"H H * * *\", command: [/bin/true], timeout: 1m}\n"))
	if alone == nil || len(problems) != 0 {
		t.Fatalf("Parse: %v", problems)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := func(j Job) time.Time { return j.Sched.Next(from) }
	if a, b := next(cfg.Jobs[0]), next(cfg.Jobs[1]); a.Equal(b) {
		t.Errorf("invoice and payroll both first fire at %s", a)
	}
	if a, b := next(cfg.Jobs[1]), next(alone.Jobs[0]); !a.Equal(b) {
		t.Errorf("payroll fires at %s in one file, %s in another", a, b)
	}
	if c := next(cfg.Jobs[2]); c.Hour() != 2 || c.Minute() > 30 {
		t.Errorf("0~30 2 * * * fires at %s", c)
	}
}

// TestJobDelay checks the jitter of a job: under its jitter, a function of
// the name and the slot only.
func TestJobDelay(t *testing.T) {
	slot := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	j := Job{Name: "invoice", Jitter: 5 * time.Minute}
	if d := j.Delay(slot); d < 0 || d >= j.Jitter || d != (&Job{Name: "invoice", Jitter: 5 * time.Minute}).Delay(slot) {
		t.Errorf("Delay = %v, want the same each time and under %v", d, j.Jitter)
	}
	if d := (&Job{Name: "invoice"}).Delay(slot); d != 0 {
		t.Errorf("no jitter: Delay = %v", d)
	}
}
