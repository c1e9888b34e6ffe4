package metrics

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"cronvisor/internal/base/run"
)

// TestResourceMetrics: slots held while a run holds them, a waiter until
// its wait ends (took, gave_up or killed), the skips of a full resource, and the
// sizes read at scrape time.
func TestResourceMetrics(t *testing.T) {
	m := New(Sources{Resources: func() map[string]int { return map[string]int{"db": 2} }})
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	m.Handle(run.Start{Job: "a", RunID: "ra", Started: t0, Resources: []string{"db/0"}, Attempt: 1})
	m.Handle(run.Start{Job: "b", RunID: "rb", Started: t0, Resources: []string{"db/1"}, Attempt: 1})
	m.Handle(run.Waiting{Job: "c", RunID: "rc", Resource: "db", Time: t0, Held: 2, Size: 2})
	m.Handle(run.Waiting{Job: "d", RunID: "rd", Resource: "db", Time: t0, Held: 2, Size: 2})
	m.Handle(run.Waiting{Job: "k", RunID: "rk", Resource: "db", Time: t0, Held: 2, Size: 2})
	m.Handle(run.Skip{Job: "k", RunID: "rk", Time: t0, Class: run.ClassKilled, Reason: "killed by operator while waiting for db"})
	m.Handle(run.Skip{Job: "e", RunID: "re", Time: t0, Class: run.ClassResourceFull, Reason: "resource db full: held by a on h since 10:00:00"})
	want := `
# HELP cronvisor_resource_slots Slots of the resource (jobs.yaml resources:).
# TYPE cronvisor_resource_slots gauge
cronvisor_resource_slots{resource="db"} 2
# HELP cronvisor_resource_slots_held Slots of the resource this daemon's runs hold (its adopted runs' too).
# TYPE cronvisor_resource_slots_held gauge
cronvisor_resource_slots_held{resource="db"} 2
# HELP cronvisor_resource_waiters Fires of this daemon waiting for a slot of the resource (on_full: wait).
# TYPE cronvisor_resource_waiters gauge
cronvisor_resource_waiters{resource="db"} 2
`
	names := []string{"cronvisor_resource_slots", "cronvisor_resource_slots_held", "cronvisor_resource_waiters"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	m.Handle(run.End{Job: "a", RunID: "ra", Started: t0, Ended: t0.Add(time.Second), Outcome: run.OK})
	m.Handle(run.Start{Job: "c", RunID: "rc", Started: t0.Add(time.Second), Resources: []string{"db/0"}, Attempt: 1})
	m.Handle(run.Skip{Job: "d", RunID: "rd", Time: t0.Add(time.Minute), Class: run.ClassResourceFull, Reason: "resource db full after waiting 1m0s: held by ..."})
	m.Handle(run.Skip{Job: "f", RunID: "rf", Time: t0.Add(time.Minute), Class: run.ClassResourceFull, Resource: "backup_disk",
		Reason: "resource backup_disk full: held by ..."})
	m.Handle(run.Skip{Job: "g", RunID: "rg", Time: t0.Add(time.Minute), Class: run.ClassLockHeld, Reason: "lock held by ..."})
	checks := map[string]float64{
		"held":    float64(m.res.heldNow()["db"]),
		"waiters": testutil.ToFloat64(m.res.waiters.WithLabelValues("db")),
		"took":    testutil.ToFloat64(m.res.waits.WithLabelValues("db", "took")),
		"gave_up": testutil.ToFloat64(m.res.waits.WithLabelValues("db", "gave_up")),
		"killed":  testutil.ToFloat64(m.res.waits.WithLabelValues("db", "killed")),
		"full":    testutil.ToFloat64(m.res.fullSkips.WithLabelValues("db")),
		"disk":    testutil.ToFloat64(m.res.fullSkips.WithLabelValues("backup_disk")),
	}
	wantAfter := map[string]float64{"held": 2, "waiters": 0, "took": 1, "gave_up": 1, "killed": 1, "full": 2, "disk": 1}
	for k, v := range wantAfter {
		if checks[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, checks[k], v, checks)
		}
	}
}

// TestResourceSlotsHeldCountsAdopted: the slots of the runs a daemon
// adopted (read at scrape time) add to those of the runs it started.
func TestResourceSlotsHeldCountsAdopted(t *testing.T) {
	adopted := map[string]int{"db": 1, "disk": 1}
	m := New(Sources{AdoptedSlots: func() map[string]int { return maps.Clone(adopted) }})
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	m.Handle(run.Start{Job: "a", RunID: "ra", Started: t0, Resources: []string{"db/0"}, Attempt: 1})
	want := `
# HELP cronvisor_resource_slots_held Slots of the resource this daemon's runs hold (its adopted runs' too).
# TYPE cronvisor_resource_slots_held gauge
cronvisor_resource_slots_held{resource="db"} 2
cronvisor_resource_slots_held{resource="disk"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "cronvisor_resource_slots_held"); err != nil {
		t.Fatal(err)
	}
	m.Handle(run.End{Job: "a", RunID: "ra", Started: t0, Ended: t0.Add(time.Second), Outcome: run.OK})
	delete(adopted, "disk") // its adopted run was recorded
	want = `
# HELP cronvisor_resource_slots_held Slots of the resource this daemon's runs hold (its adopted runs' too).
# TYPE cronvisor_resource_slots_held gauge
cronvisor_resource_slots_held{resource="db"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "cronvisor_resource_slots_held"); err != nil {
		t.Fatal(err)
	}
}
