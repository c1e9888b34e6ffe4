package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// endRig is one job "j" under a daemon with metrics and a webhook target
// on every terminal event, and a console attached to it: what every end
// of a run must reach, whoever saw it end.
type endRig struct {
	*sandbox
	hooks   *receiver
	daemon  *proc
	metrics string // the current daemon's /metrics
}

// endEvents are the webhook events that end a run or a slot.
var endEvents = []string{"failure", "timeout", "success", "skip", "missed", "host_lost"}

func newEndRig(t *testing.T, job string) *endRig {
	t.Helper()
	hooks, url := newReceiver(t)
	s := newSandbox(t, fmt.Sprintf(`shutdown_grace: 1s
defaults:
  notify:
    - on: [%s, recovered]
      url: %s/hook
jobs:
  - {name: j, schedule: "0 0 1 1 *", %s}
`, strings.Join(endEvents, ", "), url, job))
	r := &endRig{sandbox: s, hooks: hooks}
	r.start()
	return r
}

// start starts a daemon (the next one, after a death or a hand-over).
func (r *endRig) start() {
	r.t.Helper()
	r.daemon = r.cv("daemon", "--log-format", "json", "--metrics-addr", "127.0.0.1:0")
	waitFor(r.t, 10*time.Second, "daemon serving metrics", func() bool { return metricsAddrLog.MatchString(r.daemon.stderr()) })
	r.metrics = "http://" + metricsAddrLog.FindStringSubmatch(r.daemon.stderr())[1] + "/metrics"
	waitFor(r.t, 10*time.Second, "daemon's socket", func() bool { code, _, _ := r.runCV(5*time.Second, "status"); return code == 0 })
}

// trigger fires j now and returns its run id once it runs.
func (r *endRig) trigger() string {
	r.t.Helper()
	before := len(r.historyJSON("--job", "j"))
	if code, out, errOut := r.runCV(10*time.Second, "trigger", "j"); code != 0 {
		r.t.Fatalf("trigger: exit %d: %s%s", code, out, errOut)
	}
	var id string
	waitFor(r.t, 10*time.Second, "the triggered run", func() bool {
		recs := r.historyJSON("--job", "j")
		if len(recs) > before {
			id = recs[0].RunID
		}
		return id != ""
	})
	return id
}

// waitRunning waits until j's run runID has its process running.
func (r *endRig) waitRunning(runID string) {
	r.t.Helper()
	waitFor(r.t, 10*time.Second, "run "+runID+" running", func() bool {
		for _, p := range r.tagged() {
			if slices.Contains(p.environ, "CRONVISOR_RUN_ID="+runID) {
				return true
			}
		}
		return false
	})
}

// killDaemon SIGKILLs the daemon's process group (its runs and keeper
// have groups of their own) and waits for it.
func (r *endRig) killDaemon() {
	_ = syscall.Kill(-r.daemon.pid(), syscall.SIGKILL)
	r.daemon.wait(5 * time.Second)
}

// handOver replaces the daemon the documented way: SIGUSR2, then a new one.
func (r *endRig) handOver() {
	r.t.Helper()
	_ = syscall.Kill(r.daemon.pid(), syscall.SIGUSR2)
	if code := r.daemon.wait(10 * time.Second); code != 0 {
		r.t.Fatalf("daemon exit %d after SIGUSR2: %s", code, tail(r.daemon.stderr(), 2000))
	}
	r.start()
}

// metric is one series' value on the current daemon, 0 when absent.
func (r *endRig) metric(series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(httpGet(r.t, r.metrics))
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// told counts the webhook bodies of runID by event.
func (r *endRig) told(runID string) map[string]int {
	n := map[string]int{}
	for _, q := range r.hooks.under("/hook") {
		if q.body["run_id"] == runID {
			n[fmt.Sprint(q.body["event"])]++
		}
	}
	return n
}

// status is j's `status --json` line.
func (r *endRig) status() (outcome string, ended time.Time) {
	_, out, _ := r.runCV(10*time.Second, "status", "--json")
	for _, l := range lines(out) {
		var st struct {
			Name        string    `json:"name"`
			LastOutcome string    `json:"last_outcome"`
			LastEndedAt time.Time `json:"last_ended_at"`
		}
		if json.Unmarshal([]byte(l), &st) == nil && st.Name == "j" {
			return st.LastOutcome, st.LastEndedAt
		}
	}
	return "", time.Time{}
}

// endCase is one way a run ends.
type endCase struct {
	name string
	job  string                 // j's fields beside name and schedule
	act  func(r *endRig) string // makes the end happen; the run id judged
	want run.Outcome
	// running: another run of j goes on after the end (replace).
	running bool
	// event is the one notification the end maps to ("": none);
	// attempt the run's attempt.
	event   string
	attempt int
	// tail is what the notification's output_tail must hold.
	tail string
}

// TestE2EEveryEndTakesOnePath: for each way a run ends, exactly one
// record; exactly one notification of the event its outcome maps to, and
// no other end event for it (none twice across a restart);
// cronvisor_runs_total{outcome} of the daemon that recorded it at 1;
// `status --json` last_outcome and last_ended_at equal to the record
// within a second of it; and the console's row saying the same.
func TestE2EEveryEndTakesOnePath(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: twelve daemons, deadlines, restarts and a console each; runs in the full suite")
	}
	for _, tc := range endCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newEndRig(t, tc.job)
			runID := tc.act(r)
			rec := r.recordOf(runID, 20*time.Second)
			recordedAt := time.Now()
			r.checkEnd(tc, rec, recordedAt)
			_ = syscall.Kill(r.daemon.pid(), syscall.SIGTERM)
			r.daemon.wait(15 * time.Second)
		})
	}
}

func (r *endRig) checkEnd(tc endCase, rec run.Record, recordedAt time.Time) {
	t := r.t
	t.Helper()
	if rec.Outcome != tc.want || max(rec.Attempt, 1) != tc.attempt {
		t.Fatalf("recorded %s attempt %d (%q); want %s attempt %d", rec.Outcome, rec.Attempt, rec.Reason, tc.want, tc.attempt)
	}
	n := 0
	for _, h := range r.historyJSON("--job", "j") {
		if h.RunID == rec.RunID {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d records of run %s; want 1", n, rec.RunID)
	}
	var outcome string
	var ended time.Time
	waitFor(t, time.Until(recordedAt.Add(time.Second)), "status saying the record", func() bool {
		outcome, ended = r.status()
		return outcome == string(rec.Outcome) && ended.Sub(rec.EndedAt).Abs() < time.Second
	})
	series := fmt.Sprintf(`cronvisor_runs_total{job="j",outcome="%s"}`, rec.Outcome)
	waitFor(t, 5*time.Second, series+" at 1", func() bool { return r.metric(series) == 1 })
	if tc.event != "" {
		waitFor(t, 10*time.Second, "the "+tc.event+" notification", func() bool { return r.told(rec.RunID)[tc.event] >= 1 })
	}
	if tc.tail != "" {
		for _, q := range r.hooks.under("/hook") {
			if q.body["run_id"] == rec.RunID && !strings.Contains(fmt.Sprint(q.body["output_tail"]), tc.tail) {
				t.Errorf("%s notification's output_tail %q; want it to hold %q", q.body["event"], q.body["output_tail"], tc.tail)
			}
		}
	}
	time.Sleep(1500 * time.Millisecond) // room for a second, wrong, notification
	told := r.told(rec.RunID)
	for _, ev := range endEvents {
		want := 0
		if ev == tc.event {
			want = 1
		}
		if told[ev] != want {
			t.Errorf("%d %s notifications of run %s; want %d (all told: %v)", told[ev], ev, rec.RunID, want, told)
		}
	}
	if v := r.metric(series); v != 1 {
		t.Errorf("%s = %v after the end settled; want 1", series, v)
	}
	tm := startTmux(t, r.sandbox, 160, 20, cvBin, "ui", "--config", r.config)
	tm.await(10*time.Second, "the console's row of j saying "+string(rec.Outcome), func(screen string) bool {
		row := lineWith(screen, " j ")
		return strings.Contains(row, " "+string(rec.Outcome)) && strings.Contains(row, "▶") == tc.running
	})
}

// endCases are the ways a run ends, on one host.
func endCases() []endCase {
	const long = `command: "sleep 30", timeout: 1m, kill_grace: 1s`
	triggered := func(r *endRig) string { return r.trigger() }
	running := func(r *endRig) string { id := r.trigger(); r.waitRunning(id); return id }
	return []endCase{
		{name: "ok", job: `command: "sleep 0.2", timeout: 30s`, act: triggered, want: run.OK, event: "success", attempt: 1},
		{name: "failed", job: `command: "echo own-words; exit 3", timeout: 30s`, act: triggered, want: run.Failed, event: "failure",
			attempt: 1, tail: "own-words"},
		{name: "timeout", job: `command: "sleep 30", timeout: 1s, kill_grace: 1s`, act: triggered, want: run.Timeout, event: "timeout", attempt: 1},
		{name: "kill", job: long, want: run.Interrupted, attempt: 1, act: func(r *endRig) string {
			id := running(r)
			r.verb("kill", "j")
			return id
		}},
		{name: "replace", job: `overlap: replace, ` + long, want: run.Replaced, attempt: 1, running: true, act: func(r *endRig) string {
			id := running(r)
			r.trigger()
			return id
		}},
		{name: "keeper ends a dead supervisor's run", job: `command: "sleep 30", timeout: 3s, kill_grace: 1s`,
			want: run.Timeout, event: "timeout", attempt: 1, act: func(r *endRig) string {
				id := running(r)
				r.killDaemon()
				r.start()
				return id
			}},
		{name: "SIGUSR2 hand-over", job: `command: "echo before-the-hand-over; sleep 2; echo after-it; exit 4", timeout: 30s`,
			want: run.Failed, event: "failure", attempt: 1, tail: "before-the-hand-over\nafter-it",
			act: func(r *endRig) string {
				id := running(r)
				r.handOver()
				return id
			}},
		{name: "supervisor and keeper killed", job: `command: "sleep 1.5", timeout: 30s`, want: run.Interrupted, attempt: 1,
			act: func(r *endRig) string {
				id := running(r)
				r.killDaemon()
				if r.killKeepers() == 0 {
					r.t.Fatal("no keeper to kill")
				}
				r.start()
				return id
			}},
		{name: "kill of an adopted run", job: long, want: run.Interrupted, attempt: 1, act: func(r *endRig) string {
			id := running(r)
			r.killDaemon()
			r.start()
			r.verb("kill", "j")
			return id
		}},
		{name: "retries cut short", job: `command: "exit 5", timeout: 10s, retries: 2, retry_backoff: 1m, retry_on: [failed]`,
			want: run.Failed, event: "failure", attempt: 1, act: func(r *endRig) string {
				id := r.trigger()
				r.recordOf(id, 10*time.Second)
				r.verb("kill", "j")
				waitFor(r.t, 10*time.Second, "the slot's end", func() bool {
					return strings.Contains(r.runsByID()[id].Reason, "no retry: killed by operator")
				})
				return id
			}},
		{name: "retries across a SIGKILL", job: `command: "exit 5", timeout: 10s, retries: 1, retry_backoff: 5s, retry_on: [failed]`,
			want: run.Failed, event: "failure", attempt: 2, act: func(r *endRig) string {
				return r.resumedAttempt(func() { r.killDaemon(); r.start() })
			}},
		{name: "retries across a hand-over", job: `command: "exit 5", timeout: 10s, retries: 1, retry_backoff: 5s, retry_on: [failed]`,
			want: run.Failed, event: "failure", attempt: 2, act: func(r *endRig) string { return r.resumedAttempt(r.handOver) }},
	}
}

// resumedAttempt triggers j (retries: 1, retry_backoff: 5s), lets its
// first attempt fail, replaces the daemon during the backoff with
// replace, sees the next daemon's status say the slot waits for attempt
// 2 at its planned time, and returns the run id of attempt 2, which the next daemon
// must run at its planned time, the first attempt left unended and
// unnotified.
func (r *endRig) resumedAttempt(replace func()) string {
	first := r.trigger()
	rec := r.recordOf(first, 10*time.Second)
	replace()
	planned := rec.EndedAt.Add(5 * time.Second)
	waitFor(r.t, time.Until(planned), "the next daemon showing the slot's wait", func() bool {
		_, out, _ := r.runCV(5*time.Second, "status", "--json")
		var st struct {
			State   string    `json:"state"`
			RetryAt time.Time `json:"retry_at"`
			Attempt int       `json:"attempt"`
		}
		_ = json.Unmarshal([]byte(strings.TrimSpace(out)), &st)
		return st.State == "retrying" && st.Attempt == 2 && st.RetryAt.Sub(planned).Abs() < 100*time.Millisecond
	})
	var second run.Record
	waitFor(r.t, 15*time.Second, "attempt 2", func() bool {
		for _, h := range r.historyJSON("--job", "j") {
			if h.Attempt == 2 && h.Outcome.Final() {
				second = h
			}
		}
		return second.RunID != ""
	})
	if second.StartedAt.Before(planned.Add(-100 * time.Millisecond)) {
		r.t.Errorf("attempt 2 started %v; want at its planned %v", second.StartedAt, planned)
	}
	if got := r.runsByID()[first]; strings.Contains(got.Reason, "no retry") {
		r.t.Errorf("attempt 1 recorded %q; want its slot left to the next daemon, not ended", got.Reason)
	}
	if n := r.told(first)["failure"]; n != 0 {
		r.t.Errorf("%d failure notifications of attempt 1; want none (a retry followed)", n)
	}
	return second.RunID
}

// verb runs an operator's verb against the daemon; it must succeed.
func (r *endRig) verb(args ...string) {
	r.t.Helper()
	if code, out, errOut := r.runCV(20*time.Second, args...); code != 0 {
		r.t.Fatalf("%v: exit %d: %s%s", args, code, out, errOut)
	}
}
