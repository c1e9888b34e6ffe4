package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
)

// TestE2ELearnedFastNotifies: a job whose 12 recorded runs took 2.0 to
// 2.4 s, with warn_fast: auto, is triggered and ends ok at once: the
// daemon reads its window from the history, the webhook gets exactly one
// `fast` (outcome ok, the bound's source in its reason) after the
// `success`, the metrics count it and show the learned quantiles, and
// `status --json` has the figures with the new run in them.
func TestE2ELearnedFastNotifies(t *testing.T) {
	t.Parallel()
	rcv, url := newReceiver(t)
	s := newSandbox(t, `jobs:
  - name: learned
    schedule: "@yearly"
    command: "true"
    timeout: 1m
    warn_after: auto
    warn_fast: auto
    notify:
      - on: [success, fast, slow]
        url: `+url+`/learned
`)
	seedHistory(t, s.state, "learned", 12)
	d := s.cv("daemon", "--log-format", "json", "--metrics-addr", "127.0.0.1:0")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return metricsAddrLog.MatchString(d.stderr()) })
	addr := metricsAddrLog.FindStringSubmatch(d.stderr())[1]
	if code, _, errOut := s.runCV(10*time.Second, "trigger", "learned"); code != 0 {
		t.Fatalf("trigger: exit %d: %s", code, errOut)
	}
	waitFor(t, 10*time.Second, "the fast notification", func() bool { return len(rcv.under("/learned")) >= 2 })
	time.Sleep(500 * time.Millisecond) // room for a wrong third notification
	scrape := httpGet(t, "http://"+addr+"/metrics")
	_, status, _ := s.runCV(10*time.Second, "status", "learned", "--json")
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
	got := rcv.under("/learned")
	var events []string
	for _, g := range got {
		events = append(events, fmt.Sprint(g.body["event"]))
	}
	if len(got) != 2 || events[0] != "success" || events[1] != "fast" {
		t.Fatalf("notifications %v, want success then fast", events)
	}
	fast := got[1].body
	reason := fmt.Sprint(fast["reason"])
	if fast["outcome"] != "ok" || !strings.HasPrefix(reason, "ended ok in ") ||
		!strings.HasSuffix(reason, "; p5 of the last 12 runs is 2s") || fast["run_id"] != got[0].body["run_id"] {
		t.Errorf("fast notification %v", fast)
	}
	for _, want := range []string{
		`cronvisor_runs_fast_total{job="learned"} 1`,
		`cronvisor_job_duration_learned_runs{job="learned"} 13`,
		`cronvisor_job_duration_learned_seconds{job="learned",quantile="1"} 2.4`,
	} {
		if !strings.Contains(scrape, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	var js ctl.JobStatus
	if err := json.Unmarshal([]byte(status), &js); err != nil || js.Durations == nil ||
		js.Durations.Runs != 13 || js.Durations.MaxMS != 2400 || js.Durations.FastBelowMS == 0 || js.Durations.SlowAfterMS == 0 {
		t.Errorf("status learned --json (%v): %s", err, status)
	}
}

// seedHistory records n ok runs of job in the state dir's history, the
// i-th taking 2 s + i × 400 ms / (n-1), the newest ending a minute ago.
func seedHistory(t *testing.T, state, job string, n int) {
	t.Helper()
	now := time.Now()
	recs := make([]run.Record, 0, n)
	for i := range n {
		ended := now.Add(-time.Duration(n-i) * time.Minute)
		took := 2*time.Second + time.Duration(i)*400*time.Millisecond/time.Duration(n-1)
		recs = append(recs, run.Record{Job: job, RunID: run.NewID(ended), Outcome: run.OK, ScheduledAt: ended.Add(-took),
			StartedAt: ended.Add(-took), EndedAt: ended, Attempt: 1})
	}
	seedRecords(t, state, recs...)
}

// seedRecords records recs, ended, in the state dir's history, as the
// daemon would have.
func seedRecords(t *testing.T, state string, recs ...run.Record) {
	t.Helper()
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(statedir.Dir(state).History())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, r := range recs {
		if err := store.Finish(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleTookSparkline is issue 42's picture in a real terminal: a
// job with 12 recorded runs (2.0 to 2.4 s) shows them as a sparkline in
// the jobs table's TOOK column, the newest six at 80 columns and all
// twelve with the newest run's duration at 200, and a job that never ran
// shows "—"; the screens hold to testdata's goldens (ages and countdowns
// masked). Its detail shows the learned figures and the runs' chart.
func TestConsoleTookSparkline(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, `jobs:
  - {name: learned, schedule: "@yearly", command: "true", timeout: 1m, warn_after: auto}
  - {name: fresh, schedule: "@yearly", command: "true", timeout: 1m}
`)
	seedHistory(t, s.state, "learned", 12)
	d := s.startDaemon()
	defer stopDaemons(t, d)
	for _, size := range []struct {
		name string
		w, h int
		bars string
	}{
		{name: "console_took_80", w: 80, h: 24, bars: "▅▅▆▇▇█"},
		{name: "console_took_200", w: 200, h: 40, bars: "▁▂▂▃▄▄▅▅▆▇▇█ 2.4s"},
	} {
		tm := startTmux(t, s, size.w, size.h, cvBin, "--config", s.config, "ui")
		want := readGolden(t, size.name)
		// The whole table, not its first rows: a capture can fall in the
		// middle of a frame's writing.
		screen := tm.await(15*time.Second, "the sparkline, and the table as testdata/"+size.name+".golden", func(sc string) bool {
			return strings.Contains(lineWith(sc, "  learned "), size.bars) && strings.Contains(lineWith(sc, " fresh  "), " —  ") &&
				(*updateGolden || tableOf(sc) == want)
		})
		compareScreen(t, size.name, tableOf(screen))
		if size.w == 200 {
			tm.keys("G", "Enter") // learned is last by name
			wants := []string{"── durations", "12 runs since",
				"12 ok runs · p50 2.2s · p95 2.4s · p99 2.4s · max 2.4s · slow after 12s · suggested timeout 1m10s",
				" 2.4s ┤", "    0 ┤█ █ █ █ █ █ █ █ █ █ █ █", "── runs and skips"}
			tm.await(15*time.Second, "the detail's durations: "+strings.Join(wants, "; "), func(sc string) bool {
				for _, w := range wants {
					if !strings.Contains(sc, w) {
						return false
					}
				}
				return true
			})
		}
		tm.keys("q")
		waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	}
}
