package runner

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
)

// A scheduler that stops while it runs behind records the fires that came
// due and that it had not reached: every slot up to the stop once, the
// older ones in one missed record that counts them (the audit's form),
// the newest after it in a record of its own (the next start's last
// slot), a disabled job's as disabled; a fire not yet due, nothing; a
// job behind by over LateTolerance, all missed.
func TestStopRecordsTheFiresTheLoopHadNotReached(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	stop := t0.Add(4500 * time.Millisecond)
	rec := newRecorder()
	s := NewScheduler(rec, clock.NewFake(stop), rec.emit)
	behind := testJob(t, "behind", "* * * * * *", "UTC")
	one := testJob(t, "one", "* * * * * *", "UTC")
	two := testJob(t, "two", "* * * * * *", "UTC")
	off := testJob(t, "off", "* * * * * *", "UTC")
	off.Enabled = false
	later := testJob(t, "later", "* * * * *", "UTC")
	asleep := testJob(t, "asleep", "30 14 * * *", "UTC")
	h := entryHeap{
		{job: &behind, slot: t0, due: t0},
		{job: &one, slot: t0.Add(4 * time.Second), due: t0.Add(4 * time.Second)},
		{job: &two, slot: t0.Add(3 * time.Second), due: t0.Add(3 * time.Second)},
		{job: &off, slot: t0.Add(2 * time.Second), due: t0.Add(2 * time.Second)},
		{job: &later, slot: t0.Add(time.Minute), due: t0.Add(time.Minute)},
		{job: &asleep, slot: t0.Add(-24*time.Hour - 30*time.Minute), due: t0.Add(-24*time.Hour - 30*time.Minute)},
	}
	s.recordOverdue(&h, stop)

	type want struct {
		slot   time.Time
		reason string
		class  run.Class
	}
	check := func(job string, wants ...want) {
		t.Helper()
		got := rec.skipsOf(job)
		if len(got) != len(wants) {
			t.Fatalf("%s: %d records %+v, want %d", job, len(got), got, len(wants))
		}
		for i, w := range wants {
			g := got[i]
			if !g.Slot.Equal(w.slot) || g.Reason != w.reason || g.Class != w.class || !g.Time.Equal(stop) || g.RunID == "" {
				t.Errorf("%s record %d: %+v, want slot %s, reason %q, class %s at the stop", job, i, g, w.slot, w.reason, w.class)
			}
		}
	}
	check("behind",
		want{t0, "missed: supervisor stopping while behind (4 fires from 2026-12-02T15:00:00Z)", run.ClassMissed},
		want{t0.Add(4 * time.Second), "supervisor stopping", run.ClassDropped})
	check("one", want{t0.Add(4 * time.Second), "supervisor stopping", run.ClassDropped})
	check("two",
		want{t0.Add(3 * time.Second), "missed: supervisor stopping while behind", run.ClassMissed},
		want{t0.Add(4 * time.Second), "supervisor stopping", run.ClassDropped})
	check("off",
		want{t0.Add(2 * time.Second), "missed: supervisor stopping while behind (2 fires from 2026-12-02T15:00:02Z)", run.ClassMissed},
		want{t0.Add(4 * time.Second), "disabled", run.ClassDisabled})
	check("later")
	// Behind by more than LateTolerance: nothing would have run, as when
	// the running loop wakes that late; every slot is missed.
	check("asleep", want{t0.Add(-24*time.Hour - 30*time.Minute), "missed: supervisor stopping while behind (2 fires from 2026-12-01T14:30:00Z)", run.ClassMissed})
	for _, sk := range rec.skips {
		if strings.Contains(sk.Reason, "while down") {
			t.Errorf("%q: the supervisor was up", sk.Reason)
		}
	}
}
