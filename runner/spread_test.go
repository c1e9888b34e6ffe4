package runner

import (
	"testing"
	"time"
)

// spreadJob is hourly at a minute drawn from its name, with a jitter drawn
// from its name and slot.
func spreadJob() []string {
	return []string{"jobs:",
		"  - name: invoice",
		`    schedule: "H * * * *"`,
		"    command: [/bin/true]",
		"    timeout: 1m",
		"    jitter: 10m"}
}

// TestSchedulerJitterIsTheSameOnEveryHost runs two schedulers (two hosts)
// on one file for a day, and a third started at noon (a restart): for each
// slot all draw the same due time, under the jitter, and the delay varies
// from slot to slot.
func TestSchedulerJitterIsTheSameOnEveryHost(t *testing.T) {
	start := at(0, 0, 0)
	a := startHarness(t, start, parseJobs(t, spreadJob()...))
	b := startHarness(t, start, parseJobs(t, spreadJob()...))
	var restarted *harness
	job := parseJobs(t, spreadJob()...)[0]
	delays := map[time.Duration]bool{}
	for i := 0; i < 24; i++ {
		due, ok := a.sched.NextFires()["invoice"]
		if !ok {
			t.Fatal("no next fire")
		}
		if other := b.sched.NextFires()["invoice"]; !other.Equal(due) {
			t.Fatalf("host a is due at %s, host b at %s", due, other)
		}
		if restarted != nil {
			if other := restarted.sched.NextFires()["invoice"]; !other.Equal(due) {
				t.Fatalf("due at %s, after a restart at %s", due, other)
			}
		}
		slot := job.Sched.Next(due.Add(-job.Jitter))
		if d := due.Sub(slot); d < 0 || d >= job.Jitter {
			t.Fatalf("slot %s due at %s: the delay %v is not under the jitter %v", slot, due, d, job.Jitter)
		}
		delays[due.Sub(slot)] = true
		a.set(due)
		b.set(due)
		if restarted != nil {
			restarted.set(due)
		}
		if i == 11 {
			restarted = startHarness(t, due, parseJobs(t, spreadJob()...))
		}
	}
	if len(delays) < 12 {
		t.Errorf("24 slots drew %d distinct delays", len(delays))
	}
	if fa, fb := a.firedAt("invoice"), b.firedAt("invoice"); len(fa) != 24 || len(fb) != 24 {
		t.Errorf("fired %d and %d times, want 24 each", len(fa), len(fb))
	}
}

// TestSchedulerReloadedJitterAgreesWithAFreshStart: a host that reloads a
// changed jitter aims at the instant a host started with the new file
// does, for a slot to come and for a pending one whose new instant passed.
func TestSchedulerReloadedJitterAgreesWithAFreshStart(t *testing.T) {
	file := func(jitter string) []string {
		return []string{"jobs:", "  - name: hourly", `    schedule: "0 * * * *"`,
			"    command: [/bin/true]", "    timeout: 1m", "    jitter: " + jitter}
	}
	reloaded := startHarness(t, at(11, 58, 0), parseJobs(t, file("60s")...))
	reloaded.reload(parseJobs(t, file("10m")...))
	fresh := startHarness(t, at(11, 58, 0), parseJobs(t, file("10m")...))
	a, b := reloaded.sched.NextFires()["hourly"], fresh.sched.NextFires()["hourly"]
	if !a.Equal(b) {
		t.Errorf("reloaded host due at %s, a host started with the new file at %s", a, b)
	}
	job := parseJobs(t, file("10m")...)[0]
	if want := at(12, 0, 0).Add(job.Delay(at(12, 0, 0))); !a.Equal(want) {
		t.Errorf("due at %s, want the slot plus its drawn delay, %s", a, want)
	}

	// The 12:00 fire is pending at 12:00:01 under a 10m jitter; shortened
	// to 1s, its instant has passed: it runs at once.
	pending := startHarness(t, at(11, 59, 0), parseJobs(t, file("10m")...))
	if due := pending.sched.NextFires()["hourly"]; due.Before(at(12, 0, 2)) {
		t.Fatalf("the drawn delay %s is too short to be pending: pick another name", due.Sub(at(12, 0, 0)))
	}
	pending.set(at(12, 0, 1))
	pending.reload(parseJobs(t, file("1s")...))
	pending.runUntil(at(12, 0, 1))
	if got := pending.firedAt("hourly"); len(got) != 1 || got[0] != "12:00:00" {
		t.Errorf("fired slots %v by 12:00:01, want the pending 12:00 slot at once", got)
	}
}
