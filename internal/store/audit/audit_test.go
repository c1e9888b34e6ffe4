package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

// at is 2026-06-01 at h:m UTC.
func at(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }

func job(t *testing.T, name, expr string, loc *time.Location) config.Job {
	t.Helper()
	if loc == nil {
		loc = time.UTC
	}
	s, err := schedule.ParseFor(expr, loc, name)
	if err != nil {
		t.Fatal(err)
	}
	return config.Job{Name: name, Schedule: expr, Sched: s, Location: loc, Enabled: true}
}

// ok is a finished first attempt of slot on host, started a second after it.
func ok(id, host string, slot time.Time) run.Record {
	return run.Record{Job: "a", RunID: id, Outcome: run.OK, ScheduledAt: slot, StartedAt: slot.Add(time.Second),
		EndedAt: slot.Add(2 * time.Second), Host: host, Attempt: 1}
}

func with(r run.Record, f func(*run.Record)) run.Record { f(&r); return r }

func attempt(r run.Record, n int, o run.Outcome) run.Record {
	return with(r, func(r *run.Record) {
		r.Attempt, r.Outcome = n, o
		r.StartedAt = r.StartedAt.Add(time.Duration(n) * time.Minute)
		r.RunID += fmt.Sprint("-", n)
	})
}

func skip(id, host string, slot time.Time, reason string) run.Record {
	return run.Record{Job: "a", RunID: id, Outcome: run.Skipped, ScheduledAt: slot, EndedAt: slot, Host: host, Reason: reason}
}

// line is how a test reads a slot: "HH:MM class host outcome attempts".
func line(s Slot) string {
	return fmt.Sprintf("%s %s %s %s %d", s.At.UTC().Format("15:04"), s.Class, dashIf(s.Host), dashIf(string(s.Outcome)), s.Attempts)
}

func dashIf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func TestAuditClasses(t *testing.T) {
	every10 := job(t, "a", "*/10 * * * *", nil)
	disabled := with0(every10, func(j *config.Job) { j.Enabled = false })
	jittered := with0(every10, func(j *config.Job) { j.Jitter = 5 * time.Minute })
	missed3 := "missed while down (beyond catch_up 0s) (3 fires from 2026-06-01T10:00:00Z)"
	tests := []struct {
		name      string
		job       config.Job
		recs      []run.Record
		began     time.Time // default 09:00
		noHistory bool
		now       time.Time // default 10:30
		keep      int
		want      []string
		reasons   map[string]string // slot HH:MM -> a part of its reason
	}{
		{name: "every class", now: at(10, 40), recs: []run.Record{
			ok("r1", "host-a", at(10, 0)),
			skip("r2", "host-a", at(10, 10), "lock held by pid 7@host-a (job a, run r0) since 2026-06-01T10:09:00Z"),
			ok("r3", "host-a", at(10, 30)), ok("r4", "host-b", at(10, 30)),
			with(ok("r5", "host-b", at(10, 40)), func(r *run.Record) { r.Outcome, r.EndedAt = run.Running, time.Time{} }),
		}, want: []string{"10:00 ran host-a ok 1", "10:10 skipped host-a - 0", "10:20 missed - - 0",
			"10:30 duplicated host-a,host-b - 1", "10:40 open host-b running 1"},
			reasons: map[string]string{"10:10": "lock held", "10:20": ReasonNoRecord, "10:30": "2 runs of one slot: r3 on host-a (ok), r4 on host-b (ok)", "10:40": "running"}},
		{name: "retries are one chain", now: at(10, 20), recs: []run.Record{
			attempt(ok("r1", "host-a", at(10, 0)), 1, run.Failed), attempt(ok("r1", "host-a", at(10, 0)), 2, run.Timeout), attempt(ok("r1", "host-a", at(10, 0)), 3, run.OK),
			attempt(ok("r2", "host-a", at(10, 10)), 1, run.Failed), with(attempt(ok("r2", "host-a", at(10, 10)), 2, run.Running), func(r *run.Record) { r.EndedAt = time.Time{} }),
			attempt(ok("r3", "host-a", at(10, 20)), 1, run.Failed), attempt(ok("r3", "host-a", at(10, 20)), 2, run.OK), ok("r4", "host-b", at(10, 20)),
		}, want: []string{"10:00 ran host-a ok 3", "10:10 open host-a running 2", "10:20 duplicated host-a,host-b - 2"}},
		{name: "a chain whose first attempt is lost is one run", now: at(10, 0), recs: []run.Record{
			attempt(ok("r1", "host-a", at(10, 0)), 2, run.Failed), attempt(ok("r1", "host-a", at(10, 0)), 3, run.OK),
		}, want: []string{"10:00 ran host-a ok 3"}},
		{name: "an error that never started is no run", now: at(10, 10), recs: []run.Record{
			{Job: "a", RunID: "r1", Outcome: run.Error, ScheduledAt: at(10, 0), EndedAt: at(10, 0), Host: "host-a", Reason: "cannot take lock: connection refused"},
			with(ok("r2", "host-a", at(10, 10)), func(r *run.Record) { r.Outcome, r.Reason = run.Error, "not started: no such file" }),
		}, want: []string{"10:00 skipped host-a - 0", "10:10 ran host-a error 1"},
			reasons: map[string]string{"10:00": "cannot take lock"}},
		{name: "one missed record stands for n fires", now: at(10, 50), recs: []run.Record{
			skip("m1", "host-a", at(10, 0), missed3),
			ok("r1", "host-a", at(10, 30)),
			skip("m2", "host-a", at(10, 40), "missed: supervisor woke 2m0s late (suspend or clock step)"),
		}, want: []string{"10:00 missed - - 0", "10:10 missed - - 0", "10:20 missed - - 0", "10:30 ran host-a ok 1", "10:40 missed - - 0", "10:50 open - - 0"},
			reasons: map[string]string{"10:00": "missed while down", "10:20": "(3 fires from", "10:40": "woke 2m0s late", "10:50": ReasonPending}},
		{name: "a skip beside a missed record is a skip", recs: []run.Record{
			skip("m1", "host-a", at(10, 0), missed3),
			skip("s1", "host-b", at(10, 10), "slot already run"),
			ok("r1", "host-a", at(10, 20)), skip("s2", "host-b", at(10, 20), "slot already run"),
			ok("r2", "host-a", at(10, 30)),
		}, want: []string{"10:00 missed - - 0", "10:10 skipped host-b - 0", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"},
			reasons: map[string]string{"10:10": "slot already run"}},
		{name: "paused and dropped skips", recs: []run.Record{
			skip("s1", "host-a", at(10, 0), "paused"), skip("s2", "host-a", at(10, 10), "supervisor stopping"),
			skip("s3", "host-a", at(10, 20), "paused"), skip("s4", "host-b", at(10, 20), "slot already run"),
			ok("r1", "host-a", at(10, 30)),
		}, want: []string{"10:00 skipped host-a - 0", "10:10 skipped host-a - 0", "10:20 skipped host-a - 0", "10:30 ran host-a ok 1"},
			reasons: map[string]string{"10:00": "paused", "10:10": "supervisor stopping", "10:20": "paused; slot already run"}},
		{name: "manual runs are not slots", recs: []run.Record{
			with(ok("m1", "host-a", at(10, 10)), func(r *run.Record) { r.Manual = true }),
			with(ok("m2", "host-a", at(10, 5)), func(r *run.Record) { r.Manual = true }),
			ok("r1", "host-a", at(10, 0)), ok("r2", "host-a", at(10, 20)), ok("r3", "host-a", at(10, 30)),
		}, want: []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "a run off the schedule is extra", recs: []run.Record{
			ok("r1", "host-a", at(10, 0)), ok("x1", "host-a", at(10, 5)), ok("r2", "host-a", at(10, 20)), ok("r3", "host-a", at(10, 30)),
		}, want: []string{"10:00 ran host-a ok 1", "10:05 extra host-a ok 1", "10:10 missed - - 0", "10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "slots before the history began are not judged", began: at(10, 15), recs: []run.Record{ok("r1", "host-a", at(10, 20))},
			want: []string{"10:20 ran host-a ok 1", "10:30 open - - 0"}},
		{name: "no history judges nothing", noHistory: true, recs: []run.Record{ok("r1", "host-a", at(10, 0))}, want: nil},
		{name: "a job at keep_runs is judged from its oldest record", keep: 2,
			recs: []run.Record{ok("r1", "host-a", at(10, 20)), ok("r2", "host-a", at(10, 30))},
			want: []string{"10:20 ran host-a ok 1", "10:30 ran host-a ok 1"}},
		{name: "a disabled job owes no run", job: disabled, recs: []run.Record{skip("s1", "host-a", at(10, 10), "disabled")},
			want:    []string{"10:00 skipped - - 0", "10:10 skipped host-a - 0", "10:20 skipped - - 0", "10:30 skipped - - 0"},
			reasons: map[string]string{"10:00": ReasonDisabled, "10:10": "disabled"}},
		{name: "jitter moves the start, not the slot", job: jittered, now: at(10, 36), recs: []run.Record{
			with(ok("r1", "host-a", at(10, 0)), func(r *run.Record) { r.StartedAt = at(10, 3).Add(17 * time.Second) }),
		}, want: []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:20 missed - - 0", "10:30 open - - 0"}},
		{name: "open ends at the grace", now: at(10, 20).Add(Grace), recs: []run.Record{ok("r1", "host-a", at(10, 0))},
			want: []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:20 open - - 0"}},
		{name: "missed just past the grace", now: at(10, 20).Add(Grace + time.Second), recs: []run.Record{ok("r1", "host-a", at(10, 0))},
			want: []string{"10:00 ran host-a ok 1", "10:10 missed - - 0", "10:20 missed - - 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Jobs: []config.Job{every10}, Records: tc.recs, Since: at(10, 0), Began: at(9, 0), Now: at(10, 30), KeepRuns: tc.keep}
			if tc.job.Sched != nil {
				in.Jobs[0] = tc.job
			}
			if !tc.began.IsZero() {
				in.Began = tc.began
			}
			if tc.noHistory {
				in.Began = time.Time{}
			}
			if !tc.now.IsZero() {
				in.Now = tc.now
			}
			checkReport(t, Audit(in), tc.want, tc.reasons)
		})
	}
}

func with0(j config.Job, f func(*config.Job)) config.Job { f(&j); return j }

// checkReport compares the report's slots and extras, in time order, with
// want, each slot's reason with reasons, and the counts with the slots.
func checkReport(t *testing.T, rep Report, want []string, reasons map[string]string) {
	t.Helper()
	var got []string
	counts := Counts{}
	for _, jr := range rep.Jobs {
		all := append(append([]Slot(nil), jr.Slots...), jr.Extra...)
		sortSlots(all)
		for _, s := range all {
			got = append(got, line(s))
			if r, ok := reasons[s.At.UTC().Format("15:04")]; ok && !strings.Contains(s.Reason, r) {
				t.Errorf("%s: reason %q, want it to hold %q", line(s), s.Reason, r)
			}
			if s.Class != Extra {
				counts[s.Class]++
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if counts.String() != rep.Total.String() {
		t.Errorf("total %q, the slots count %q", rep.Total, counts)
	}
	if want := counts[Missed] > 0 || counts[Duplicated] > 0; rep.Failed() != want {
		t.Errorf("Failed() = %v, want %v", rep.Failed(), want)
	}
}

func sortSlots(s []Slot) {
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && s[k].At.Before(s[k-1].At); k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
}

func TestCountsString(t *testing.T) {
	c := Counts{Ran: 58, Skipped: 116, Open: 1}
	if got, want := c.String(), "ran 58, skipped 116, missed 0, duplicated 0, open 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAuditSchedules: the slots are the schedule's own, in its zone: a
// spring-forward day's fire right after the jump, a fall-back day's once,
// an H field's drawn minute.
func TestAuditSchedules(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	d := func(mo time.Month, day, h, m int) time.Time { return time.Date(2026, mo, day, h, m, 0, 0, ny) }
	tests := []struct {
		name       string
		expr       string
		since, now time.Time
		want       []string // the slots, RFC 3339
	}{
		{"spring forward", "30 2 * * *", d(3, 7, 0, 0), d(3, 9, 12, 0),
			[]string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"fall back", "30 1 * * *", d(10, 31, 0, 0), d(11, 2, 12, 0),
			[]string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"hashed minute", "H 9-11 * * *", d(6, 1, 0, 0), d(6, 1, 12, 0),
			[]string{"2026-06-01T09:55:00-04:00", "2026-06-01T10:55:00-04:00", "2026-06-01T11:55:00-04:00"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := job(t, "a", tc.expr, ny)
			var recs []run.Record
			for i, s := range tc.want {
				slot, err := time.Parse(time.RFC3339, s)
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, ok(fmt.Sprint("r", i), "host-a", slot.UTC()))
			}
			rep := Audit(Input{Jobs: []config.Job{j}, Records: recs, Since: tc.since, Began: tc.since, Now: tc.now})
			var got []string
			for _, s := range rep.Jobs[0].Slots {
				got = append(got, s.At.Format(time.RFC3339)+" "+string(s.Class))
			}
			var want []string
			for _, s := range tc.want {
				want = append(want, s+" ran")
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") || len(rep.Jobs[0].Extra) > 0 {
				t.Errorf("slots:\n%s\nwant:\n%s\nextra: %v", strings.Join(got, "\n"), strings.Join(want, "\n"), rep.Jobs[0].Extra)
			}
		})
	}
}
