package audit

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// held is host's skip of slot because run holderRun of job holderJob on
// host-a held the lock.
func held(id, host string, slot time.Time, holderJob, holderRun string) run.Record {
	h := run.Holder{PID: 7, Host: "host-a", Job: holderJob, RunID: holderRun, Since: slot}
	r := skip(id, host, slot, "lock held by "+h.String())
	r.Holder = &h
	return r
}

// TestAuditOpenWhileTheRunIsUnshipped: a slot whose skips point to a run
// that may be its own (a peer's "lock held by" naming a run the history
// does not have yet, or the ledger's "slot already run") is open within
// the grace, and skipped once it passed or when the holder is settled as
// another slot's run, a manual run or another job's.
func TestAuditOpenWhileTheRunIsUnshipped(t *testing.T) {
	every10 := job(t, "a", "*/10 * * * *", nil)
	within := at(10, 30).Add(30 * time.Second)
	foreign := skip("s1", "host-b", at(10, 30), "lock held by pid 7 (outside cronvisor)")
	foreign.Holder = &run.Holder{PID: 7, Foreign: true}
	tests := []struct {
		name   string
		job    config.Job
		recs   []run.Record
		now    time.Time // default within
		want   string    // the 10:30 slot
		reason string    // a part of its reason
	}{
		{name: "lock held by a run not shipped yet", recs: []run.Record{held("s1", "host-b", at(10, 30), "a", "r9")},
			want: "10:30 open - - 0", reason: ReasonAwaited + ": lock held by pid 7@host-a (job a, run r9)"},
		{name: "every peer's skip and the run once shipped", recs: []run.Record{held("s1", "host-b", at(10, 30), "a", "r9"),
			held("s2", "host-c", at(10, 30), "a", "r9"), with(ok("r9", "host-a", at(10, 30)), func(r *run.Record) { r.Outcome, r.EndedAt = run.Running, time.Time{} })},
			want: "10:30 open host-a running 1", reason: "running"},
		{name: "lock held by the run of the slot before", recs: []run.Record{
			with(ok("r8", "host-a", at(10, 20)), func(r *run.Record) { r.Outcome, r.EndedAt = run.Running, time.Time{} }),
			held("s1", "host-b", at(10, 30), "a", "r8")},
			want: "10:30 skipped host-b - 0", reason: "lock held by"},
		{name: "lock held by a manual run", recs: []run.Record{
			with(ok("m1", "host-a", at(10, 29)), func(r *run.Record) { r.Manual, r.ScheduledAt = true, time.Time{} }),
			held("s1", "host-b", at(10, 30), "a", "m1")},
			want: "10:30 skipped host-b - 0", reason: "lock held by"},
		{name: "lock held by another job's run", recs: []run.Record{held("s1", "host-b", at(10, 30), "b", "x1")},
			want: "10:30 skipped host-b - 0", reason: "job b, run x1"},
		{name: "lock held outside cronvisor: maybe a peer", recs: []run.Record{foreign},
			want: "10:30 open - - 0", reason: ReasonAwaited + ": lock held by pid 7 (outside cronvisor)"},
		{name: "the ledger's slot already run", recs: []run.Record{skip("s1", "host-b", at(10, 30), "slot already run by run r9 on host-a")},
			want: "10:30 open - - 0", reason: "slot already run by run r9"},
		{name: "a pause here, the lock held by a run there", recs: []run.Record{skip("s1", "host-c", at(10, 30), "paused"),
			held("s2", "host-b", at(10, 30), "a", "r9")},
			want: "10:30 open - - 0", reason: "paused; lock held by"},
		{name: "paused alone is a skip", recs: []run.Record{skip("s1", "host-c", at(10, 30), "paused")},
			want: "10:30 skipped host-c - 0", reason: "paused"},
		{name: "past the grace it is a skip", now: at(10, 30).Add(Grace + time.Second),
			recs: []run.Record{held("s1", "host-b", at(10, 30), "a", "r9")},
			want: "10:30 skipped host-b - 0", reason: "lock held by"},
		{name: "the job's jitter widens the grace", job: with0(every10, func(j *config.Job) { j.Jitter = 5 * time.Minute }),
			now: at(10, 35), recs: []run.Record{held("s1", "host-b", at(10, 30), "a", "r9")},
			want: "10:30 open - - 0", reason: ReasonAwaited},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Jobs: []config.Job{every10}, Records: tc.recs, Since: at(10, 30), Began: at(9, 0), Now: within}
			if tc.job.Sched != nil {
				in.Jobs[0] = tc.job
			}
			if !tc.now.IsZero() {
				in.Now = tc.now
			}
			checkReport(t, Audit(in), []string{tc.want}, map[string]string{"10:30": tc.reason})
		})
	}
}

// TestAuditCopies: an overlap: allow job runs each slot on every host by
// design: the slot is ran (open while a copy runs) with its copies
// listed, never duplicated; the outcome is the copies' common one.
func TestAuditCopies(t *testing.T) {
	allow := with0(job(t, "a", "*/10 * * * *", nil), func(j *config.Job) { j.Overlap = config.OverlapAllow })
	running := func(r run.Record) run.Record {
		return with(r, func(r *run.Record) { r.Outcome, r.EndedAt = run.Running, time.Time{} })
	}
	failed := func(r run.Record) run.Record { return with(r, func(r *run.Record) { r.Outcome = run.Failed }) }
	recs := []run.Record{
		ok("r1", "host-a", at(10, 0)),
		ok("r2", "host-a", at(10, 10)), ok("r3", "host-c", at(10, 10)), ok("r4", "host-b", at(10, 10)),
		ok("r5", "host-a", at(10, 20)), failed(ok("r6", "host-b", at(10, 20))),
		attempt(ok("r7", "host-a", at(10, 30)), 1, run.Failed), attempt(ok("r7", "host-a", at(10, 30)), 2, run.OK), ok("r8", "host-b", at(10, 30)),
		ok("r9", "host-a", at(10, 40)), running(ok("r10", "host-b", at(10, 40))),
	}
	in := Input{Jobs: []config.Job{allow}, Records: recs, Since: at(10, 0), Began: at(9, 0), Now: at(10, 40)}
	rep := Audit(in)
	checkReport(t, rep, []string{"10:00 ran host-a ok 1", "10:10 ran host-a,host-b,host-c ok 1", "10:20 ran host-a,host-b - 1",
		"10:30 ran host-a,host-b ok 2", "10:40 open host-a,host-b running 1"},
		map[string]string{"10:10": "3 copies (overlap: allow): r2 on host-a (ok), r3 on host-c (ok), r4 on host-b (ok)",
			"10:20": "2 copies (overlap: allow): r5 on host-a (ok), r6 on host-b (failed)", "10:40": "running"})
	var copies []string
	for _, s := range rep.Jobs[0].Slots {
		copies = append(copies, string(rune('0'+s.Copies)))
	}
	if got := strings.Join(copies, " "); got != "1 3 2 2 2" {
		t.Errorf("copies %s, want 1 3 2 2 2", got)
	}
	if rep.Failed() || rep.Total[Duplicated] != 0 {
		t.Errorf("report failed %v with %d duplicated, want neither", rep.Failed(), rep.Total[Duplicated])
	}
	// The same runs of a job that does not allow overlaps are duplicates.
	in.Jobs[0].Overlap = config.OverlapSkip
	if rep := Audit(in); rep.Total[Duplicated] != 4 || !rep.Failed() {
		t.Errorf("without overlap: allow, %s; want 4 duplicated", rep.Total)
	}
}
