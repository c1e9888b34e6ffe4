package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ENotifyPingsMetrics runs one daemon whose jobs fail, time out,
// run slow, recover, retry and skip, each triggered once, against a local
// webhook and ping receiver, while two plain jobs fire every second (one
// of them notifying a target that never answers), and checks every
// notification, ping and metric.
func TestE2ENotifyPingsMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	rcv, url := newReceiver(t)
	hang := silent(t)
	hook := func(path, on string) string {
		return fmt.Sprintf("    notify:\n      - on: [%s]\n        url: %s/%s\n        headers: {X-Job: %s}\n", on, url, path, path)
	}
	base := time.Now().UTC().Add(4 * time.Second)
	s := newSandbox(t, `shutdown_grace: 1s
defaults:
  timeout: 30s
  timezone: UTC
  schedule: "`+firesAt(base)+`"
jobs:
  - name: fails
    command: echo boom; exit 3
    ping: `+url+`/ping/fails
`+hook("fails", "failure, timeout, success")+`
  - name: slow
    command: echo slowly; sleep 5
    timeout: 1500ms
    warn_after: 500ms
`+hook("slow", "slow, timeout, failure")+`
  - name: recovers
    command: test -e ok || { touch ok; exit 1; }
    schedule: "`+firesAt(base, base.Add(3*time.Second))+`"
`+hook("recovers", "recovered")+`
  - name: flaky
    command: n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; test $n -ge 3
    retries: 2
    retry_backoff: 200ms
`+hook("flaky", "failure, recovered")+`
  - name: holder
    command: sleep 30
    schedule: "@every 1s"
    notify:
      - on: [skip]
        url: `+url+`/holder
        after_skips: 3
  - name: quick
    command: "true"
    schedule: "@every 1s"
    notify:
      - on: [start, success]
        url: `+hang+`/never
  - name: plain
    command: "true"
    schedule: "@every 1s"
`)
	d := s.cv("daemon", "--log-format", "json", "--metrics-addr", "127.0.0.1:0")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	m := metricsAddrLog.FindStringSubmatch(d.stderr())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", d.stderr())
	}
	waitFor(t, 25*time.Second, "every notification", func() bool {
		return len(rcv.under("/fails"))+len(rcv.under("/slow"))+len(rcv.under("/recovers"))+len(rcv.under("/flaky")) >= 4 &&
			len(rcv.under("/holder")) >= 1 && len(s.historyJSON("--job", "holder", "--outcome", "skipped")) >= 5 &&
			len(s.historyJSON("--job", "flaky")) == 3
	})
	time.Sleep(time.Second) // room for a wrong second notification to arrive
	_, status, _ := s.runCV(10*time.Second, "status", "--json")
	if !strings.Contains(status, `"last_notification":"failure: ok at `) {
		t.Errorf("status --json does not show the failure notification delivered:\n%s", status)
	}
	if _, table, _ := s.runCV(10*time.Second, "history", "--job", "flaky"); !strings.Contains(table, "ok (attempt 3)") {
		t.Errorf("history table does not mark the attempts:\n%s", table)
	}
	scrape := httpGet(t, "http://"+m[1]+"/metrics")
	health := httpGet(t, "http://"+m[1]+"/healthz")
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}

	one := func(path, event, outcome string) map[string]any {
		t.Helper()
		got := rcv.under("/" + path)
		var events []string
		for _, g := range got {
			events = append(events, fmt.Sprint(g.body["event"]))
		}
		if len(got) != 1 || got[0].body["event"] != event || got[0].body["outcome"] != outcome {
			t.Errorf("%s got %v, want exactly one %s (%s)", path, events, event, outcome)
			return nil
		}
		return got[0].body
	}
	if b := one("fails", "failure", "failed"); b != nil {
		hist := s.historyJSON("--job", "fails")
		for _, f := range []string{"event", "job", "run_id", "host", "outcome", "exit_code", "reason", "holder", "scheduled_at",
			"started_at", "ended_at", "duration_ms", "attempt", "consecutive_failures", "output_tail"} {
			if _, ok := b[f]; !ok {
				t.Errorf("failure notification lacks %q: %v", f, b)
			}
		}
		if b["job"] != "fails" || b["exit_code"] != 3.0 || b["output_tail"] != "boom\n" || b["attempt"] != 1.0 ||
			b["consecutive_failures"] != 1.0 || len(hist) != 1 || b["run_id"] != hist[0].RunID {
			t.Errorf("failure notification %v; history %+v", b, hist)
		}
		pings := rcv.under("/ping/fails")
		rid := "?rid=" + hist[0].RunID
		if len(pings) != 2 || pings[0].path != "/ping/fails/start"+rid || pings[1].path != "/ping/fails/3"+rid || pings[1].raw != "boom\n" {
			t.Errorf("pings %+v, want start and /3 with %s", pings, rid)
		}
	}
	if got := rcv.under("/slow"); len(got) != 2 || got[0].body["event"] != "slow" || got[1].body["event"] != "timeout" {
		t.Errorf("slow job's notifications %+v, want one slow, then one timeout", got)
	}
	one("recovers", "recovered", "ok")
	one("holder", "skip", "skipped")
	if got := rcv.under("/flaky"); len(got) != 0 {
		t.Errorf("flaky (ok at its third attempt) notified %+v", got)
	}
	flaky := s.historyJSON("--job", "flaky")
	slices.Reverse(flaky) // oldest first
	for i, r := range flaky {
		if r.Attempt != i+1 || !r.ScheduledAt.Equal(flaky[0].ScheduledAt) || (r.Outcome == "ok") != (i == 2) {
			t.Errorf("flaky row %d: attempt %d slot %v outcome %s", i, r.Attempt, r.ScheduledAt, r.Outcome)
		}
	}
	if !strings.HasPrefix(health, "ok") {
		t.Errorf("/healthz = %q", health)
	}
	skips := len(s.historyJSON("--job", "holder", "--outcome", "skipped"))
	for _, want := range []string{
		`cronvisor_runs_total{job="fails",outcome="failed"} 1`,
		`cronvisor_runs_total{job="slow",outcome="timeout"} 1`,
		`cronvisor_runs_total{job="recovers",outcome="failed"} 1`,
		`cronvisor_runs_total{job="recovers",outcome="ok"} 1`,
		`cronvisor_runs_total{job="flaky",outcome="failed"} 2`,
		`cronvisor_runs_total{job="flaky",outcome="ok"} 1`,
		`cronvisor_running{job="holder"} 1`,
		`cronvisor_notifications_total{kind="ping",result="ok"} 2`,
	} {
		if !strings.Contains(scrape, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The scrape came a moment before the last skips counted here.
	if n := metricValue(scrape, `cronvisor_skips_total{job="holder",reason="lock_held"}`); n < 4 || n > skips {
		t.Errorf("lock_held skips %d in /metrics, %d in history", n, skips)
	}
	checkLateness(t, s, "quick", "plain")
}

func metricValue(scrape, series string) int {
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// checkLateness compares the start lateness of a job whose notification
// target never answers with that of a job without: the silent target
// must not delay its job's fires. The bound is generous for a loaded
// machine; both are measured in the same daemon at the same time.
func checkLateness(t *testing.T, s *sandbox, withTarget, without string) {
	t.Helper()
	worst := func(job string) (time.Duration, int) {
		var w time.Duration
		rs := s.historyJSON("--job", job, "--outcome", "ok")
		for _, r := range rs {
			w = max(w, r.StartedAt.Sub(r.ScheduledAt))
		}
		return w, len(rs)
	}
	a, na := worst(withTarget)
	b, nb := worst(without)
	t.Logf("worst start lateness: %s %v over %d runs, %s %v over %d runs", withTarget, a, na, without, b, nb)
	if na < 5 || nb < 5 || a > b+500*time.Millisecond {
		t.Errorf("%s (silent target) worst lateness %v over %d runs; %s %v over %d", withTarget, a, na, without, b, nb)
	}
}

// TestE2ERetriesKeepTheLockAcrossAttempts: a job failing twice then
// succeeding with retries: 2 gives three rows in one slot, all run by
// the daemon; `cronvisor run` of the job during a backoff is refused, the
// lock being held from the first attempt to the last.
func TestE2ERetriesKeepTheLockAcrossAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	at := time.Now().UTC().Add(4 * time.Second)
	s := newSandbox(t, `shutdown_grace: 2s
jobs:
  - name: flaky
    schedule: "`+firesAt(at)+`"
    timezone: UTC
    timeout: 10s
    retries: 2
    retry_backoff: 2s
    command: echo "$PPID $CRONVISOR_ATTEMPT $CRONVISOR_RUN_ID" >> who; n=$(wc -l < who); test $n -ge 3
`)
	ds := []*proc{s.startDaemon()}
	waitFor(t, 20*time.Second, "the first attempt's end", func() bool {
		return len(s.historyJSON("--job", "flaky", "--outcome", "failed")) == 1
	})
	if code, _, stderr := s.runCV(10*time.Second, "run", "flaky"); code != 0 || !strings.Contains(stderr, "lock held") {
		t.Errorf("run during the backoff: exit %d, stderr %q; want a skip, lock held", code, stderr)
	}
	waitFor(t, 20*time.Second, "three attempts", func() bool {
		return len(s.historyJSON("--job", "flaky", "--outcome", "ok")) == 1
	})
	for _, d := range ds {
		_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	}
	for _, d := range ds {
		if code := d.wait(20 * time.Second); code != 0 {
			t.Errorf("daemon exit %d", code)
		}
	}
	who := lines(readFile(t, s.dir+"/who"))
	if len(who) != 3 {
		t.Fatalf("who = %q, want three attempts", who)
	}
	var runs []string
	for i, l := range who {
		f := strings.Fields(l)
		if f[0] != strings.Fields(who[0])[0] || f[1] != strconv.Itoa(i+1) {
			t.Errorf("attempt line %d = %q: want the same daemon, CRONVISOR_ATTEMPT=%d", i, l, i+1)
		}
		runs = append(runs, f[2])
	}
	var ran []string
	skips := 0
	for _, r := range s.historyJSON("--job", "flaky") {
		if r.Outcome == "skipped" {
			skips++ // the manual run, refused
			if !r.Manual {
				t.Errorf("a skip besides the manual run's: %+v", r)
			}
			continue
		}
		ran = append(ran, r.RunID)
		if !r.ScheduledAt.Equal(at.Truncate(time.Second)) {
			t.Errorf("attempt %d in slot %v, want %v", r.Attempt, r.ScheduledAt, at.Truncate(time.Second))
		}
	}
	if skips != 1 {
		t.Errorf("%d skips, want the manual run's one", skips)
	}
	slices.Reverse(ran)
	if !slices.Equal(ran, runs) {
		t.Errorf("history runs %v, want the three attempts %v", ran, runs)
	}
}

// TestE2EMetricsCountAMiss: a daemon that starts after its job's slots
// passed records them missed, and /metrics counts that skip as a miss.
func TestE2EMetricsCountAMiss(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: tick
    schedule: "@every 2s"
    command: "true"
    timeout: 5s
`)
	first := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(first.stderr(), "cronvisor started") })
	waitFor(t, 10*time.Second, "a first run", func() bool { return len(s.historyJSON("--job", "tick", "--outcome", "ok")) >= 1 })
	_ = syscall.Kill(first.pid(), syscall.SIGTERM)
	if code := first.wait(10 * time.Second); code != 0 {
		t.Fatalf("first daemon exit %d", code)
	}
	time.Sleep(5 * time.Second) // two slots or more pass with no supervisor
	d := s.cv("daemon", "--log-format", "json", "--metrics-addr", "127.0.0.1:0")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return metricsAddrLog.MatchString(d.stderr()) })
	addr := metricsAddrLog.FindStringSubmatch(d.stderr())[1]
	var missed []string
	waitFor(t, 10*time.Second, "the missed record", func() bool {
		missed = missed[:0]
		for _, r := range s.historyJSON("--job", "tick", "--outcome", "skipped") {
			if strings.HasPrefix(r.Reason, "missed while down") {
				missed = append(missed, r.Reason)
			}
		}
		return len(missed) > 0
	})
	scrape := httpGet(t, "http://"+addr+"/metrics")
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(10 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
	if len(missed) != 1 {
		t.Fatalf("missed records %q, want one", missed)
	}
	if n := metricValue(scrape, `cronvisor_skips_total{job="tick",reason="missed"}`); n != 1 {
		t.Errorf("missed skips in /metrics: %d, want 1; records %q", n, missed)
	}
}
