package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/store/history"
)

// durationsFile has job a, whose runs take 10 s ± 1 s, with a timeout
// below their p99, and job b without runs.
const durationsFile = `state_dir: state
jobs:
  - name: a
    schedule: "@hourly"
    command: [/bin/true]
    timeout: 5s
  - {name: b, schedule: "@hourly", command: [/bin/true], timeout: 1m}
`

// writeDurations records n ok runs of job a, the newest ending an hour
// ago, taking 9 s to 11 s evenly spread, and a failed run of 60 s, which the
// figures leave out, through history's Writer as a daemon does.
func writeDurations(t *testing.T, stateDir string, n int) {
	t.Helper()
	store, err := history.Open(statedir.Dir(stateDir).History())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w := history.NewWriter(history.WriterConfig{Store: store, StateDir: stateDir})
	end := func(id string, slot time.Time, took time.Duration, o run.Outcome) {
		w.Started(run.Start{Job: "a", RunID: id, Slot: slot, Started: slot, PID: 10, Attempt: 1})
		if _, err := w.WriteEnd(context.Background(), run.End{Job: "a", RunID: id, Slot: slot, Started: slot,
			Ended: slot.Add(took), Outcome: o, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	first := time.Now().Add(-time.Hour - time.Duration(n)*time.Minute).Truncate(time.Minute)
	for i := range n {
		took := 9*time.Second + time.Duration(i)*2*time.Second/time.Duration(n-1) // 9.0 .. 11.0 s, evenly
		end(run.NewID(first.Add(time.Duration(i)*time.Minute)), first.Add(time.Duration(i)*time.Minute), took, run.OK)
	}
	end("failed-long", first.Add(-time.Minute), time.Minute, run.Failed)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func durationsLayout(t *testing.T, runs int) (config, stateDir string) {
	t.Helper()
	dir := t.TempDir()
	config = filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(config, []byte(durationsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	stateDir = filepath.Join(dir, "state")
	writeDurations(t, stateDir, runs)
	return config, stateDir
}

// TestSuggestTimeoutFromHistory: 50 runs of 9-11 s give a p99 near 11 s
// and the suggestion max(3 × p99, p99 + 1m) rounded up to 10 s, 1m20s,
// with its reason; the command reads the store, never the daemon beside
// it. Below 10 runs it exits 1 saying how many it has.
func TestSuggestTimeoutFromHistory(t *testing.T) {
	config, stateDir := durationsLayout(t, 50)
	d := serveCounting(t, stateDir)
	code, out, errOut := executeOut(t, []string{"--config", config, "suggest", "timeout", "a"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] != "timeout: 1m20s" ||
		!regexp.MustCompile(`^# p99 of the last 50 runs is 11s \(max 11s\); 3 × p99, at least p99 \+ 1m0s, rounded up$`).MatchString(lines[1]) ||
		!strings.HasPrefix(lines[2], "# timeout 5s is below the p99 of the last 50 runs (11s)") {
		t.Errorf("suggest timeout a printed:\n%s", out)
	}
	if n := d.asked.Load(); n != 0 {
		t.Errorf("suggest timeout asked the daemon %d times", n)
	}
	code, _, errOut = executeOut(t, []string{"--config", config, "suggest", "timeout", "b"})
	if code != 1 || !strings.Contains(errOut, "no timeout to suggest for b: 0 successful runs in the window; 10 are needed") {
		t.Errorf("suggest timeout b: exit %d, stderr %q", code, errOut)
	}
}

// TestValidateWarnsOfATimeoutBelowP99: validate prints the warning at the
// job's timeout, with both figures, and still exits 0; with 9 runs it
// says nothing.
func TestValidateWarnsOfATimeoutBelowP99(t *testing.T) {
	config, _ := durationsLayout(t, 50)
	code, out, errOut := executeOut(t, []string{"--config", config, "validate"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := config + ":6:14: warning: a: timeout 5s is below the p99 of the last 50 runs (11s): runs that would end ok are killed; suggested timeout 1m20s"
	if !strings.Contains(out, want+"\n") || !strings.HasSuffix(out, "valid, 2 job(s)\n") {
		t.Errorf("validate printed:\n%s\nwant the line\n%s", out, want)
	}
	config, _ = durationsLayout(t, 9)
	if code, out, _ := executeOut(t, []string{"--config", config, "validate"}); code != 0 || strings.Contains(out, "p99") {
		t.Errorf("validate with 9 runs: exit %d:\n%s", code, out)
	}
}

// TestHistoryStats: a row per job, the failed run left out; --json has
// the same figures in milliseconds.
func TestHistoryStats(t *testing.T) {
	config, _ := durationsLayout(t, 50)
	code, out, errOut := executeOut(t, []string{"--config", config, "history", "--stats"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fields := func(line string) string { return strings.Join(strings.Fields(line), " ") }
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || fields(lines[0]) != "JOB RUNS P50 P95 P99 MAX SUGGESTED TIMEOUT" ||
		fields(lines[1]) != "a 50 10s 10.9s 11s 11s 1m20s" || fields(lines[2]) != "b 0 - - - - -" {
		t.Errorf("history --stats printed:\n%s", out)
	}
	code, out, errOut = executeOut(t, []string{"--config", config, "history", "--stats", "--job", "a", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var row statsRow
	if err := json.Unmarshal([]byte(out), &row); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if row.Job != "a" || row.Runs != 50 || row.P50MS != 10000 || row.MaxMS != 11000 || row.SuggestedTimeoutMS != 80000 ||
		!strings.Contains(row.TimeoutAdvice, "below the p99") {
		t.Errorf("history --stats --json: %+v", row)
	}
	if code, _, errOut := executeOut(t, []string{"--config", config, "history", "--stats", "--outcome", "ok"}); code != 2 {
		t.Errorf("--stats with --outcome: exit %d (%s), want 2", code, errOut)
	}
}

// TestStatusNamedShowsDurations: without a daemon, status JOB prints the
// figures and the advice under the table, and --json carries them.
func TestStatusNamedShowsDurations(t *testing.T) {
	config, _ := durationsLayout(t, 50)
	code, out, errOut := executeOut(t, []string{"--config", config, "status", "a"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "\na: 50 ok runs: p50 10s, p95 10.9s, p99 11s, max 11s\n") ||
		!strings.Contains(out, "\na: timeout 5s is below the p99") {
		t.Errorf("status a printed:\n%s", out)
	}
	code, out, _ = executeOut(t, []string{"--config", config, "status", "--json"})
	if code != 0 || !strings.Contains(out, `"durations":{"runs":50,"p5_ms":9100,"p50_ms":10000,"p95_ms":10900,"p99_ms":10980,"max_ms":11000`) {
		t.Errorf("status --json: exit %d:\n%s", code, out)
	}
	if strings.Count(out, `"durations"`) != 1 {
		t.Errorf("status --json: durations for a job without runs:\n%s", out)
	}
}

// TestFleetRows: with a shared history, a job's (fleet) row holds every
// host's runs and each host has its own row, hosts in order.
func TestFleetRows(t *testing.T) {
	now := time.Now()
	var samples []durations.Sample
	for i := range 12 {
		host := "b"
		if i%3 == 0 {
			host = "a"
		}
		samples = append(samples, durations.Sample{RunID: fmt.Sprint(i), Host: host,
			Took: time.Duration(i+1) * time.Second, Ended: now.Add(-time.Duration(i) * time.Minute)})
	}
	job := config.Job{Name: "j", Timeout: time.Hour}
	rows := fleetRows([]config.Job{job, {Name: "k"}}, map[string][]durations.Sample{"j": samples}, now, 24*time.Hour)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%s:%d:%d", r.Job, r.Host, r.Runs, r.MaxMS))
	}
	if want := "[j/(fleet):12:12000 j/a:4:10000 j/b:8:12000 k/(fleet):0:0]"; fmt.Sprint(got) != want {
		t.Errorf("rows %v, want %s", got, want)
	}
}
