package audit

import (
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// ver is a version of job a's schedule, in UTC, enabled.
func ver(since time.Time, change run.ScheduleChange, expr string) run.ScheduleVersion {
	return run.ScheduleVersion{Job: "a", Since: since, Change: change, Schedule: expr, Zone: "UTC", Enabled: true, Host: "host-a"}
}

// TestAuditVersions: each slot is owed as the version of the schedule in
// force at its instant defines it, so an edit neither invents misses nor
// hides them.
func TestAuditVersions(t *testing.T) {
	every10, at5 := "*/10 * * * *", "5-59/10 * * * *"
	disabled := func(v run.ScheduleVersion) run.ScheduleVersion { v.Enabled = false; return v }
	tests := []struct {
		name     string
		current  string // the jobs.yaml's expression now
		versions []run.ScheduleVersion
		recs     []run.Record
		want     []string
		reasons  map[string]string
	}{
		{name: "an edit mid-window owes the old slots before it and the new after",
			current:  at5,
			versions: []run.ScheduleVersion{ver(at(9, 30), run.ScheduleKnown, every10), ver(at(10, 12), run.ScheduleChanged, at5)},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r2", "host-a", at(10, 10)), ok("r3", "host-a", at(10, 15)), ok("r4", "host-a", at(10, 25))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 ran host-a ok 1", "10:15 ran host-a ok 1", "10:25 ran host-a ok 1"}},
		{name: "an edit hides no miss",
			current:  at5,
			versions: []run.ScheduleVersion{ver(at(9, 30), run.ScheduleKnown, every10), ver(at(10, 12), run.ScheduleChanged, at5)},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r4", "host-a", at(10, 25))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:15 missed - - 0", "10:25 ran host-a ok 1"},
			reasons:  map[string]string{"10:10": ReasonNoRecord}},
		{name: "slots before the first known version are judged by it",
			current:  every10,
			versions: []run.ScheduleVersion{ver(at(10, 12), run.ScheduleKnown, every10)},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r3", "host-a", at(10, 20)), ok("r4", "host-a", at(10, 30))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "nothing was owed before a job was added",
			current:  every10,
			versions: []run.ScheduleVersion{ver(at(10, 12), run.ScheduleAdded, every10)},
			recs:     []run.Record{ok("r3", "host-a", at(10, 20)), ok("r4", "host-a", at(10, 30))},
			want:     []string{"10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "nothing is owed while a job was removed; a run then is extra",
			current: every10,
			versions: []run.ScheduleVersion{ver(at(9, 0), run.ScheduleKnown, every10), {Job: "a", Since: at(10, 5), Change: run.ScheduleRemoved},
				ver(at(10, 25), run.ScheduleAdded, every10)},
			recs: []run.Record{ok("r1", "host-a", at(10, 0)), ok("x", "host-a", at(10, 20)), ok("r4", "host-a", at(10, 30))},
			want: []string{"10:00 ran host-a ok 1", "10:20 extra host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "a slot of a disabled version owes no run",
			current:  every10,
			versions: []run.ScheduleVersion{ver(at(9, 0), run.ScheduleKnown, every10), disabled(ver(at(10, 5), run.ScheduleChanged, every10)), ver(at(10, 25), run.ScheduleChanged, every10)},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r4", "host-a", at(10, 30))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 skipped - - 0", "10:20 skipped - - 0", "10:30 ran host-a ok 1"},
			reasons:  map[string]string{"10:10": ReasonDisabled}},
		{name: "the same change from every host is one",
			current: at5,
			versions: []run.ScheduleVersion{ver(at(9, 0), run.ScheduleKnown, every10), ver(at(10, 12), run.ScheduleChanged, at5),
				with1(ver(at(10, 13), run.ScheduleChanged, at5), func(v *run.ScheduleVersion) { v.Host = "host-b" })},
			recs: []run.Record{ok("r1", "host-a", at(10, 0)), ok("r2", "host-b", at(10, 10)), ok("r3", "host-b", at(10, 15)), ok("r4", "host-a", at(10, 25))},
			want: []string{"10:00 ran host-a ok 1", "10:10 ran host-b ok 1", "10:15 ran host-b ok 1", "10:25 ran host-a ok 1"}},
		{name: "a version that does not parse leaves the current schedule",
			current:  every10,
			versions: []run.ScheduleVersion{ver(at(9, 0), run.ScheduleKnown, "not a schedule")},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r2", "host-a", at(10, 10)), ok("r3", "host-a", at(10, 20)), ok("r4", "host-a", at(10, 30))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 ran host-a ok 1", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "versions in any order",
			current:  at5,
			versions: []run.ScheduleVersion{ver(at(10, 12), run.ScheduleChanged, at5), ver(at(9, 30), run.ScheduleKnown, every10)},
			recs:     []run.Record{ok("r1", "host-a", at(10, 0)), ok("r2", "host-a", at(10, 10)), ok("r3", "host-a", at(10, 15)), ok("r4", "host-a", at(10, 25))},
			want:     []string{"10:00 ran host-a ok 1", "10:10 ran host-a ok 1", "10:15 ran host-a ok 1", "10:25 ran host-a ok 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := job(t, "a", tc.current, nil)
			in := Input{Jobs: []config.Job{j}, Records: tc.recs, Versions: tc.versions, Since: at(10, 0), Began: at(9, 0), Now: at(10, 30)}
			checkReport(t, Audit(in), tc.want, tc.reasons)
		})
	}
}

func with1(v run.ScheduleVersion, f func(*run.ScheduleVersion)) run.ScheduleVersion { f(&v); return v }

// TestAuditLeavesOperatorRunsOut: manual runs (`run`, `trigger`, the
// console's run key) are in no count and no extra line, whether at an
// owed slot's instant or not.
func TestAuditLeavesOperatorRunsOut(t *testing.T) {
	manual := func(r run.Record) run.Record { r.Manual = true; return r }
	recs := []run.Record{
		ok("r1", "host-a", at(10, 0)), manual(ok("m1", "host-a", at(10, 0))),
		manual(ok("m2", "host-b", at(10, 7))),
		ok("r2", "host-a", at(10, 10)), manual(with(ok("m3", "host-a", at(10, 10)), func(r *run.Record) { r.Outcome = run.Failed })),
		manual(skip("m4", "host-a", at(10, 20), "lock held by pid 7@host-a")), ok("r3", "host-a", at(10, 20)),
		ok("r4", "host-a", at(10, 30)),
	}
	in := Input{Jobs: []config.Job{job(t, "a", "*/10 * * * *", nil)}, Records: recs, Since: at(10, 0), Began: at(9, 0), Now: at(10, 30)}
	rep := Audit(in)
	checkReport(t, rep, []string{"10:00 ran host-a ok 1", "10:10 ran host-a ok 1", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}, nil)
	if got := rep.Total.String(); got != "ran 4, skipped 0, missed 0, duplicated 0, open 0" {
		t.Errorf("total %q", got)
	}
}
