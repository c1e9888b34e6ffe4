package e2e

import (
	"syscall"
	"testing"
	"time"
)

// killLab is the hosts of TestResourceSlotSurvivesSupervisorKill: host-a
// alone on the file backend (a restarted daemon on its state dir is the
// one that must not overfill), host-a and host-b on a shared one.
type killLab struct {
	t       *testing.T
	be      resBackend
	out     string
	names   []string
	hosts   map[string]*sandbox
	daemons map[string]*proc
}

// TestResourceSlotSurvivesSupervisorKill: four jobs share db (2 slots),
// each run lasting 6 s. First the supervisor of the host holding slots
// is SIGKILLed alone and started again: the runs' keeper (and, file and
// SQL, the run's own fd 5) keeps their slots until the runs end, so
// never more than 2 run at once, and each slot is taken again once its
// run has ended. Then supervisor and keeper are SIGKILLed together: the
// file and SQL slots stay held by the runs' processes until they are
// gone; a Redis slot, which nothing of the run holds, is free within the
// lease's ttl (the run may go on beside its successor: documented in
// docs/resources.md). At the end, every slot is free.
func TestResourceSlotSurvivesSupervisorKill(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	for _, kind := range resourceKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			l := newKillLab(t, newResBackend(t, kind))
			defer l.logOnFailure()
			first := l.killHolder(false)
			l.checkHeldMetric(first, "supervisor killed")
			l.checkSlotsKept(first, "supervisor killed")
			second := l.killHolder(true)
			l.checkHeldMetric(second, "supervisor and keeper killed")
			// Redis too: the next daemon takes the combined lease of the
			// run's lock and slots over from its guard file and renews it
			// until the run is over (docs/operations.md).
			l.checkSlotsKept(second, "supervisor and keeper killed")
			l.stop()
			runs := l.runs()
			most, at := maxConcurrent(runs)
			if most > 2 {
				t.Errorf("%d runs at once, db has 2 slots:\n%s", most, joinRuns(at))
			}
			t.Logf("%s: %d runs, most at once %d", kind, len(runs), most)
			l.checkRecords()
			l.checkSlotsFree()
		})
	}
}

func newKillLab(t *testing.T, be resBackend) *killLab {
	l := &killLab{t: t, be: be, out: runsFile(t), names: []string{"host-a"},
		hosts: map[string]*sandbox{}, daemons: map[string]*proc{}}
	if be.shared {
		l.names = append(l.names, "host-b")
	}
	jobs := `metrics: {listen: "127.0.0.1:0"}` + "\n" + dbJobs(l.out, 4, func(int) string { return "6" }, "")
	for _, n := range l.names {
		l.hosts[n] = be.host(t, jobs)
		l.daemons[n] = l.hosts[n].startHost(n)
	}
	return l
}

func (l *killLab) runs() []resRun { return readResRuns(l.t, l.out) }

func (l *killLab) logOnFailure() {
	if l.t.Failed() {
		for _, n := range l.names {
			l.t.Logf("%s:\n%s", n, tail(l.daemons[n].stderr(), 20))
		}
		l.t.Logf("runs:\n%s", joinRuns(l.runs()))
	}
}

// killed is what a kill left: the victim's runs then going on.
type killed struct {
	host   string
	at     time.Time
	orphan []resRun
}

// checkHeldMetric: while the killed supervisor's runs go on, the daemon
// started in its place counts their slots in
// cronvisor_resource_slots_held (it adopted them), beside its own runs'.
// Every run of these jobs holds one slot of db.
func (l *killLab) checkHeldMetric(k killed, what string) {
	t := l.t
	d := l.daemons[k.host]
	waitFor(t, 10*time.Second, k.host+" serving metrics", func() bool { return metricsAddrLog.MatchString(d.stderr()) })
	url := "http://" + metricsAddrLog.FindStringSubmatch(d.stderr())[1] + "/metrics"
	series := `cronvisor_resource_slots_held{resource="db"}`
	for deadline := time.Now().Add(4 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		before, orphans := l.goingOn(k)
		held := metricValue(httpGet(t, url), series)
		after, left := l.goingOn(k)
		if orphans > 0 && left > 0 && (held == before || held == after) {
			t.Logf("%s: %s: %s %d with %d adopted run(s) going on", l.be.kind, what, series, held, left)
			return
		}
		if left == 0 || time.Now().After(deadline) {
			t.Errorf("%s: %s is %d; %s's runs going on: %d then %d, of them adopted: %d then %d",
				what, series, held, k.host, before, after, orphans, left)
			return
		}
	}
}

// goingOn counts the runs of k's host going on now, and of them those
// its killed supervisor left.
func (l *killLab) goingOn(k killed) (all, orphans int) {
	left := map[string]bool{}
	for _, o := range k.orphan {
		left[o.runID] = true
	}
	for _, r := range l.runs() {
		if r.host == k.host && r.end.IsZero() && !gone(r.pid) {
			all++
			if left[r.runID] {
				orphans++
			}
		}
	}
	return all, orphans
}

// killHolder waits for a host with a run a second old or more (a
// supervisor killed at the instant of a start leaves its keeper to end
// that run), SIGKILLs its supervisor (and its keeper, withKeeper),
// starts it again and returns the runs it had going on.
func (l *killLab) killHolder(withKeeper bool) killed {
	t := l.t
	var k killed
	waitFor(t, 20*time.Second, "a host holding a slot for a second", func() bool {
		k.host, k.orphan = l.holder(time.Now().Add(-time.Second))
		return len(k.orphan) > 0
	})
	victim := l.daemons[k.host]
	_ = syscall.Kill(victim.pid(), syscall.SIGKILL)
	keepers := 0
	if withKeeper {
		keepers = l.hosts[k.host].killKeepers()
	}
	k.at = time.Now()
	victim.wait(5 * time.Second)
	if withKeeper && keepers != 1 {
		t.Errorf("killed %d keepers of %s, want 1", keepers, k.host)
	}
	t.Logf("%s: %s's supervisor killed (keeper too: %v) holding %d slot(s)", l.be.kind, k.host, withKeeper, len(k.orphan))
	l.daemons[k.host] = l.hosts[k.host].startHost(k.host)
	return k
}

// holder is the host with the most runs going on that started before
// since, and those runs.
func (l *killLab) holder(since time.Time) (string, []resRun) {
	by := map[string][]resRun{}
	for _, r := range l.runs() {
		if r.end.IsZero() && r.start.Before(since) && !gone(r.pid) {
			by[r.host] = append(by[r.host], r)
		}
	}
	best := ""
	for h, rs := range by {
		if len(rs) > len(by[best]) {
			best = h
		}
	}
	return best, by[best]
}

// ended is r as the jobs' file tells it now.
func (l *killLab) ended(r resRun) resRun {
	for _, x := range l.runs() {
		if x.runID == r.runID && x.pid == r.pid {
			return x
		}
	}
	return r
}

// checkSlotsKept waits for the killed host's runs to end (their 6 s),
// checks that no run took their slots before, and that one took each
// slot within 3 s after (not leaked).
func (l *killLab) checkSlotsKept(k killed, what string) {
	t := l.t
	for _, o := range k.orphan {
		var done resRun
		waitFor(t, 10*time.Second, "the run "+o.String()+" to end", func() bool {
			done = l.ended(o)
			return !done.end.IsZero()
		})
		if d := done.end.Sub(o.start); d < 5*time.Second {
			t.Errorf("%s: %s ended after %v, want its 6 s", what, done, d)
		}
		var next *resRun
		waitFor(t, 5*time.Second, "a run to take "+o.slots+" after "+done.String(), func() bool {
			next = l.nextOnSlot(o.slots, o.start, o.runID)
			return next != nil
		})
		gap := next.start.Sub(done.end)
		t.Logf("%s: %s: slot %s taken again %v after its run ended (%s)", l.be.kind, what, o.slots, gap.Round(time.Millisecond), next)
		if gap < 0 {
			t.Errorf("%s: %s took slot %s while %s still held it", what, next, o.slots, done)
		}
	}
}

// nextOnSlot is the first run after since, other than runID, given slot.
func (l *killLab) nextOnSlot(slot string, since time.Time, runID string) *resRun {
	for _, r := range l.runs() {
		if r.slots == slot && r.runID != runID && r.start.After(since) {
			return &r
		}
	}
	return nil
}

// checkRecords: every run the jobs told of has its record on its host
// (one, with its slot), also those whose supervisor was killed.
func (l *killLab) checkRecords() {
	runs := l.runs()
	for _, n := range l.names {
		tl := checkResRecords(l.t, l.hosts[n], n, l.be.kind, runs)
		l.t.Logf("%s: %s: %d fires recorded: %d ran (%d killed at their start), %d skipped resource full, %d lock held, %d slot already run, %d other; %d seconds without exactly one record (the restarts)",
			l.be.kind, n, tl.fires, tl.ran, tl.startKilled, tl.fullSkips, tl.lockSkips, tl.slotSkips, tl.otherSkips, len(tl.gaps))
	}
}

// stop stops the daemons once every run has ended.
func (l *killLab) stop() {
	var ds []*proc
	for _, n := range l.names {
		ds = append(ds, l.daemons[n])
	}
	stopDaemons(l.t, ds...)
	waitFor(l.t, 10*time.Second, "every run to end", func() bool {
		for _, r := range l.runs() {
			if r.end.IsZero() && !gone(r.pid) {
				return false
			}
		}
		return true
	})
}

// checkSlotsFree: after the runs, `locks --json` on each host shows db's
// slots free.
func (l *killLab) checkSlotsFree() {
	for _, n := range l.names {
		res := l.hosts[n].resourcesJSON()
		db, ok := res["db"]
		if !ok {
			l.t.Errorf("%s: locks --json shows no resource db: %v", n, res)
			continue
		}
		if held := db.held(); held != 0 || len(db.Slots) != 2 {
			l.t.Errorf("%s: after the runs, db has %d slot(s) of %d held: %+v", n, held, len(db.Slots), db)
		}
	}
}
