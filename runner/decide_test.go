package runner

import (
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestDecide: what a wake-up does with a due entry, from the entry and
// the time alone.
func TestDecide(t *testing.T) {
	hourly := testJob(t, "hourly", "0 * * * *", "UTC")
	catchUp := hourly
	catchUp.CatchUp = 10 * time.Minute
	disabled := hourly
	disabled.Enabled = false
	// On 2026-03-08 New York springs forward at 02:00: 02:00 and 02:30
	// fall in the gap and fire together, a nanosecond apart, at 03:00 EDT.
	gap := testJob(t, "gap", "0,30 2 * * *", "America/New_York")
	burst := gap.Sched.Next(time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC))
	afterBurst := gap.Sched.Next(burst)
	if !afterBurst.After(burst) || afterBurst.Sub(burst) >= burstGap {
		t.Fatalf("the DST rows want a burst: slots %s and %s", burst.Format(time.RFC3339Nano), afterBurst.Format(time.RFC3339Nano))
	}
	sec := time.Second

	tests := []struct {
		name string
		e    entry
		now  time.Time
		want decision
	}{
		{"on time", due(&hourly, at(12, 0, 0)), at(12, 0, 0),
			decision{act: runSlot, slot: at(12, 0, 0), first: at(12, 0, 0), from: at(12, 0, 0)}},
		{"late within the tolerance", due(&hourly, at(12, 0, 0)), at(12, 0, 50),
			decision{act: runSlot, slot: at(12, 0, 0), first: at(12, 0, 0), late: 50 * sec, from: at(12, 0, 50)}},
		{"jittered start", jittered(&hourly, at(12, 0, 0), 40*sec), at(12, 0, 40),
			decision{act: runSlot, slot: at(12, 0, 0), first: at(12, 0, 0), from: at(12, 0, 40)}},
		{"jitter longer than the tolerance is no lateness", jittered(&hourly, at(12, 0, 0), 150*sec), at(12, 2, 30),
			decision{act: runSlot, slot: at(12, 0, 0), first: at(12, 0, 0), from: at(12, 2, 30)}},
		{"late after the jitter's delay", jittered(&hourly, at(12, 0, 0), 150*sec), at(12, 5, 0),
			decision{act: missAll, slot: at(12, 0, 0), missed: 1, first: at(12, 0, 0), late: 150 * sec, from: at(12, 5, 0)}},
		{"late beyond the tolerance", due(&hourly, at(12, 0, 0)), at(12, 5, 0),
			decision{act: missAll, slot: at(12, 0, 0), missed: 1, first: at(12, 0, 0), late: 5 * time.Minute, from: at(12, 5, 0)}},
		{"late within catch_up", due(&catchUp, at(12, 0, 0)), at(12, 5, 0),
			decision{act: runSlot, slot: at(12, 0, 0), first: at(12, 0, 0), late: 5 * time.Minute, from: at(12, 5, 0)}},
		{"late beyond catch_up", due(&catchUp, at(12, 0, 0)), at(12, 10, 1),
			decision{act: missAll, slot: at(12, 0, 0), missed: 1, first: at(12, 0, 0), late: 10*time.Minute + sec, from: at(12, 10, 1)}},
		{"missed several, newest in time", due(&hourly, at(9, 0, 0)), at(12, 0, 20),
			decision{act: runSlot, slot: at(12, 0, 0), missed: 3, first: at(9, 0, 0), late: 20 * sec, from: at(12, 0, 20)}},
		{"missed several, newest too old", due(&hourly, at(9, 0, 0)), at(12, 30, 0),
			decision{act: missAll, slot: at(12, 0, 0), missed: 4, first: at(9, 0, 0), late: 30 * time.Minute, from: at(12, 30, 0)}},
		{"missed several, catch_up runs the newest", due(&catchUp, at(9, 0, 0)), at(12, 9, 0),
			decision{act: runSlot, slot: at(12, 0, 0), missed: 3, first: at(9, 0, 0), late: 9 * time.Minute, from: at(12, 9, 0)}},
		{"disabled", due(&disabled, at(12, 0, 0)), at(12, 0, 0),
			decision{act: skipDisabled, slot: at(12, 0, 0), first: at(12, 0, 0), from: at(12, 0, 0)}},
		{"disabled, missed several", due(&disabled, at(10, 0, 0)), at(12, 0, 1),
			decision{act: skipDisabled, slot: at(12, 0, 0), missed: 2, first: at(10, 0, 0), late: sec, from: at(12, 0, 1)}},
		{"disabled and too late", due(&disabled, at(12, 0, 0)), at(12, 2, 0),
			decision{act: missAll, slot: at(12, 0, 0), missed: 1, first: at(12, 0, 0), late: 2 * time.Minute, from: at(12, 2, 0)}},
		{"stalled schedule", entry{job: &hourly, due: at(13, 0, 0)}, at(13, 0, 0),
			decision{act: reask, from: at(13, 0, 0)}},
		{"DST burst: the next slot is searched from this one", due(&gap, burst), burst,
			decision{act: runSlot, slot: burst, first: burst, from: burst}},
		{"DST burst, woken after both: no slot counts as missed", due(&gap, burst), burst.Add(sec),
			decision{act: runSlot, slot: burst, first: burst, late: sec, from: burst}},
		{"DST burst, its last slot", due(&gap, afterBurst), afterBurst,
			decision{act: runSlot, slot: afterBurst, first: afterBurst, from: afterBurst}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.e, tc.now)
			if !sameDecision(got, tc.want) {
				t.Errorf("decide at %s:\n got %+v\nwant %+v", tc.now.Format(time.RFC3339Nano), got, tc.want)
			}
		})
	}
}

// due is j's entry for slot, due at the slot (no jitter).
func due(j *config.Job, slot time.Time) entry { return entry{job: j, slot: slot, due: slot} }

// jittered is j's entry for slot, due jitter after it.
func jittered(j *config.Job, slot time.Time, jitter time.Duration) entry {
	return entry{job: j, slot: slot, due: slot.Add(jitter)}
}

func sameDecision(a, b decision) bool {
	return a.act == b.act && a.slot.Equal(b.slot) && a.missed == b.missed && a.first.Equal(b.first) &&
		a.late == b.late && a.from.Equal(b.from)
}
