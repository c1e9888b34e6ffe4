package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCalendarSkipsItsDaysAndAuditAgrees: a job every second with
// skip_on a calendar listing today (and tomorrow, should the test cross
// midnight) records each slot skipped, `calendar holidays (DATE)`; audit
// counts them skipped, none missed; a manual run still runs.
func TestCalendarSkipsItsDaysAndAuditAgrees(t *testing.T) {
	today := time.Now()
	s := newSandbox(t, `calendars:
  holidays: [`+today.Format(time.DateOnly)+`, `+today.AddDate(0, 0, 1).Format(time.DateOnly)+`]
jobs:
  - name: payroll
    schedule: "@every 1s"
    timeout: 5s
    skip_on: [holidays]
    command: "true"
`)
	d := s.startDaemon()
	t.Cleanup(func() { stopDaemons(t, d) })
	var recs []map[string]any
	waitFor(t, 15*time.Second, "three calendar skips", func() bool {
		recs = s.historyRaw("--job", "payroll")
		return len(recs) >= 3
	})
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		if r["outcome"] != "skipped" || !strings.HasPrefix(reason, "calendar holidays (") || !strings.HasSuffix(reason, ")") {
			t.Fatalf("a record of payroll: %v, want skipped, calendar holidays (DATE)", r)
		}
	}
	code, out, errOut := s.runCV(20*time.Second, "audit", "--since", "1m", "--json")
	if code != 0 {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	skipped := 0
	for _, l := range lines(out) {
		var slot struct{ Class, Reason string }
		if err := json.Unmarshal([]byte(l), &slot); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if slot.Class != "skipped" || !strings.HasPrefix(slot.Reason, "calendar holidays (") {
			t.Fatalf("audit judged a slot %s (%s), want skipped by the calendar", slot.Class, slot.Reason)
		}
		skipped++
	}
	if skipped < 3 {
		t.Fatalf("audit listed %d slots, want the 3 or more skipped:\n%s", skipped, out)
	}
	if code, _, errOut := s.runCV(20*time.Second, "run", "payroll"); code != 0 {
		t.Fatalf("a manual run on a holiday: exit %d: %s", code, errOut)
	}
}
