package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// atMin is a fixed instant: minute min, second sec, msec milliseconds.
func atMin(min, sec, msec int) time.Time {
	return time.Date(2026, 12, 1, 12, min, sec, msec*int(time.Millisecond), time.UTC)
}

// minuteLine is a slotless stamp line of job at t, floored as for a
// minute schedule.
func minuteLine(job int, t time.Time) stampLine {
	return inferred(job, t).floored(time.Minute)
}

func TestFlooredSlot(t *testing.T) {
	tests := []struct {
		name   string
		line   stampLine
		period time.Duration
		want   int64
	}{
		{"slotless, a second", inferred(0, atMin(1, 1, 500)), time.Second, atMin(1, 1, 0).UnixNano()},
		{"slotless, a minute: 1.5 s late is still its minute", inferred(0, atMin(1, 1, 500)), time.Minute, atMin(1, 0, 0).UnixNano()},
		{"slotless, a minute, 59.9 s late", inferred(0, atMin(1, 59, 900)), time.Minute, atMin(1, 0, 0).UnixNano()},
		{"a given slot is kept", stampLine{slot: atMin(0, 59, 0).UnixNano(), now: atMin(1, 1, 0).UnixNano()}, time.Minute,
			atMin(0, 59, 0).UnixNano()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.line.floored(tt.period).slot; got != tt.want {
				t.Fatalf("slot = %v, want %v", time.Unix(0, got).UTC(), time.Unix(0, tt.want).UTC())
			}
		})
	}
}

func TestReadStampLinesFloorsToThePeriod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stamps")
	text := "- " + strconv.FormatInt(atMin(2, 1, 250).UnixNano(), 10) + " job-00000\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for period, want := range map[time.Duration]time.Time{time.Second: atMin(2, 1, 0), time.Minute: atMin(2, 0, 0)} {
		ls, err := readStampLines(path, period)
		if err != nil || len(ls) != 1 || ls[0].slot != want.UnixNano() {
			t.Errorf("period %v: %+v, %v; want the slot %v", period, ls, err, want)
		}
	}
}

func TestBurstLastStartPerBurst(t *testing.T) {
	// Two bursts of two jobs; the second burst's last start is 1.6 s late,
	// read into its own minute, not the next second's.
	lines := []stampLine{minuteLine(0, atMin(1, 0, 3)), minuteLine(1, atMin(1, 0, 900)),
		minuteLine(0, atMin(2, 0, 5)), minuteLine(1, atMin(2, 1, 600))}
	starts, last := latenesses(lines, atMin(1, 0, 0), atMin(2, 20, 0))
	if len(starts) != 4 {
		t.Fatalf("starts = %v, want 4", starts)
	}
	want := []time.Duration{900 * time.Millisecond, 1600 * time.Millisecond}
	if quantile(last, 0) != want[0] || quantile(last, 1) != want[1] || len(last) != 2 {
		t.Fatalf("last = %v, want %v (one per burst)", last, want)
	}
	c := checkFires(lines, 2, atMin(1, 0, 0), atMin(2, 20, 0), time.Minute, nil)
	if c != (fireCheck{expected: 4, started: 4}) {
		t.Fatalf("checkFires = %+v, want all 4 started", c)
	}
}

func TestSlots(t *testing.T) {
	tests := []struct {
		start, end time.Time
		period     time.Duration
		want       int
	}{
		{atMin(0, 10, 0), atMin(0, 30, 0), time.Second, 20},
		{atMin(1, 0, 0), atMin(3, 20, 0), time.Minute, 3}, // the burst window: 3 boundaries and a tail
		{atMin(1, 0, 0), atMin(1, 0, 0), time.Minute, 0},
	}
	for _, tt := range tests {
		if got := slots(tt.start, tt.end, tt.period); got != tt.want {
			t.Errorf("slots(%v, %v, %v) = %d, want %d", tt.start, tt.end, tt.period, got, tt.want)
		}
	}
}

func TestUntilLead(t *testing.T) {
	tests := []struct {
		now    time.Time
		period time.Duration
		want   time.Duration
	}{
		{atMin(0, 10, 0), time.Second, 0},
		{atMin(0, 10, 0), time.Minute, 38 * time.Second},     // to 0:48, 12 s before 1:00
		{atMin(0, 50, 0), time.Minute, 58 * time.Second},     // 1:00 is too near: 1:48
		{atMin(0, 48, 0), time.Minute, 0},                    // exactly the lead
		{atMin(0, 48, 1), time.Minute, 60*time.Second - 1e6}, // just past it
	}
	for _, tt := range tests {
		if got := untilLead(tt.period, tt.now); got != tt.want {
			t.Errorf("untilLead(%v, %v) = %v, want %v", tt.period, tt.now.Format("04:05.000"), got, tt.want)
		}
	}
}

func TestBurstOptionsAndRows(t *testing.T) {
	o := burstOptions(options{burstJobs: 1000, burstMinutes: 3, alerts: "  notify: []\n"})
	start := atMin(1, 0, 0)
	end := start.Add(o.duration.Truncate(time.Second))
	if o.jobs != 1000 || o.cronvisorSchedule() != "* * * * *" || slots(start, end, o.slotPeriod()) != 3 {
		t.Fatalf("burst options: %+v: want 1000 jobs on * * * * *, 3 bursts", o)
	}
	if !strings.HasPrefix(o.alerts, "  retries: 2\n") || !strings.HasSuffix(o.alerts, "  notify: []\n") {
		t.Fatalf("alerts = %q: want retries in defaults before the rest", o.alerts)
	}
	runs := [3][]latencyRun{{{}}, {{skipped: 1}}, {{skipped: 2, reasons: map[string]int{"lock held": 2}}}}
	checks := [3][]fireCheck{{{expected: 3000, started: 3000}}, {{expected: 3000, started: 2999, missing: 1}},
		{{expected: 3000, started: 2998, recorded: 2}}}
	rows := latenessRows(latenessPart(o), [3][6]float64{}, runs, checks)
	last := rows[len(rows)-1]
	if want := [3]string{"0/0", "1/0", "2/0 (lock held: 2)"}; last.text != want {
		t.Errorf("skips row = %v, want %v", last.text, want)
	}
	if fires := rows[len(rows)-2]; fires.text[2] != "2998/3000 PASS" || !strings.HasPrefix(fires.figure, "burst of 1000 jobs/min") {
		t.Errorf("fires row = %+v", fires)
	}
	var names []string
	for _, r := range rows[:6] {
		names = append(names, strings.TrimPrefix(r.figure, "burst of 1000 jobs/min: "))
	}
	if !reflect.DeepEqual(names[3], "last start of each burst p50 (ms)") {
		t.Errorf("figures = %v", names)
	}
}
