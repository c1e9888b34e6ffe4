package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// at is a fixed instant in whole seconds plus ms milliseconds.
func at(sec, msec int) time.Time {
	return time.Date(2026, 12, 1, 12, 0, sec, msec*int(time.Millisecond), time.UTC)
}

func TestParseStampLine(t *testing.T) {
	now := at(5, 3).UnixNano()
	tests := []struct {
		name string
		line string
		want stampLine
	}{
		{"C stamp, RFC 3339 slot", "2026-12-01T12:00:05Z 1796126405003000000 job-00001",
			stampLine{slot: at(5, 0).UnixNano(), now: now, job: "job-00001"}},
		{"Go stamp, nanosecond slot", "1796126405000000000 1796126405003000000 job-00002",
			stampLine{slot: at(5, 0).UnixNano(), now: now, job: "job-00002"}},
		{"no slot: the start's second", "- 1796126405003000000 job-00003",
			stampLine{slot: at(5, 0).UnixNano(), now: now, job: "job-00003", inferred: true}},
		{"no slot and no job", "- 1796126405003000000",
			stampLine{slot: at(5, 0).UnixNano(), now: now, inferred: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStampLine(tt.line)
			if err != nil || got != tt.want {
				t.Fatalf("parseStampLine(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "-", "- x job", "- -5 job", "yesterday 1796126405003000000 job", "a b c d"} {
		if got, err := parseStampLine(bad); err == nil {
			t.Errorf("parseStampLine(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestReadStampLinesNamesTheBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stamps")
	if err := os.WriteFile(path, []byte("- 1796126405003000000 job-00000\nnonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readStampLines(path, time.Second)
	if err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Fatalf("readStampLines: %v, want an error naming %s:2", err, path)
	}
}

// inferred is a stamp line of a scheduler that gives no slot.
func inferred(job int, t time.Time) stampLine {
	l, err := parseStampLine("- " + strconv.FormatInt(t.UnixNano(), 10) + " " + jobName(job))
	if err != nil {
		panic(err)
	}
	return l
}

func TestCheckFires(t *testing.T) {
	start, end := at(10, 0), at(13, 0) // slots 10, 11, 12
	onTime := func(jobs int) []stampLine {
		var ls []stampLine
		for s := 10; s < 13; s++ {
			for j := range jobs {
				ls = append(ls, inferred(j, at(s, 2)))
			}
		}
		return ls
	}
	tests := []struct {
		name    string
		jobs    int
		lines   []stampLine
		records map[fire]bool
		want    fireCheck
	}{
		{"every start in its second", 2, onTime(2), nil,
			fireCheck{expected: 6, started: 6}},
		{"outside the window is not counted", 1, append(onTime(1), inferred(0, at(9, 5)), inferred(0, at(13, 5))), nil,
			fireCheck{expected: 3, started: 3}},
		// Slot 11 started at 12.1: read as slot 12, beside slot 12's own start.
		{"a start over a second late: missing, then doubled", 1,
			[]stampLine{inferred(0, at(10, 1)), inferred(0, at(12, 100)), inferred(0, at(12, 101))}, nil,
			fireCheck{expected: 3, started: 2, missing: 1, doubled: 1}},
		{"a skip with a record is recorded, not missing", 1,
			[]stampLine{inferred(0, at(10, 1)), inferred(0, at(12, 1))},
			map[fire]bool{{jobName(0), at(11, 0).UnixNano()}: true},
			fireCheck{expected: 3, started: 2, recorded: 1}},
		{"another job's start does not count", 2, []stampLine{inferred(0, at(10, 1)), inferred(0, at(11, 1)),
			inferred(0, at(12, 1)), inferred(1, at(10, 1))}, nil,
			fireCheck{expected: 6, started: 4, missing: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkFires(tt.lines, tt.jobs, start, end, time.Second, tt.records)
			if got != tt.want {
				t.Fatalf("checkFires = %+v, want %+v", got, tt.want)
			}
			if pass := got.started+got.recorded == got.expected && got.missing == 0 && got.doubled == 0; got.passed() != pass {
				t.Fatalf("passed() = %v for %+v", got.passed(), got)
			}
		})
	}
}

func TestLatenessesOfInferredSlots(t *testing.T) {
	lines := []stampLine{inferred(0, at(10, 2)), inferred(1, at(10, 7)), inferred(0, at(11, 3))}
	starts, last := latenesses(lines, at(10, 0), at(12, 0))
	if want := []time.Duration{2 * time.Millisecond, 7 * time.Millisecond, 3 * time.Millisecond}; !reflect.DeepEqual(starts, want) {
		t.Fatalf("starts = %v, want %v", starts, want)
	}
	if quantile(last, 1) != 7*time.Millisecond || len(last) != 2 {
		t.Fatalf("last = %v, want the latest of each of 2 slots", last)
	}
}

func TestShellLineAndCrontab(t *testing.T) {
	if got, want := shellLine([]string{"/opt/b in/stamp", "/tmp/it's"}, 3), `'/opt/b in/stamp' '/tmp/it'\''s' job-00003`; got != want {
		t.Errorf("shellLine = %s, want %s", got, want)
	}
	path := filepath.Join(t.TempDir(), "crontab")
	if err := writeCrontab(path, 2, func(int) string { return everySecondCron }, []string{"/x/stamp", "/x/stamps"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "* * * * * * * /x/stamp /x/stamps job-00000\n* * * * * * * /x/stamp /x/stamps job-00001\n"
	if string(b) != want {
		t.Errorf("crontab:\n%s\nwant:\n%s", b, want)
	}
}

func TestJobCommand(t *testing.T) {
	argv := []string{"/x/stamp", "/x/stamps"}
	if got := jobCommand(options{}, argv)(1); got != `["/x/stamp", "/x/stamps"]` {
		t.Errorf("argv form = %s", got)
	}
	// A string: cronvisor runs it with /bin/sh -c, as supercronic does its line.
	if got := jobCommand(options{viaShell: true}, argv)(1); got != `"/x/stamp /x/stamps job-00001"` {
		t.Errorf("shell form = %s", got)
	}
}

// supercronicLog is what supercronic v0.2.48 wrote for a job failing
// with exit 3 and one running 1.5 s every second.
const supercronicLog = `time="2026-12-01T12:02:42Z" level=warning msg="process reaping disabled, not pid 1"
time="2026-12-01T12:02:43Z" level=info msg=starting iteration=0 job.command="sleep 1.5" job.position=1 job.schedule="* * * * * * *"
time="2026-12-01T12:02:43Z" level=error msg="error running command: exit status 3" iteration=0 job.command="/bin/sh -c \"exit 3\"" job.position=0 job.schedule="* * * * * * *"
time="2026-12-01T12:02:44Z" level=warning msg="not starting: job is still running since 2026-12-01 12:02:43 +0000 UTC (1s elapsed)" iteration=0 job.command="sleep 1.5" job.position=1 job.schedule="* * * * * * *"
time="2026-12-01T12:02:44Z" level=warning msg="job took too long to run: it should have started 505.23355ms ago" job.command="sleep 1.5" job.position=1 job.schedule="* * * * * * *"
time="2026-12-01T12:02:46Z" level=warning msg="job took too long to run: it should have started 505.778097ms ago" job.command="sleep 1.5" job.position=1 job.schedule="* * * * * * *"
time="2026-12-01T12:02:46Z" level=fatal msg="prometheus http serve failed: http: Server closed"
`

func TestLogfmt(t *testing.T) {
	line := strings.Split(supercronicLog, "\n")[2]
	want := map[string]string{"time": "2026-12-01T12:02:43Z", "level": "error", "msg": "error running command: exit status 3",
		"iteration": "0", "job.command": `/bin/sh -c "exit 3"`, "job.position": "0", "job.schedule": "* * * * * * *"}
	if got := logfmt(line); !reflect.DeepEqual(got, want) {
		t.Fatalf("logfmt = %v, want %v", got, want)
	}
	if got := logfmt(`level=info msg="unterminated`); got["level"] != "info" || len(got) != 1 {
		t.Fatalf("logfmt of a broken line = %v, want the part before the break", got)
	}
}

func TestCountSupercronicLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	if err := os.WriteFile(path, []byte(supercronicLog), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 2, 43, 0, time.UTC)
	skipped, failed, err := countSupercronicLog(path, start, start.Add(2*time.Second)) // 43 and 44
	if err != nil || skipped != 1 || failed != 1 {
		t.Fatalf("countSupercronicLog = %d skipped, %d failed, %v; want 1, 1", skipped, failed, err)
	}
}

func TestRecordedFires(t *testing.T) {
	recs := []historyRecord{
		{Job: "job-00001", Outcome: "skipped", Reason: "lock held", Slot: at(11, 0)},
		{Job: "job-00002", Outcome: "failed", Slot: at(12, 0)},
		{Job: "job-00003", Outcome: "ok", Slot: at(12, 0)},
		{Job: "job-00004", Outcome: "skipped", Reason: "lock held", Slot: at(13, 0)}, // after the window
		// One missed record for 3 slots, 12, 13 and 14: 12 is in the window.
		{Job: "job-00005", Outcome: "skipped", Reason: "missed: supervisor woke late (suspend or clock step); only the newest fire runs (3 fires from 2026-12-01T12:00:12Z)", Slot: at(12, 0)},
		{Job: "job-00006", Outcome: "skipped", Reason: "missed: supervisor woke late (suspend or clock step); only the newest fire runs (2 fires from 2026-12-01T12:00:09Z)", Slot: at(9, 0)},
	}
	got := recordedFires(recs, at(10, 0), at(13, 0), time.Second)
	want := map[fire]bool{{"job-00001", at(11, 0).UnixNano()}: true, {"job-00002", at(12, 0).UnixNano()}: true,
		{"job-00005", at(12, 0).UnixNano()}: true, {"job-00006", at(10, 0).UnixNano()}: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recordedFires = %v; want %v", got, want)
	}
}

// TestHistoryRecordReadsTheContract: the accounting reads a history
// record's slot from scheduled_at, as `history --json` writes it.
func TestHistoryRecordReadsTheContract(t *testing.T) {
	var rec historyRecord
	line := `{"job":"j","run_id":"r","outcome":"skipped","scheduled_at":"2026-12-01T12:00:11Z","reason":"lock held"}`
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Slot != at(11, 0) || rec.Outcome != "skipped" {
		t.Fatalf("%+v, %v", rec, err)
	}
}

func TestSelectParts(t *testing.T) {
	if got, err := selectParts(nil); err != nil || !reflect.DeepEqual(got, compareParts()) {
		t.Errorf("selectParts(nil) = %v, %v; want all", got, err)
	}
	if got, err := selectParts([]string{"idle", "100"}); err != nil || !reflect.DeepEqual(got, []string{"idle", "100"}) {
		t.Errorf("selectParts(idle 100) = %v, %v", got, err)
	}
	if _, err := selectParts([]string{"10"}); err == nil || !strings.Contains(err.Error(), `"10"`) {
		t.Errorf("selectParts(10): %v, want an error naming it", err)
	}
}

func TestPrintSummary(t *testing.T) {
	var b strings.Builder
	printSummary(&b, []summaryRow{
		{figure: "100 jobs/s: CPU per fire (ms)", unit: "%.3f", has: [3]bool{true, true, true}, vals: [3]float64{0.1, 0.4, 0.2}},
		{figure: "10000 idle hourly jobs: RSS (MiB)", unit: "%.1f", has: [3]bool{false, true, true}, vals: [3]float64{0, 90, 30}},
		{figure: "1000 jobs/s: fires", text: [3]string{"10/10", "9/10", "10/10 PASS"}},
	})
	for _, want := range []string{
		"| 100 jobs/s: CPU per fire (ms) | 0.100 | 0.400 | 0.200 | 0.50 | 2.00 | 4.00 |",
		"| 10000 idle hourly jobs: RSS (MiB) | n/a | 90.0 | 30.0 | 0.33 |  |  |",
		"| 1000 jobs/s: fires | 10/10 | 9/10 | 10/10 PASS |  |  |  |",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestCompareWithoutSupercronicSaysHowToGetOne(t *testing.T) {
	err := compare(options{}, nil, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "git clone https://github.com/aptible/supercronic") {
		t.Fatalf("compare without -supercronic: %v", err)
	}
}

func TestWebhookCountsEvents(t *testing.T) {
	h := &webhook{events: map[string]int{}}
	if h.String() != "none" {
		t.Fatalf("no delivery: %q", h.String())
	}
	for _, body := range []string{`{"event":"skip","job":"a"}`, `{"event":"skip"}`, `{"event":"failure"}`, `nonsense`} {
		h.ServeHTTP(nil, httptest.NewRequest("POST", "/hook", strings.NewReader(body)))
	}
	if got, want := h.String(), "(not JSON) 1, failure 1, skip 2"; got != want {
		t.Fatalf("webhook = %q, want %q", got, want)
	}
}

// A missed record stands for its run of slots, "N fires from T"; any
// other record for its own.
func TestFiresOfReadsAMissedRecordsCount(t *testing.T) {
	for reason, want := range map[string]int{
		"missed: supervisor woke late (suspend or clock step); only the newest fire runs (7 fires from 2026-12-02T09:00:00Z)": 7,
		"missed: supervisor woke late (suspend or clock step); only the newest fire runs":                                     1,
		"lock held by pid 123 (job-00001, run 01J)":                                                                           1,
		"": 1,
	} {
		if got := firesOf(reason); got != want {
			t.Errorf("firesOf(%q) = %d, want %d", reason, got, want)
		}
	}
}
