package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

// versionsOf reads the shared versions as "HOST JOB CHANGE EXPR +SECONDS".
func versionsOf(t *testing.T, s *Store, base time.Time) string {
	t.Helper()
	vs, err := s.Schedules(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s %s %s %s +%d", v.Host, v.Job, v.Change, v.Schedule, int(v.Since.Sub(base)/time.Second)))
	}
	return strings.Join(out, "\n")
}

// TestShipperShipsSchedules: the versions a daemon records reach the
// shared table once each, by host, with the records' shipping; and its
// prune keeps each version in force at the start of the kept window.
func TestShipperShipsSchedules(t *testing.T) {
	url, _ := newDB(t)
	st := localStore(t)
	base := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	record := func(at int, exprs ...string) {
		var vs []run.ScheduleVersion
		for i, e := range exprs {
			vs = append(vs, run.ScheduleVersion{Job: fmt.Sprint("j", i), Schedule: e, Zone: "UTC", Enabled: true})
		}
		if _, err := st.RecordSchedules(ctxOf(t), base.Add(time.Duration(at)*time.Second), "host-a", vs); err != nil {
			t.Fatal(err)
		}
	}
	record(0, "@daily", "@hourly")
	remote := openStore(t, url, "host-a")
	sh := NewShipper(st, remote)
	defer sh.Close()
	want := "host-a j0 known @daily +0\nhost-a j1 known @hourly +0"
	testlog.Eventually(t, 10*time.Second, "the first versions shipped", func() bool { return versionsOf(t, remote, base) == want })
	record(10, "@weekly", "@hourly")
	record(20, "@monthly", "@hourly")
	sh.Nudge()
	want += "\nhost-a j0 changed @weekly +10\nhost-a j0 changed @monthly +20"
	testlog.Eventually(t, 10*time.Second, "the edits shipped", func() bool { return versionsOf(t, remote, base) == want })
	// Another host's same change is a row of its own; one shipped twice is one.
	other := openStore(t, url, "host-b")
	v := run.ScheduleVersion{Job: "j0", Since: base.Add(21 * time.Second), Change: run.ScheduleChanged, Schedule: "@monthly", Zone: "UTC", Enabled: true}
	for range 2 {
		if err := other.UpsertSchedules(t.Context(), []run.ScheduleVersion{v}); err != nil {
			t.Fatal(err)
		}
	}
	want += "\nhost-b j0 changed @monthly +21"
	if got := versionsOf(t, remote, base); got != want {
		t.Fatalf("after host-b's:\n%s\nwant\n%s", got, want)
	}
	if _, err := remote.Prune(t.Context(), base.Add(15*time.Second)); err != nil {
		t.Fatal(err)
	}
	want = "host-a j1 known @hourly +0\nhost-a j0 changed @weekly +10\nhost-a j0 changed @monthly +20\nhost-b j0 changed @monthly +21"
	if got := versionsOf(t, remote, base); got != want {
		t.Errorf("after the prune at +15:\n%s\nwant\n%s", got, want)
	}
}
